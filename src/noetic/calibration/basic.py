"""Calibration: how a cascade's self-assessment moved, and how that compares with reality.

**Basic calibration** compares a cascade's POSTFLIGHT with its PREFLIGHT.

* The *epistemic delta* is ``post − pre`` per vector present in both (raw, not oriented: a
  drop in ``uncertainty`` is a negative delta).
* *Learning magnitude* is the mean absolute oriented change over the vectors present in both.
* The *classification* compares overall confidence. After doing the work, the POSTFLIGHT is the
  agent's best account of how well-founded its start was, so with ``change = post − pre`` and a
  tolerance ``τ`` (default 0.10):

  - ``change < −τ`` → **overconfident**: it started surer than the work bore out;
  - ``change > +τ`` → **underconfident**: it started less sure than it turned out to be;
  - ``|change| ≤ τ`` → **well_calibrated`` (the boundary itself counts as well calibrated).

  Values are compared after rounding to 9 decimals, so ``0.7 − 0.6`` is exactly at the boundary.

This is a statement about self-consistency only; calibration against recorded outcomes is what
tells whether the agent was right.
"""

from __future__ import annotations

from enum import StrEnum

from noetic.assessment import Assessment
from noetic.plain import Plain
from noetic.vectors import Tuning, oriented, overall_confidence

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


CALIBRATION_TOLERANCE: Final = 0.10


class CalibrationClass(StrEnum):
    WELL_CALIBRATED = "well_calibrated"
    OVERCONFIDENT = "overconfident"
    UNDERCONFIDENT = "underconfident"


class BasicCalibration(Plain):
    delta: dict[str, float]
    confidence_pre: float
    confidence_post: float
    confidence_change: float
    learning_magnitude: float
    classification: CalibrationClass
    tolerance: float


def epistemic_delta(pre: Assessment, post: Assessment) -> dict[str, float]:
    """``post − pre`` per vector scored in both, rounded to 6 decimals."""
    return {
        name: round(post.vectors[name] - pre.vectors[name], 6)
        for name in pre.vectors
        if name in post.vectors
    }


def classify(
    confidence_pre: float, confidence_post: float, tolerance: float = CALIBRATION_TOLERANCE
) -> CalibrationClass:
    """The rule in the module docstring."""
    change = round(confidence_post - confidence_pre, 9)
    tol = round(tolerance, 9)
    if change < -tol:
        return CalibrationClass.OVERCONFIDENT
    if change > tol:
        return CalibrationClass.UNDERCONFIDENT
    return CalibrationClass.WELL_CALIBRATED


def basic_calibration(
    pre: Assessment,
    post: Assessment,
    tuning: Tuning | None = None,
    tolerance: float = CALIBRATION_TOLERANCE,
) -> BasicCalibration:
    delta = epistemic_delta(pre, post)
    c_pre = overall_confidence(pre.vectors, tuning)
    c_post = overall_confidence(post.vectors, tuning)
    learning = (
        sum(abs(oriented(n, post.vectors[n]) - oriented(n, pre.vectors[n])) for n in delta)
        / len(delta)
        if delta
        else 0.0
    )
    return BasicCalibration(
        delta=delta,
        confidence_pre=round(c_pre, 6),
        confidence_post=round(c_post, 6),
        confidence_change=round(c_post - c_pre, 6),
        learning_magnitude=round(learning, 6),
        classification=classify(c_pre, c_post, tolerance),
        tolerance=tolerance,
    )
