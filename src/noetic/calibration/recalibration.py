"""Recalibration: what an agent's stated probability of success has meant, and a release gate.

Pure maths, plain Python (no numpy: a hook that reads a fitted map stays light), over pairs
``(p, y)``: what the agent stated (``p`` in [0, 1], the one ``stated_value`` rule) and the
verified outcome (``y`` in [0, 1]; 1 = success), oldest first. Why each choice, and how well it
works, is in ``docs/calibration.md``.

**The map**, monotone, from the stated value to a calibrated probability of success:

* **Bayesian logistic calibration** (the default): ``q = σ(a + b·logit p)``, the maximum a
  posteriori ``(a, b)`` under the prior ``a ~ N(0, 1.5²)``, ``b ~ N(1, 0.5²)``, centred on the
  identity; fitted by Newton's method (each step halved until the posterior rises as it
  should) on the outcomes grouped by distinct stated value, its
  posterior covariance the inverse Hessian at the mode (a Laplace approximation). The slope is
  kept at 0 or above: statements that ran against the outcomes get a flat map, never a
  reversed one.
* **Isotonic calibration** (pool-adjacent-violators, interpolated linearly between the pooled
  blocks, kept within [0.01, 0.99]) once there are :data:`ISOTONIC_MIN` outcomes, chosen only
  when it beats the logistic map on the held-out outcomes.

**In force** only when (1) the held-out proof holds: in time order, the outcomes after the
earlier :data:`FIT_SHARE` (the guardian's :func:`split`) are scored by the map fitted on the
part before them, and those from the first third up to it by the map fitted on the first third;
the mapped values' Brier score over both blocks must be lower than the stated values'; and (2)
the identity lies outside the posterior's 97.5% region (``(a, b − 1) Σ⁻¹ (a, b − 1)ᵀ >
χ²₂(0.975)``). The map in force is then refitted on every outcome; the statement itself is
never changed.

**The release gate** (Learn-then-Test, Angelopoulos et al. 2021, with fixed-sequence testing):
thresholds ``λ`` run from 0.99 down to 0.01 on the *stated* value; for each, "more than a share
``α`` of the tasks released at ``λ`` fail" is tested with the exact binomial p-value
``P(Bin(n_λ, α) ≤ k_λ)`` (``k_λ`` of ``n_λ`` failed: an outcome below 0.5). The scan starts at
the highest ``λ`` releasing :func:`scan_start` tasks (counts only, never the outcomes, so the
guarantee holds given the statements), stops at the first ``λ`` it cannot reject, and the gate
is the lowest rejected. A monotone map orders tasks as the statements do, so this is also a
threshold on the calibrated value, ``map(λ)``, which is what Noetic shows; with no ``λ``
rejected the profile's threshold applies.
"""

from __future__ import annotations

import _thread  # a lock without threading, which a workflow command does not load
import math
from collections.abc import Sequence

from noetic.plain import Value, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, Final


FIT_SHARE: Final = 2 / 3
MIN_FIT: Final = 10
MIN_HELD_OUT: Final = 5
ISOTONIC_MIN: Final = 100
PRIOR_SD_A: Final = 1.5
PRIOR_SD_B: Final = 0.5
CHI2_2_975: Final = 7.377758908227871
EDGE: Final = 1e-3
ISOTONIC_BOUNDS: Final = (0.01, 0.99)
Z95: Final = 1.959964


def split(n: int) -> int | None:
    """How many of ``n`` outcomes (oldest first) a held-out proof fits on; ``None`` when too few
    are left after them to test it (the guardian's rule)."""
    fit = max(MIN_FIT, round(n * FIT_SHARE))
    return None if fit > n - MIN_HELD_OUT else fit


def _logit(p: float) -> float:
    p = min(1 - EDGE, max(EDGE, p))
    return math.log(p / (1 - p))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


class Logistic(Value):
    """``σ(a + b·logit p)`` with its posterior covariance ``((va, cab), (cab, vb))``."""

    a: float
    b: float
    va: float
    vb: float
    cab: float

    def departure(self) -> float:
        """``(a, b − 1) Σ⁻¹ (a, b − 1)ᵀ``: how far the identity is, in posterior units."""
        det = self.va * self.vb - self.cab * self.cab
        if det <= 0:
            return 0.0
        da, db = self.a, self.b - 1
        return (self.vb * da * da - 2 * self.cab * da * db + self.va * db * db) / det


Sums = dict[float, list[float]]
"""Per distinct stated value, in order of first appearance: the count, the sum of the stated
values and the sum of the outcomes, each added up in the outcomes' order."""


def _add(sums: Sums, p: Sequence[float], y: Sequence[float], lo: int, hi: int) -> Sums:
    """``sums`` with the outcomes ``lo:hi`` added (in place)."""
    for i in range(lo, hi):
        pi = p[i]
        g = sums.get(pi)
        if g is None:
            g = sums[pi] = [0.0, 0.0, 0.0]
        g[0] += 1
        g[1] += pi
        g[2] += y[i]
    return sums


def sums_of(p: Sequence[float], y: Sequence[float]) -> Sums:
    """The group sums of ``(p, y)`` (:data:`Sums`)."""
    if len(p) != len(y):
        raise ValueError("stated values and outcomes must be equal-length sequences")
    return _add({}, p, y, 0, len(p))


def fit_logistic(sums: Sums) -> Logistic:
    """The posterior mode and covariance (module docstring) on the outcomes' group sums
    (:func:`sums_of`); the identity with no outcomes."""
    groups: dict[float, list[float]] = {}  # by logit: two stated values may share one (EDGE)
    for pi, (w, _, s) in sums.items():
        g = groups.setdefault(_logit(pi), [0.0, 0.0])
        g[0] += w
        g[1] += s
    pa, pb = 1 / PRIOR_SD_A**2, 1 / PRIOR_SD_B**2
    cells = [(x, w, s) for x, (w, s) in groups.items()]

    def posterior(a: float, b: float) -> float:  # its logarithm, up to a constant
        return _likelihood(cells, a, b) - a * a * pa / 2 - (b - 1) * (b - 1) * pb / 2

    a, b = 0.0, 1.0
    at = posterior(a, b)
    h11 = h12 = h22 = 0.0
    for _ in range(100):
        g1, g2 = -a * pa, -(b - 1) * pb
        h11, h12, h22 = pa, 0.0, pb
        for x, w, s in cells:
            q = _sigmoid(a + b * x)
            r = s - w * q
            g1 += r
            g2 += r * x
            v = w * q * (1 - q)
            h11 += v
            h12 += v * x
            h22 += v * x * x
        det = h11 * h22 - h12 * h12
        da = (h22 * g1 - h12 * g2) / det
        db = (h11 * g2 - h12 * g1) / det
        a, b, at, moved = _ascend(posterior, (a, b), (da, db), (g1, g2), at)
        if not moved or (abs(da) < 1e-10 and abs(db) < 1e-10):
            break
    if b >= 0:
        det = h11 * h22 - h12 * h12
        return Logistic(a=a, b=b, va=h22 / det, vb=h11 / det, cab=-h12 / det)
    # statements that ran against the outcomes: a map must not reverse their order, so the
    # slope stops at 0 (every statement means the same) and the intercept is refitted (the
    # posterior is concave: its mode with the slope at 0 or above has the slope at 0)
    a, hess = 0.0, pa
    at = posterior(a, 0.0)
    for _ in range(100):
        grad, hess = -a * pa, pa
        q = _sigmoid(a)
        for w, s in groups.values():
            grad += s - w * q
            hess += w * q * (1 - q)
        step = grad / hess
        (a, _, at, moved) = _ascend(posterior, (a, 0.0), (step, 0.0), (grad, 0.0), at)
        if not moved or abs(step) < 1e-10:
            break
    return Logistic(a=a, b=0.0, va=1 / hess, vb=PRIOR_SD_B**2, cab=0.0)


def _likelihood(cells: list[tuple[float, float, float]], a: float, b: float) -> float:
    """The log-likelihood of ``σ(a + b·x)`` for the outcomes grouped as ``(x, count, sum)``."""
    total = 0.0
    for x, w, s in cells:
        z = a + b * x
        total += s * z - w * (max(z, 0.0) + math.log1p(math.exp(-abs(z))))
    return total


def _ascend(
    f: Callable[[float, float], float],
    at: tuple[float, float],
    step: tuple[float, float],
    grad: tuple[float, float],
    value: float,
) -> tuple[float, float, float, bool]:
    """Newton's step from ``at``, halved until ``f`` (concave) rises as its slope promises
    (Armijo's rule): a full step where it does, so Newton's method converges as it would; a
    shorter one where the full step overshoots (outcomes far from a statement near 0 or 1),
    which plain Newton steps can do back and forth without end. The point, ``f`` there, and
    whether it moved."""
    slope = grad[0] * step[0] + grad[1] * step[1]
    if slope <= 1e-12 * (1 + abs(value)):  # at the mode, to rounding: nothing left to check
        a, b = at[0] + step[0], at[1] + step[1]
        return a, b, f(a, b), True
    t = 1.0
    for _ in range(60):
        a, b = at[0] + t * step[0], at[1] + t * step[1]
        value_there = f(a, b)
        if value_there >= value + 1e-4 * t * slope:
            return a, b, value_there, True
        t /= 2
    return at[0], at[1], value, False


def _isotonic(grouped: Sums) -> tuple[list[float], list[float]]:
    """Pool-adjacent-violators on the outcomes' group sums: the knots ``(xs, ys)`` (mean stated,
    pooled rate per block)."""
    blocks: list[list[float]] = []  # [weight, sum p, sum y], one per distinct stated value
    for key in sorted(grouped):
        blocks.append(list(grouped[key]))
        while len(blocks) > 1 and blocks[-2][2] / blocks[-2][0] >= blocks[-1][2] / blocks[-1][0]:
            w, sp, sy = blocks.pop()
            blocks[-1][0] += w
            blocks[-1][1] += sp
            blocks[-1][2] += sy
    lo, hi = ISOTONIC_BOUNDS
    xs = [sp / w for w, sp, _ in blocks]
    ys = [min(hi, max(lo, sy / w)) for w, _, sy in blocks]
    return xs, ys


class Map(Value):
    """A fitted map as plain numbers (stored as JSON beside the outcomes it was fitted on).

    ``method``: ``identity``, ``logistic`` (``params`` = ``[a, b]``) or ``isotonic``
    (``params`` = the knots' stated values then their rates)."""

    method: str = "identity"
    params: tuple[float, ...] = ()

    def __call__(self, p: float) -> float:
        if self.method == "logistic":
            a, b = self.params
            return _sigmoid(a + b * _logit(p))
        if self.method == "isotonic":
            half = len(self.params) // 2
            xs, ys = self.params[:half], self.params[half:]
            if p <= xs[0]:
                return ys[0]
            if p >= xs[-1]:
                return ys[-1]
            lo, hi = 0, len(xs) - 1
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if xs[mid] <= p:
                    lo = mid
                else:
                    hi = mid
            span = xs[hi] - xs[lo]
            t = (p - xs[lo]) / span if span > 0 else 0.0
            return ys[lo] + t * (ys[hi] - ys[lo])
        return min(1.0, max(0.0, p))


def fit(sums: Sums, method: str) -> Map:
    """The ``method`` map fitted on the outcomes' group sums (:func:`sums_of`)."""
    if method == "logistic":
        m = fit_logistic(sums)
        return Map("logistic", (m.a, m.b))
    if method == "isotonic":
        xs, ys = _isotonic(sums)
        return Map("isotonic", (*xs, *ys))
    return Map()


class Prefixes:
    """The group sums of prefixes of the last outcomes fitted, kept from one fit to the next: the
    sums at a cut are those kept at the cut before plus the outcomes since, added in the same
    order, so each is bit for bit the sum a pass from the first outcome gives. Outcomes that do
    not begin with those kept (another agent's, or reordered) start again from the first."""

    KEEP: Final = 8  # prefixes kept: a fit asks for three

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.clear()

    def clear(self) -> None:
        self.p: list[float] = []
        self.y: list[float] = []
        self.at: dict[int, Sums] = {0: {}}

    def sums(self, p: Sequence[float], y: Sequence[float], cuts: Sequence[int]) -> list[Sums]:
        """The sums of ``p[:k]``, ``y[:k]`` for each ``k`` in ``cuts`` (ascending); not to be
        changed."""
        with self.lock:
            n = len(self.p)
            if n > len(p) or list(p[:n]) != self.p or list(y[:n]) != self.y:
                self.clear()
            self.p, self.y = list(p), list(y)
            out = []
            for k in cuts:
                start = max(i for i in self.at if i <= k)
                if start != k:
                    copied = {key: list(g) for key, g in self.at[start].items()}
                    self.at[k] = _add(copied, p, y, start, k)
                out.append(self.at[k])
            for old in sorted(self.at)[: max(0, len(self.at) - self.KEEP)]:
                if old:
                    del self.at[old]
            return out


PREFIXES: Final = Prefixes()


def _mean_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """The mean with its normal-approximation 95% interval."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    half = Z95 * sd / math.sqrt(n)
    return mean, mean - half, mean + half


class Fitted(Value):
    """A map and the evidence for it: whether it is in force and why (module docstring).

    ``brier_before``/``brier_after`` are the held-out Brier scores of the stated and the mapped
    values (each ``[value, low, high]``), ``improvement`` their paired difference."""

    map: Map
    in_force: bool
    outcomes: int
    reason: str
    fitted_on: int = 0
    held_out: int = 0
    brier_before: tuple[float, float, float] | None = None
    brier_after: tuple[float, float, float] | None = None
    improvement: tuple[float, float, float] | None = None
    departure: float | None = None
    tried: dict[str, float] = field(default_factory=dict)

    @property
    def method(self) -> str:
        return self.map.method if self.in_force else "identity"

    def __call__(self, p: float) -> float:
        return self.map(p) if self.in_force else p

    def to_json(self) -> dict[str, Any]:
        return self.as_dict()

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fitted:
        m = data["map"]
        data = {**data, "map": Map(m["method"], tuple(m["params"]))}
        for key in ("brier_before", "brier_after", "improvement"):
            if data.get(key) is not None:
                data[key] = tuple(data[key])
        return cls(**data)


def _folds(n: int, cut: int) -> list[tuple[int, int]]:
    """The held-out blocks, each scored by a map fitted on every outcome before it: the
    guardian's split (``cut`` onwards), and before it the block from the first third (at least
    :data:`MIN_FIT`), so the proof is scored on more of the outcomes."""
    first = max(MIN_FIT, round(n / 3))
    return [(first, cut), (cut, n)] if first < cut else [(cut, n)]


def recalibrate(p: Sequence[float], y: Sequence[float]) -> Fitted:
    """The map for ``(p, y)`` (oldest first) and whether it is in force (module docstring)."""
    n = len(p)
    if len(y) != n:
        raise ValueError("stated values and outcomes must be equal-length sequences")
    cut = split(n)
    if cut is None:
        return Fitted(
            Map(),
            False,
            n,
            f"{n} outcomes: a map is used only once it lowers the Brier score on outcomes it "
            f"was not fitted on ({MIN_FIT + MIN_HELD_OUT} needed: {MIN_FIT} to fit, "
            f"{MIN_HELD_OUT} after them to test)",
        )
    folds = _folds(n, cut)
    start = folds[0][0]
    # the sums before each held-out block and of all n, carried on from the fit before
    *before_fold, whole_sums = PREFIXES.sums(p, y, [lo for lo, _ in folds] + [n])
    methods = ["logistic", "isotonic"] if cut >= ISOTONIC_MIN else ["logistic"]
    raw = [(a - b) ** 2 for a, b in zip(p[start:], y[start:], strict=True)]
    tried: dict[str, float] = {}
    best: tuple[float, str, list[float]] | None = None
    for method in methods:
        mapped = []
        for (lo, hi), sums in zip(folds, before_fold, strict=True):
            m = fit(sums, method)
            q = {a: m(a) for a in set(p[lo:hi])}
            mapped += [(q[a] - b) ** 2 for a, b in zip(p[lo:hi], y[lo:hi], strict=True)]
        score = sum(mapped) / len(mapped)
        tried[method] = round(score, 6)
        if best is None or score < best[0]:
            best = (score, method, mapped)
    assert best is not None
    _, method, mapped = best
    before, after = _mean_interval(raw), _mean_interval(mapped)
    gain = _mean_interval([r - m for r, m in zip(raw, mapped, strict=True)])
    whole = fit_logistic(whole_sums)
    departure = whole.departure()
    final = Map("logistic", (whole.a, whole.b)) if method == "logistic" else fit(whole_sums, method)
    in_force = not (after[0] >= before[0] or departure <= CHI2_2_975)
    if after[0] >= before[0]:
        reason = (
            f"a {method} map fitted on the outcomes before each did not lower the Brier score "
            f"on the last {n - start} ({before[0]:.4f} → {after[0]:.4f}): the stated values stand"
        )
    elif not in_force:
        reason = (
            "the statements are consistent with what happened (the identity is inside the map's "
            f"97.5% region: {departure:.2f} ≤ {CHI2_2_975:.2f}): the stated values stand"
        )
    else:
        reason = (
            f"a {method} map fitted on the outcomes before each lowered the Brier score on the "
            f"last {n - start} ({before[0]:.4f} → {after[0]:.4f}); refitted on all {n}"
        )
    return Fitted(
        final,
        in_force,
        outcomes=n,
        reason=reason,
        fitted_on=start,
        held_out=n - start,
        brier_before=_rounded(before),
        brier_after=_rounded(after),
        improvement=_rounded(gain),
        departure=round(departure, 4),
        tried=tried,
    )


def _rounded(t: tuple[float, float, float]) -> tuple[float, float, float]:
    return (round(t[0], 6), round(t[1], 6), round(t[2], 6))


# the release gate ---------------------------------------------------------------------------


def binom_cdf(k: int, n: int, rate: float) -> float:
    """``P(Bin(n, rate) ≤ k)``, summed exactly in log space."""
    if k >= n:
        return 1.0
    if k < 0:
        return 0.0
    if rate <= 0:
        return 1.0
    if rate >= 1:
        return 0.0
    lr, lq = math.log(rate), math.log1p(-rate)
    total = 0.0
    for i in range(k + 1):
        total += math.exp(
            math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lr + (n - i) * lq
        )
    return min(1.0, total)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval for a rate of ``k`` in ``n``."""
    if n <= 0:
        return 0.0, 1.0
    tail = (1 - confidence) / 2

    def solve(target: float, cdf_k: int) -> float:
        lo, hi = 0.0, 1.0  # binom_cdf(cdf_k, n, r) falls as r rises
        for _ in range(60):
            mid = (lo + hi) / 2
            if binom_cdf(cdf_k, n, mid) > target:
                lo = mid
            else:
                hi = mid
        return (lo + hi) / 2

    low = 0.0 if k == 0 else solve(1 - tail, k - 1)
    high = 1.0 if k == n else solve(tail, k)
    return low, high


def min_released(max_failure_rate: float, confidence: float) -> int:
    """The fewest released tasks with which zero failures reject "more than ``α`` fail"."""
    return math.ceil(math.log(1 - confidence) / math.log1p(-max_failure_rate))


def scan_start(n: int, max_failure_rate: float, confidence: float) -> int:
    """How many released tasks the scan's first threshold needs: three times
    :func:`min_released` (a threshold over so few tasks is rarely certified, and the scan stops
    at the first it cannot certify), or a quarter of the outcomes when that is fewer, but never
    fewer than :func:`min_released`. It depends on counts alone, never on the outcomes."""
    need = min_released(max_failure_rate, confidence)
    return max(need, min(3 * need, n // 4))


GRID: Final = tuple(round(0.99 - i / 100, 2) for i in range(99))


class Gate(Value):
    """The release gate chosen from past outcomes (module docstring); ``threshold`` is on the
    stated value, ``None`` when the outcomes support none."""

    max_failure_rate: float
    confidence: float
    threshold: float | None
    released: int
    held: int
    failures: int
    failure_rate: float | None
    low: float | None
    high: float | None
    reason: str


def release_gate(
    p: Sequence[float], y: Sequence[float], max_failure_rate: float, confidence: float = 0.95
) -> Gate:
    """The lowest threshold on the stated value a fixed-sequence scan can certify (module
    docstring)."""
    if not 0 < max_failure_rate < 1 or not 0 < confidence < 1:
        raise ValueError("max_failure_rate and confidence must be in (0, 1)")
    n = len(p)
    failed = [yi < 0.5 for yi in y]
    need = scan_start(n, max_failure_rate, confidence)
    delta = 1 - confidence
    chosen: tuple[float, int, int] | None = None
    started = False
    for lam in GRID:
        released = [f for pi, f in zip(p, failed, strict=True) if pi >= lam - 1e-12]
        if not started:
            if len(released) < need:
                continue
            started = True
        k = sum(released)
        if binom_cdf(k, len(released), max_failure_rate) > delta:
            break
        chosen = (lam, len(released), k)
    if chosen is None:
        why = (
            f"{n} outcomes: a threshold needs at least {need} tasks above it"
            if not started
            else "no threshold keeps the failure rate among released tasks at or below "
            f"{max_failure_rate:.0%} with {confidence:.0%} confidence in these {n} outcomes"
        )
        return Gate(
            max_failure_rate, confidence, None, 0, n, 0, None, None, None,
            why + "; the profile's threshold applies",
        )  # fmt: skip
    lam, released_n, k = chosen
    low, high = clopper_pearson(k, released_n, confidence)
    return Gate(
        max_failure_rate=max_failure_rate,
        confidence=confidence,
        threshold=lam,
        released=released_n,
        held=n - released_n,
        failures=k,
        failure_rate=k / released_n,
        low=low,
        high=high,
        reason=f"stated {lam:.2f} or more: {k} of {released_n} released tasks failed; at most "
        f"{max_failure_rate:.0%} fail with {confidence:.0%} confidence",
    )
