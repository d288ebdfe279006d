import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.calibration.beliefs import NOISE_VARIANCE, PRIOR_VARIANCE, update_belief
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


def test_guardian_proposal_follows_the_posterior_not_the_raw_ratio():
    belief = update_belief("overall", [0.2] * 80)
    p = guardian_proposal("balanced", 1.0, belief, mean_predicted=0.8, mean_observed=0.6)
    assert p.field == "tuning.confidence_weight" and p.supported == pytest.approx(0.75)
    assert p.new == pytest.approx((0.8 - belief.mean) / 0.8, abs=1e-3)
    assert 0.75 < p.new < 1.0  # shrunk toward no change
    assert p.low <= p.new <= p.high and not p.clamped
    assert guardian_proposal("b", 1.0, update_belief("overall", [0.0] * 80), 0.7, 0.7) is None


def test_the_clamp_is_a_reported_safety_limit():
    belief = update_belief("overall", [0.8] * 80)
    extreme = guardian_proposal("balanced", 1.0, belief, mean_predicted=0.9, mean_observed=0.1)
    assert extreme.new == 0.5 and extreme.clamped and extreme.unclamped < 0.5
    assert "safety limit" in extreme.reason


def test_ten_outcomes_at_085_right_half_the_time():
    """The issue's case: the evidence supports about 0.59; ten outcomes move only part way."""
    belief = update_belief("overall", [0.35] * 10)
    p = guardian_proposal("balanced", 1.0, belief, mean_predicted=0.85, mean_observed=0.5)
    assert p.supported == pytest.approx(0.588, abs=1e-3)
    assert p.supported < p.new < 1.0 and not p.clamped
    assert p.low < p.supported < p.high  # the interval contains what the evidence supports


@given(
    st.floats(0.05, 0.6),
    st.integers(1, 400),
    st.floats(0.6, 1.0),
    st.floats(0.5, 1.5),
)
def test_a_proposal_is_never_larger_than_its_evidence(bias, n, predicted, weight):
    belief = update_belief("overall", [bias] * n)
    p = guardian_proposal("b", weight, belief, predicted, predicted - bias)
    if p is None:
        return
    assert p.low <= p.new <= p.high
    toward = p.supported if not p.clamped else p.new
    assert min(weight, toward) - 1e-3 <= p.new <= max(weight, toward) + 1e-3
    more = guardian_proposal("b", weight, update_belief("overall", [bias] * (4 * n)), predicted,
                             predicted - bias)  # fmt: skip
    assert more is not None and abs(more.unclamped - p.supported) <= (
        abs(p.unclamped - p.supported) + 1e-3
    )
