import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.calibration.beliefs import NOISE_VARIANCE, PRIOR_VARIANCE, update_belief
from noetic.calibration.drift import detect_drift as drift
from noetic.calibration.guardian import guardian_proposal


def test_no_evidence_is_the_prior():
    b = update_belief("overall", [])
    assert b.mean == 0 and b.variance == pytest.approx(PRIOR_VARIANCE)
    assert not b.credible and b.direction == "none"


def test_the_conjugate_update():
    biases = [0.3, 0.1, 0.2, 0.25]
    b = update_belief("overall", biases)
    precision = 1 / PRIOR_VARIANCE + len(biases) / NOISE_VARIANCE
    assert b.variance == pytest.approx(1 / precision, rel=1e-6)
    assert b.mean == pytest.approx(sum(biases) / NOISE_VARIANCE / precision, abs=1e-6)
    assert b.evidence == 4


def test_credibility_is_the_interval_excluding_zero():
    assert update_belief("x", [0.2] * 60).direction == "overconfident"
    assert update_belief("x", [-0.2] * 60).direction == "underconfident"
    assert not update_belief("x", [0.2, -0.2] * 30).credible
    b = update_belief("x", [0.05] * 10)
    assert b.credible == (b.low > 0)


@given(st.lists(st.floats(-1, 1), max_size=200))
def test_beliefs_shrink_with_evidence(biases):
    b = update_belief("x", biases)
    assert b.low <= b.mean <= b.high
    assert b.variance <= PRIOR_VARIANCE + 1e-12
    assert math.isfinite(b.mean)


def test_guardian_scales_confidence_weight_within_bounds():
    belief = update_belief("overall", [0.2] * 80)
    p = guardian_proposal("balanced", 1.0, belief, mean_predicted=0.8, mean_observed=0.6)
    assert p.field == "tuning.confidence_weight" and p.new == pytest.approx(0.75)
    extreme = guardian_proposal("balanced", 1.0, belief, mean_predicted=0.9, mean_observed=0.1)
    assert extreme.new == 0.5
    assert guardian_proposal("b", 1.0, update_belief("overall", [0.0] * 80), 0.7, 0.7) is None


def test_drift_needs_enough_history():
    report = drift([0.7] * 30, [1.0] * 30)
    assert not report.calibration_drift and "insufficient data" in report.reason


def test_drift_detects_a_change_in_bias_at_the_seed_threshold():
    steady = drift([0.7] * 60, [0.7] * 60)
    assert not steady.calibration_drift and steady.reason == "no drift"
    shifted = drift([0.7] * 60, [0.7] * 40 + [0.5] * 20)
    assert shifted.calibration_drift and shifted.bias_recent == pytest.approx(0.2)
    at_threshold = drift([0.7] * 60, [0.7] * 40 + [0.55] * 20)
    assert not at_threshold.calibration_drift  # 0.15 exactly is not above the threshold


def test_sycophancy_is_confidence_rising_while_outcomes_do_not():
    rising = drift([0.6] * 40 + [0.85] * 20, [0.6] * 60)
    assert rising.sycophancy_drift and "sycophancy" in rising.reason
    earned = drift([0.6] * 40 + [0.85] * 20, [0.6] * 40 + [0.85] * 20)
    assert not earned.sycophancy_drift
