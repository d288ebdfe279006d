"""Drift: has the agent's calibration changed recently?

The monitor compares the recent window of outcomes (default the last 20) with everything before:
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

from noetic.calibration.beliefs import Z95

DRIFT_THRESHOLD: Final = 0.15
SYCOPHANCY_THRESHOLD: Final = 0.10
RECENT_WINDOW: Final = 20
MIN_DRIFT_HISTORY: Final = 20


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


def detect_drift(
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
