"""Calibration against outcomes: the standard metrics, with uncertainty and sample sizes.

Inputs are pairs ``(p, y)``: the confidence an agent stated before a task (``p`` in [0, 1]) and
the verified outcome (``y`` in [0, 1]; 1 = success). All maths is in ``docs/calibration.md``.

* **Brier score** ``mean((p − y)²)``; 0 is perfect, 0.25 is a constant 0.5 guess.
* **Expected calibration error** over *adaptive, equal-mass* bins: edges at the quantiles of
  ``p`` (as scikit-learn's ``calibration_curve(strategy="quantile")``), then
  ``ECE = Σ_b (n_b / N) · |mean(p_b) − mean(y_b)|``.
* **Signed over/under-confidence** ``mean(p − y)``: positive = overconfident.
* **AUROC** of ``p`` against success (``y ≥ 0.5``): the probability that a random success was
  given more confidence than a random failure (ties count half).
* Each metric carries a **95% bootstrap interval** (percentile method, seeded, so reports are
  reproducible; 1,000 resamples, fewer above 20,000 outcomes, never under 200, where the
  intervals are narrow anyway) and the **sample size**. Below ``min_samples`` (default 20),
  or for AUROC without at least 5 successes and 5 failures, the metric is ``None`` with the
  reason, never a number.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

MIN_SAMPLES: Final = 20
MIN_PER_CLASS: Final = 5
BOOTSTRAP_ROUNDS: Final = 1000


class Metric(BaseModel):
    model_config = ConfigDict(frozen=True)

    value: float | None
    low: float | None = None
    high: float | None = None
    n: int
    reason: str | None = None


class ReliabilityBin(BaseModel):
    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    count: int
    mean_confidence: float
    observed: float
    gap: float


class CalibrationMetrics(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    brier: Metric
    ece: Metric
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


def _bootstrap(fn: Any, p: Any, y: Any, seed: int, rounds: int) -> tuple[float, float]:
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
    low, high = np.percentile(values, [2.5, 97.5])
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

    def metric(fn: Any, enough: bool, reason: str) -> Metric:
        if not enough:
            return Metric(value=None, n=n, reason=reason)
        low, high = _bootstrap(fn, p, y, seed, rounds)
        return Metric(value=fn(p, y), low=low, high=high, n=n)

    few = f"insufficient data: {n} outcomes, at least {min_samples} needed"
    enough = n >= min_samples
    positives = int((y >= 0.5).sum()) if n else 0
    both = positives >= MIN_PER_CLASS and n - positives >= MIN_PER_CLASS
    return CalibrationMetrics(
        n=n,
        brier=metric(brier, enough, few),
        ece=metric(lambda a, b: ece(a, b, bins), enough, few),
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
