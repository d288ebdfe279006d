"""Drift: has the agent's calibration changed?

Drift is a *change*: the agent's outcomes stopped matching its stated confidence the way they
used to. A steady miscalibration (always 15 points overconfident) is not drift; the report and
the guardian deal with that. What is stated is what the per-phase report scores at PREFLIGHT:
``p_success`` where the agent gave one, the vectors' confidence otherwise ("confidence" below
is either); the report says which (``stated``, ``stated_from``). The monitor is a sequential
test with a false-alarm rate the user sets (``alpha``, default 5%) that holds however often it
is checked:

1. Each outcome gives a residual ``r = outcome − confidence``. Its *conformal p-value* is its
   rank among the residuals so far (ties broken at random, seeded): for an agent that does not
   change, the ranks are exchangeable and the p-values independent and uniform on (0, 1).
2. Four bets are placed on each p-value. "Falling" stakes that it lands below ``b``, the share
   of earlier residuals that were negative (a failure, where the agent used to fail less):
   it pays ``P/b`` below and ``(1 − P)/(1 − b)`` above, with ``P = b + 0.7·min(b, 1 − b)``,
   tilted within each side towards the low end (a failure at high confidence is the stronger
   sign). "Lower" pays ``1 + 0.8·(1 − 2u)``: residuals lower than before, failures or not
   (confidence rising above unchanged results). "Rising" and "higher" are their mirror images.
   Each bet pays 1 on average over a uniform p-value, so for an agent that does not change,
   the product of a bet's payoffs from any outcome on is a test martingale.
3. The change may begin at any outcome, so the capital is a mixture over the start ``j`` of
   those products, with weights ``w_j = (m + 1)/((j + m)(j + m + 1))`` (``m = 150``) that sum
   to 1 over all outcomes, split 3:3:1:1 between the bets; weight not yet started is cash. This is a
   Shiryaev–Roberts e-detector (Shin, Ramdas & Rinaldo, 2022) with summable weights, computed
   in one pass: ``S_t = (S_{t−1} + share·w_t)·payoff_t`` per bet, capital ``S + 1 − Σ_{j≤t} w_j``.
4. For an unchanging agent the capital is a non-negative martingale starting at 1, so by
   Ville's inequality it ever reaches ``1/alpha`` with probability at most ``alpha``, however
   many outcomes and however many checks. Reaching it is an alarm; the monitor then starts
   afresh from the next outcome, so a later change is judged against the new behaviour.

The price of the guarantee is time: what the monitor catches, and how soon, beside tests told
when the change came, is measured in ``docs/calibration.md`` (``bench/calibration_numbers.py``).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from typing import Final, Literal

from noetic.calibration.per_phase import Basis, Stated, stated_basis
from noetic.frozen import Frozen

ALPHA: Final = 0.05
STRENGTH: Final = 0.7
TILT: Final = (0.3, 0.1)
LEAN: Final = 0.8
PRIOR: Final = (0.375, 0.375, 0.125, 0.125)
SPREAD: Final = 150
SYCOPHANCY_THRESHOLD: Final = 0.10
RECENT_WINDOW: Final = 20

Direction = Literal["overconfident", "underconfident"]


class DriftAlarm(Frozen):
    at: int
    since: int
    direction: Direction
    sycophancy: bool


class DriftPath(Frozen):
    """The monitor run over a stream: the alarms, and the capital of the current segment."""

    alarms: list[DriftAlarm]
    since: int
    e_value: float


def payoffs(u: float, b: float) -> tuple[float, float, float, float]:
    """What one unit staked on p-value ``u`` returns, for each of the four bets: on residuals
    falling past ``b`` (the share of earlier residuals that were negative) and on their
    mirror image, rising; then on residuals lower in general and higher in general. Each
    averages exactly 1 over a uniform ``u``, for every ``b`` in (0, 1)."""
    if not 0 < b < 1:
        raise ValueError(f"b must be in (0, 1), got {b!r}")
    step = STRENGTH * min(b, 1 - b)
    low, high = TILT
    if u < b:
        v = 1 - 2 * u / b
        fall, rise = (b + step) / b * (1 + low * v), (b - step) / b * (1 - low * v)
    else:
        v = 1 - 2 * (u - b) / (1 - b)
        fall = (1 - b - step) / (1 - b) * (1 + high * v)
        rise = (1 - b + step) / (1 - b) * (1 - high * v)
    return fall, rise, 1 + LEAN * (1 - 2 * u), 1 - LEAN * (1 - 2 * u)


def start_weight(j: int) -> float:
    """The weight of a change beginning at outcome ``j`` (1-based) of a segment; the weights
    of all outcomes sum to 1."""
    return (SPREAD + 1) / ((j + SPREAD) * (j + SPREAD + 1))


MAX_PAYOFF: Final = max((1 + STRENGTH) * (1 + TILT[0]), 1 + LEAN)


def conformal_pvalue(seen: Sequence[float], r: float, draw: float) -> float:
    """The rank of ``r`` among the residuals ``seen`` before it (sorted) and itself, ties
    split by ``draw`` (uniform on [0, 1)): for exchangeable residuals, uniform on (0, 1)."""
    lo, hi = bisect.bisect_left(seen, r), bisect.bisect_right(seen, r)
    return (lo + draw * (hi - lo + 1)) / (len(seen) + 1)


def advance(
    capital: Sequence[float], started: float, t: int, u: float, b: float
) -> tuple[list[float], float]:
    """One outcome of the detector: the ``t``-th of the segment starts its share of weight on
    every bet, and every bet is paid on ``u``. Returns the bets' capital and the weight
    started so far; the e-value is ``sum(capital) + 1 − started``."""
    w = start_weight(t)
    paid = [(c + share * w) * f for c, share, f in zip(capital, PRIOR, payoffs(u, b), strict=True)]
    return paid, started + w


def least_outcomes(alpha: float) -> int:
    """The fewest outcomes of a segment before the capital can reach ``1/alpha``: every bet
    winning its largest payoff at every step."""
    staked = cash = 0.0
    for t in range(1, 10_000):
        w = start_weight(t)
        staked, cash = (staked + w) * MAX_PAYOFF, cash + w
        if staked + 1 - cash >= 1 / alpha:
            return t
    raise ValueError(f"alpha {alpha!r} is too small")


def monitor(
    confidences: Sequence[float],
    outcomes: Sequence[float],
    *,
    alpha: float = ALPHA,
    seed: int = 0,
    window: int = RECENT_WINDOW,
) -> DriftPath:
    """Run the sequential test over the stream (oldest first); see the module docstring."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    if len(confidences) != len(outcomes):
        raise ValueError("confidences and outcomes must be equal-length sequences")
    rng = random.Random(seed)
    threshold = 1 / alpha
    alarms: list[DriftAlarm] = []
    seen: list[float] = []
    negative = start = 0
    capital, started = [0.0] * len(PRIOR), 0.0
    for i, (p, y) in enumerate(zip(confidences, outcomes, strict=True)):
        if not (0 <= p <= 1 and 0 <= y <= 1):
            raise ValueError("confidences and outcomes must be finite numbers in [0, 1]")
        r = y - p
        t = len(seen) + 1
        u = conformal_pvalue(seen, r, rng.random())
        capital, started = advance(capital, started, t, u, (negative + 0.5) / t)
        bisect.insort(seen, r)
        negative += r < 0
        if sum(capital) + 1 - started >= threshold:
            falling, rising = capital[0] + capital[2], capital[1] + capital[3]
            direction: Direction = "overconfident" if falling >= rising else "underconfident"
            alarms.append(
                DriftAlarm(
                    at=i + 1,
                    since=start + 1,
                    direction=direction,
                    sycophancy=direction == "overconfident"
                    and _confidence_outran_outcomes(
                        confidences[start : i + 1], outcomes[start : i + 1], window
                    ),
                )
            )
            seen, negative, start = [], 0, i + 1
            capital, started = [0.0] * len(PRIOR), 0.0
    e_value = sum(capital) + 1 - started
    return DriftPath(alarms=alarms, since=start + 1, e_value=round(e_value, 6))


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _confidence_outran_outcomes(
    confidences: Sequence[float], outcomes: Sequence[float], window: int
) -> bool:
    """Sycophancy-style: over the last ``window`` outcomes confidence rose and outcomes did not
    rise with it (by more than 0.10), compared with the segment's earlier outcomes."""
    if len(confidences) <= window:
        return False
    rise_p, rise_y = (_mean(v[-window:]) - _mean(v[:-window]) for v in (confidences, outcomes))
    return rise_p > 0 and rise_p - rise_y > SYCOPHANCY_THRESHOLD


class Detection(Frozen):
    """How many outcomes after a shift the monitor takes to raise the alarm (simulated)."""

    shift: float
    alpha: float
    runs: int
    median: float | None
    p90: float | None
    detected: float
    horizon: int


class DriftReport(Frozen):
    # what was judged: each PREFLIGHT's p_success where given, the vectors' confidence otherwise
    stated: Stated | None
    stated_from: dict[str, int]
    n: int
    alpha: float
    guarantee: str
    e_value: float
    alarms: list[DriftAlarm]
    since: int
    recent: int
    calibration_drift: bool
    sycophancy_drift: bool
    bias_recent: float | None
    bias_history: float | None
    confidence_rise: float | None
    outcome_rise: float | None
    detection: Detection | None = None
    reason: str


def detect_drift(
    confidences: Sequence[float],
    outcomes: Sequence[float],
    *,
    alpha: float = ALPHA,
    window: int = RECENT_WINDOW,
    shift: float | None = None,
    bases: Sequence[Basis] | None = None,
) -> DriftReport:
    """The monitor over a stream (oldest first). Drift is reported when the test raised an
    alarm within the last ``window`` outcomes; with ``shift``, the report also says how many
    outcomes such a shift in success would take to detect, simulated on these confidences.
    ``bases`` says what each statement was (``p_success`` or ``confidence``, the default)."""
    n = len(confidences)
    if bases is not None and len(bases) != n:
        raise ValueError("confidences and bases must be equal-length sequences")
    stated, stated_from = stated_basis(["confidence"] * n if bases is None else bases)
    path = monitor(confidences, outcomes, alpha=alpha, window=window)
    recent = [a for a in path.alarms if a.at > n - window]
    last = path.alarms[-1] if path.alarms else None
    bias_r = bias_h = rise_p = rise_y = None
    if n > window:
        b = [y - p for p, y in zip(confidences, outcomes, strict=True)]
        bias_r, bias_h = -_mean(b[-window:]), -_mean(b[:-window])
        rise_p, rise_y = (_mean(v[-window:]) - _mean(v[:-window]) for v in (confidences, outcomes))
    if recent:
        a = recent[-1]
        reason = (
            f"calibration drift: the agent became {a.direction} "
            f"(alarm at outcome {a.at} of {n}, testing since outcome {a.since})"
        )
        if a.sycophancy:
            reason += "; sycophancy-style: its confidence rose while its outcomes did not"
    elif last is not None:
        reason = (
            f"no drift since outcome {last.at} (the last alarm: {last.direction}); "
            f"e-value {path.e_value:.2f} of {1 / alpha:g} needed"
        )
    elif n < (least := least_outcomes(alpha)):
        reason = (
            f"insufficient data: {n} outcome{'s' if n != 1 else ''}; at alpha {alpha:g} the test "
            f"cannot raise an alarm before {least}"
        )
    else:
        reason = f"no drift: e-value {path.e_value:.2f} of {1 / alpha:g} needed"
    return DriftReport(
        stated=stated,
        stated_from=stated_from,
        n=n,
        alpha=alpha,
        guarantee=(
            f"for an agent that does not change, the chance of any alarm is at most {alpha:g}, "
            "however often this is checked"
        ),
        e_value=path.e_value,
        alarms=path.alarms,
        since=path.since,
        recent=min(n, window),
        calibration_drift=bool(recent),
        sycophancy_drift=any(a.sycophancy for a in recent),
        bias_recent=_round(bias_r),
        bias_history=_round(bias_h),
        confidence_rise=_round(rise_p),
        outcome_rise=_round(rise_y),
        detection=None
        if shift is None
        else detection_delay(shift, alpha=alpha, confidences=confidences),
        reason=reason,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def detection_delay(
    shift: float,
    *,
    alpha: float = ALPHA,
    confidences: Sequence[float] = (),
    baseline: int = 100,
    horizon: int = 300,
    runs: int = 200,
    seed: int = 0,
) -> Detection:
    """Outcomes from a shift to its alarm, over ``runs`` simulated agents: calibrated for
    ``baseline`` outcomes, then succeeding ``shift`` less often (more often if negative) for up
    to ``horizon`` more. Confidences are drawn from ``confidences`` (uniform in 0.5–0.95 when
    fewer than 20 are given)."""
    rng = random.Random(seed)
    pool = list(confidences) if len(confidences) >= 20 else None
    delays: list[int] = []
    for run in range(runs):
        p = [
            rng.choice(pool) if pool else rng.uniform(0.5, 0.95) for _ in range(baseline + horizon)
        ]
        y = [float(rng.random() < (c if i < baseline else c - shift)) for i, c in enumerate(p)]
        path = monitor(p, y, alpha=alpha, seed=run)
        after = [a.at - baseline for a in path.alarms if a.at > baseline]
        if after:
            delays.append(after[0])
    detected = len(delays) / runs
    ordered = sorted(delays) + [horizon + 1] * (runs - len(delays))

    def quantile(q: float) -> float | None:
        value = ordered[min(runs - 1, int(q * runs))]
        return None if value > horizon else float(value)

    return Detection(
        shift=shift,
        alpha=alpha,
        runs=runs,
        median=quantile(0.5),
        p90=quantile(0.9),
        detected=round(detected, 4),
        horizon=horizon,
    )
