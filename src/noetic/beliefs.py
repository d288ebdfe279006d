"""Bayesian beliefs about an agent's calibration bias, the guardian's proposals, and drift.

**Beliefs.** For each AI and each prediction (``overall`` confidence, and every vector read as a
'higher is better' prediction of success), the bias is ``b = predicted − observed`` per outcome.
The belief about the mean bias ``μ`` is Normal, updated by the conjugate Normal–Normal rule with
a known per-outcome noise variance ``σ² = 0.2`` (a Bernoulli outcome around a mid-range
confidence varies by about p(1−p) ≈ 0.2) from the prior ``N(0, 0.2²)``:

    precision = 1/τ₀² + n/σ²,   mean = (Σ b / σ²) / precision,   variance = 1 / precision

A bias is *credible* when the 95% interval ``mean ± 1.96·√variance`` excludes zero. Beliefs are
learned from recorded outcomes only, never from the agent's own self-reports.

**The guardian** turns a credible bias in ``overall`` into one proposal: scale the profile's
``confidence_weight`` by ``observed / predicted`` (mean observed success over mean stated
confidence), kept within [0.5, 1.5]. One knob, so two corrections never compound. Nothing
changes unless the proposal is applied.

**Drift** compares the recent window of outcomes (default the last 20) with everything before:
calibration drift when ``|mean bias(recent) − mean bias(history)| > 0.15`` (the seed's
threshold); sycophancy-style drift when confidence rose while the observed outcomes did not rise
with it (rise in confidence − rise in outcomes > 0.10). Both must also exceed 1.96 standard
errors of the difference: twenty pass/fail outcomes have a standard error near 0.10 on their
own, so the seed's fixed threshold alone would raise false alarms on a well-calibrated agent
about one check in eight.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict

PRIOR_MEAN: Final = 0.0
PRIOR_VARIANCE: Final = 0.2**2
NOISE_VARIANCE: Final = 0.2
Z95: Final = 1.959964
DRIFT_THRESHOLD: Final = 0.15
SYCOPHANCY_THRESHOLD: Final = 0.10
RECENT_WINDOW: Final = 20
MIN_DRIFT_HISTORY: Final = 20
WEIGHT_BOUNDS: Final = (0.5, 1.5)


class Belief(BaseModel):
    model_config = ConfigDict(frozen=True)

    target: str
    mean: float
    variance: float
    evidence: int
    low: float
    high: float
    credible: bool
    direction: str


def update_belief(target: str, biases: Sequence[float]) -> Belief:
    """The posterior over the mean bias after ``biases`` (module docstring)."""
    n = len(biases)
    precision = 1 / PRIOR_VARIANCE + n / NOISE_VARIANCE
    mean = (PRIOR_MEAN / PRIOR_VARIANCE + sum(biases) / NOISE_VARIANCE) / precision
    variance = 1 / precision
    half = Z95 * math.sqrt(variance)
    low, high = mean - half, mean + half
    credible = low > 0 or high < 0
    direction = (
        "overconfident" if credible and mean > 0 else "underconfident" if credible else "none"
    )
    return Belief(
        target=target,
        mean=round(mean, 6),
        variance=round(variance, 8),
        evidence=n,
        low=round(low, 6),
        high=round(high, 6),
        credible=credible,
        direction=direction,
    )


class Proposal(BaseModel):
    model_config = ConfigDict(frozen=True)

    profile: str
    field: str
    old: float
    new: float
    reason: str


def guardian_proposal(
    profile: str,
    current_weight: float,
    belief: Belief,
    mean_predicted: float,
    mean_observed: float,
) -> Proposal | None:
    """A ``confidence_weight`` correction when the overall bias is credible, else ``None``."""
    if not belief.credible or mean_predicted <= 0:
        return None
    lo, hi = WEIGHT_BOUNDS
    new = round(min(hi, max(lo, current_weight * mean_observed / mean_predicted)), 3)
    if new == round(current_weight, 3):
        return None
    return Proposal(
        profile=profile,
        field="tuning.confidence_weight",
        old=current_weight,
        new=new,
        reason=(
            f"{belief.direction}: mean bias {belief.mean:+.3f} (95% interval {belief.low:+.3f} "
            f"to {belief.high:+.3f}, {belief.evidence} outcomes); stated confidence "
            f"{mean_predicted:.3f} vs observed {mean_observed:.3f}"
        ),
    )


class DriftReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    n: int
    recent: int
    history: int
    bias_recent: float | None
    bias_history: float | None
    calibration_drift: bool
    confidence_rise: float | None
    outcome_rise: float | None
    sycophancy_drift: bool
    reason: str


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _variance(values: Sequence[float]) -> float:
    m = _mean(values)
    return sum((v - m) ** 2 for v in values) / max(1, len(values) - 1)


def _standard_error(a: Sequence[float], b: Sequence[float]) -> float:
    """Standard error of the difference of two means."""
    return math.sqrt(_variance(a) / len(a) + _variance(b) / len(b))


def drift(
    confidences: Sequence[float],
    outcomes: Sequence[float],
    *,
    window: int = RECENT_WINDOW,
    min_history: int = MIN_DRIFT_HISTORY,
    threshold: float = DRIFT_THRESHOLD,
    sycophancy: float = SYCOPHANCY_THRESHOLD,
) -> DriftReport:
    """Compare the last ``window`` outcomes (in time order) with all earlier ones."""
    n = len(confidences)
    if n < window + min_history:
        return DriftReport(
            n=n,
            recent=min(n, window),
            history=max(0, n - window),
            bias_recent=None,
            bias_history=None,
            calibration_drift=False,
            confidence_rise=None,
            outcome_rise=None,
            sycophancy_drift=False,
            reason=f"insufficient data: {n} outcomes, at least {window + min_history} needed "
            f"({window} recent + {min_history} history)",
        )
    p_hist, p_recent = confidences[:-window], confidences[-window:]
    y_hist, y_recent = outcomes[:-window], outcomes[-window:]
    b_hist = [p - y for p, y in zip(p_hist, y_hist, strict=True)]
    b_recent = [p - y for p, y in zip(p_recent, y_recent, strict=True)]
    bias_h, bias_r = _mean(b_hist), _mean(b_recent)
    rise_p = _mean(p_recent) - _mean(p_hist)
    rise_y = _mean(y_recent) - _mean(y_hist)
    noise = Z95 * _standard_error(b_recent, b_hist)
    cal = abs(bias_r - bias_h) > max(threshold, noise)
    syc = rise_p > 0 and rise_p - rise_y > max(sycophancy, noise)
    reasons = []
    if cal:
        reasons.append(f"calibration drift: bias {bias_h:+.3f} → {bias_r:+.3f}")
    if syc:
        reasons.append(
            f"sycophancy-style drift: confidence {rise_p:+.3f} while outcomes {rise_y:+.3f}"
        )
    return DriftReport(
        n=n,
        recent=window,
        history=n - window,
        bias_recent=round(bias_r, 6),
        bias_history=round(bias_h, 6),
        calibration_drift=cal,
        confidence_rise=round(rise_p, 6),
        outcome_rise=round(rise_y, 6),
        sycophancy_drift=syc,
        reason="; ".join(reasons) or "no drift",
    )
