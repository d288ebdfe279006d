"""Calibration against outcomes: the standard metrics, with uncertainty and sample sizes.

Inputs are pairs ``(p, y)``: the confidence an agent stated before a task (``p`` in [0, 1]) and
the verified outcome (``y`` in [0, 1]; 1 = success). All maths, and why, is in
``docs/calibration.md``:

* **Brier score** ``mean((p − y)²)``; **signed bias** ``mean(p − y)`` (positive: overconfident);
* **ECE** over adaptive, equal-mass bins (edges at the quantiles of ``p``),
  ``Σ_b (n_b / N) · |mean(p_b) − mean(y_b)|``, biased upward at small n, and the **debiased ECE**
  (Kumar, Liang & Ma 2019), ``Σ_b (n_b/N) · [(mean(p_b) − mean(y_b))² − s²_b / n_b]``, reported
  as a signed root, its interval the bootstrap's on the squared scale shifted by the bootstrap's
  own bias;
* **AUROC** of ``p`` against success (``y ≥ 0.5``), ties counting half;
* **a calibration test**: Spiegelhalter's Z, ``Σ (y − p)(1 − 2p) / √Σ (1 − 2p)² p(1 − p)``, and
  the calibration-in-the-large Z, ``Σ (y − p) / √Σ p(1 − p)``; "miscalibrated" when either
  rejects at ``α/2`` (Bonferroni, α = 0.05 by default), else "consistent with calibration":
  from the test, never from a point estimate.

Each metric carries a 95% bootstrap interval (percentile, seeded so reports are reproducible;
1,000 resamples, fewer above 20,000 outcomes, never under 200) and the sample size. Below
``min_samples`` (default 20), or for AUROC without 5 successes and 5 failures, the metric is
``None`` with the reason, never a number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from noetic.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final, Literal, TypeAlias


MIN_SAMPLES: Final = 20
MIN_PER_CLASS: Final = 5
BOOTSTRAP_ROUNDS: Final = 1000
TEST_ALPHA: Final = 0.05


class Metric(Plain):
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int
    reason: str | None = None


class ReliabilityBin(Plain):
    low: float
    high: float
    count: int
    mean_confidence: float
    observed: float
    gap: float


Verdict: TypeAlias = 'Literal["consistent with calibration", "miscalibrated", "insufficient data"]'


class CalibrationTest(Plain):
    """Spiegelhalter's Z and the calibration-in-the-large Z, and the verdict they give."""

    verdict: Verdict
    alpha: float
    n: int
    spiegelhalter_z: float | None = None
    spiegelhalter_p: float | None = None
    bias_z: float | None = None
    bias_p: float | None = None
    reason: str


class CalibrationMetrics(Plain):
    n: int
    brier: Metric
    ece: Metric
    ece_debiased: Metric
    test: CalibrationTest
    signed_bias: Metric
    auroc: Metric
    reliability: list[ReliabilityBin]
    bins: int


def _arrays(p: Sequence[float], y: Sequence[float]) -> tuple[Any, Any]:
    import numpy as np

    pa, ya = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    if pa.shape != ya.shape or pa.ndim != 1:
        raise ValueError("confidences and outcomes must be equal-length sequences")
    if pa.size and (
        not np.all(np.isfinite(pa))
        or not np.all(np.isfinite(ya))
        or pa.min() < 0
        or pa.max() > 1
        or ya.min() < 0
        or ya.max() > 1
    ):
        raise ValueError("confidences and outcomes must be finite numbers in [0, 1]")
    return pa, ya


def brier(p: Any, y: Any) -> float:
    import numpy as np

    return float(np.mean((p - y) ** 2))


def signed_bias(p: Any, y: Any) -> float:
    import numpy as np

    return float(np.mean(p - y))


def bin_ids(p: Any, bins: int) -> tuple[Any, Any]:
    """Equal-mass bin edges at the quantiles of ``p``, and each sample's bin."""
    import numpy as np

    edges = np.percentile(p, np.linspace(0, 100, bins + 1))
    return edges, np.searchsorted(edges[1:-1], p)


def reliability(p: Any, y: Any, bins: int) -> list[ReliabilityBin]:
    edges, ids = bin_ids(p, bins)
    table = []
    for b in range(bins):
        mask = ids == b
        count = int(mask.sum())
        if count == 0:
            continue
        conf, obs = float(p[mask].mean()), float(y[mask].mean())
        table.append(
            ReliabilityBin(
                low=float(edges[b]),
                high=float(edges[b + 1]),
                count=count,
                mean_confidence=conf,
                observed=obs,
                gap=conf - obs,
            )
        )
    return table


def ece(p: Any, y: Any, bins: int) -> float:
    """``Σ_b (n_b/N)·|mean(p_b) − mean(y_b)|`` = ``Σ_b |Σp_b − Σy_b| / N`` (vectorised)."""
    import numpy as np

    _, ids = bin_ids(p, bins)
    sum_p = np.bincount(ids, weights=p, minlength=bins)
    sum_y = np.bincount(ids, weights=y, minlength=bins)
    return float(np.abs(sum_p - sum_y).sum() / len(p))


def ece_debiased_squared(p: Any, y: Any, bins: int) -> float:
    """``Σ_b (n_b/N)·[(mean p_b − mean y_b)² − s²_b/n_b]``: unbiased for the binned squared
    calibration error; bins with one sample carry no variance estimate and are left out."""
    import numpy as np

    _, ids = bin_ids(p, bins)
    count = np.bincount(ids, minlength=bins).astype(float)
    sum_p = np.bincount(ids, weights=p, minlength=bins)
    sum_y = np.bincount(ids, weights=y, minlength=bins)
    sum_yy = np.bincount(ids, weights=y * y, minlength=bins)
    m = count >= 2
    mean_p, mean_y = sum_p[m] / count[m], sum_y[m] / count[m]
    variance = np.maximum(0.0, sum_yy[m] - count[m] * mean_y**2) / (count[m] - 1)
    return float(np.sum(count[m] / len(p) * ((mean_p - mean_y) ** 2 - variance / count[m])))


def signed_root(x: float) -> float:
    return math.copysign(math.sqrt(abs(x)), x)


def calibration_test(
    p: Any, y: Any, *, alpha: float = TEST_ALPHA, min_samples: int = MIN_SAMPLES
) -> CalibrationTest:
    """Spiegelhalter's Z and the calibration-in-the-large Z (module docstring)."""
    import numpy as np

    n = len(p)
    if n < min_samples:
        return CalibrationTest(
            verdict="insufficient data",
            alpha=alpha,
            n=n,
            reason=f"insufficient data: {n} outcome{'s' if n != 1 else ''}, at least "
            f"{min_samples} needed",
        )
    variance = p * (1 - p)
    tests: dict[str, tuple[float, float]] = {}
    certain_but_wrong = bool(np.any((variance == 0) & (y != p)))
    for name, weight in (("spiegelhalter", 1 - 2 * p), ("bias", np.ones_like(p))):
        spread = float(np.sum(weight**2 * variance))
        if spread > 0:
            z = float(np.sum((y - p) * weight)) / math.sqrt(spread)
            tests[name] = (z, math.erfc(abs(z) / math.sqrt(2)))  # two-sided p
    level = alpha / max(1, len(tests))
    rejected = [name for name, (_, pv) in tests.items() if pv < level]
    if certain_but_wrong:
        verdict: Verdict = "miscalibrated"
        reason = "a confidence of 0 or 1 met a different outcome"
    elif not tests:
        verdict, reason = "insufficient data", "every confidence is 0 or 1: nothing to test"
    elif rejected:
        verdict = "miscalibrated"
        reason = " and ".join(
            f"{'Spiegelhalter' if r == 'spiegelhalter' else 'calibration-in-the-large'} "
            f"Z = {tests[r][0]:+.2f} (p = {tests[r][1]:.3g} < {level:.3g})"
            for r in rejected
        )
    else:
        verdict = "consistent with calibration"
        reason = f"no test rejects at {alpha:g}: " + ", ".join(
            f"{name} p = {pv:.3g}" for name, (_, pv) in tests.items()
        )
    spiegel, bias = tests.get("spiegelhalter"), tests.get("bias")
    return CalibrationTest(
        verdict=verdict,
        alpha=alpha,
        n=n,
        spiegelhalter_z=round(spiegel[0], 6) if spiegel else None,
        spiegelhalter_p=round(spiegel[1], 6) if spiegel else None,
        bias_z=round(bias[0], 6) if bias else None,
        bias_p=round(bias[1], 6) if bias else None,
        reason=reason,
    )


def auroc(p: Any, y: Any) -> float:
    """Mann–Whitney U over ranks, ties given their average rank."""
    import numpy as np

    positive = y >= 0.5
    n_pos, n_neg = int(positive.sum()), int((~positive).sum())
    order = np.argsort(p, kind="mergesort")
    _, first, counts = np.unique(p[order], return_index=True, return_counts=True)
    ranks = np.empty(len(p), dtype=float)
    ranks[order] = np.repeat(first + (counts - 1) / 2 + 1, counts)
    u = ranks[positive].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def _bootstrap(
    fn: Any, p: Any, y: Any, seed: int, rounds: int, *, debias: bool = False
) -> tuple[float, float]:
    """The percentile interval of ``fn`` over seeded resamples (a resample on which it raises
    ZeroDivisionError is left out); with ``debias``, shifted by the bootstrap's own bias."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(p)
    rounds = min(rounds, max(200, 20_000_000 // max(n, 1)))
    values = []
    for _ in range(rounds):
        idx = rng.integers(0, n, n)
        try:
            values.append(fn(p[idx], y[idx]))
        except ZeroDivisionError:
            continue
    shift = float(np.mean(values)) - fn(p, y) if debias else 0.0
    low, high = np.percentile(values, [2.5, 97.5]) - shift
    return float(low), float(high)


def calibration_metrics(
    confidences: Sequence[float],
    outcomes: Sequence[float],
    *,
    bins: int = 10,
    min_samples: int = MIN_SAMPLES,
    seed: int = 0,
    rounds: int = BOOTSTRAP_ROUNDS,
) -> CalibrationMetrics:
    """Every metric in the module docstring, with intervals, or the reason there is none."""
    p, y = _arrays(confidences, outcomes)
    n = len(p)
    bins = max(1, min(bins, n // 5 if n >= 5 else 1))

    def metric(fn: Any, enough: bool, reason: str, *, debias: bool = False) -> Metric:
        if not enough:
            return Metric(value=None, n=n, reason=reason)
        low, high = _bootstrap(fn, p, y, seed, rounds, debias=debias)
        shown = signed_root if debias else float  # debiased: a squared error's signed root
        return Metric(value=shown(fn(p, y)), low=shown(low), high=shown(high), n=n)

    few = f"insufficient data: {n} outcome{'s' if n != 1 else ''}, at least {min_samples} needed"
    enough = n >= min_samples
    positives = int((y >= 0.5).sum()) if n else 0
    both = positives >= MIN_PER_CLASS and n - positives >= MIN_PER_CLASS
    return CalibrationMetrics(
        n=n,
        brier=metric(brier, enough, few),
        ece=metric(lambda a, b: ece(a, b, bins), enough, few),
        ece_debiased=metric(
            lambda a, b: ece_debiased_squared(a, b, bins), enough, few, debias=True
        ),
        test=calibration_test(p, y, min_samples=min_samples),
        signed_bias=metric(signed_bias, enough, few),
        auroc=metric(
            _guarded_auroc,
            enough and both,
            few
            if not enough
            else f"insufficient data: AUROC needs {MIN_PER_CLASS} successes and "
            f"{MIN_PER_CLASS} failures ({positives} and {n - positives})",
        ),
        reliability=reliability(p, y, bins) if enough else [],
        bins=bins,
    )


def _guarded_auroc(p: Any, y: Any) -> float:
    positives = int((y >= 0.5).sum())
    if positives == 0 or positives == len(y):
        raise ZeroDivisionError("one class only")
    return auroc(p, y)
