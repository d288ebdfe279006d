"""The small-sample maths: Wilson intervals, the gap, the Brier decomposition."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.calibration.rates import (
    MAX_GROUPS,
    Interval,
    brier_parts,
    gap,
    gap_difference,
    significant,
    wilson,
)

probability = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


@given(st.integers(min_value=1, max_value=10_000), st.data())
def test_wilson_holds_the_rate_and_stays_in_the_unit_interval(n, data):
    k = data.draw(st.integers(min_value=0, max_value=n))
    r = wilson(k, n)
    assert 0.0 <= r.low <= r.value <= r.high <= 1.0
    assert r.value == k / n
    assert r.high - r.low > 0  # never a point, not even at 0 or n successes


def test_one_outcome_already_bounds_the_rate():
    one = wilson(1, 1)
    assert one.value == 1.0 and one.low == pytest.approx(0.2065, abs=1e-4) and one.high == 1.0
    none = wilson(0, 1)
    assert none.low == 0.0 and none.high == pytest.approx(0.7935, abs=1e-4)
    assert wilson(0, 0) == Interval(value=None)


def test_wilson_matches_the_textbook_values():
    r = wilson(7, 20)  # 35%: the published Wilson interval 0.1812–0.5671
    assert (r.low, r.high) == (pytest.approx(0.1812, abs=1e-4), pytest.approx(0.5671, abs=1e-4))


def test_wilson_refuses_impossible_counts():
    with pytest.raises(ValueError, match="successes must be in"):
        wilson(3, 2)


@given(st.integers(min_value=1, max_value=500), st.data())
def test_more_outcomes_at_the_same_rate_narrow_the_interval(n, data):
    k = data.draw(st.integers(min_value=0, max_value=n))
    small, large = wilson(k, n), wilson(4 * k, 4 * n)
    assert large.high - large.low < small.high - small.low


def test_the_gap_is_stated_minus_rate_with_the_rate_interval_carried_over():
    g = gap(0.8, wilson(7, 20))
    assert g.value == pytest.approx(0.45)
    assert g.low == pytest.approx(0.8 - 0.5671, abs=1e-4)
    assert g.high == pytest.approx(0.8 - 0.1812, abs=1e-4)
    assert significant(g)
    assert not significant(gap(0.4, wilson(7, 20)))
    assert gap(0.5, Interval(value=None)) == Interval(value=None)


def test_gap_coverage_holds_at_small_n_for_an_overconfident_agent():
    """p_success 0.8 on tasks that succeed 35% of the time: the true gap is 0.45."""
    rng = random.Random(3)
    for n in (5, 10, 20, 50):
        covered = 0
        for _ in range(400):
            k = sum(rng.random() < 0.35 for _ in range(n))
            g = gap(0.8, wilson(k, n))
            covered += g.low <= 0.45 <= g.high
        assert covered / 400 >= 0.90, n


@given(
    probability, st.integers(1, 60), st.integers(0, 60), probability, st.integers(1, 60), st.data()
)
def test_the_difference_of_two_gaps_holds_its_estimate(m1, n1, k1, m2, n2, data):
    k1 = min(k1, n1)
    k2 = data.draw(st.integers(0, n2))
    d = gap_difference(m1, wilson(k1, n1), m2, wilson(k2, n2))
    assert d.value == pytest.approx((m1 - k1 / n1) - (m2 - k2 / n2))
    assert d.low <= d.value <= d.high


def test_a_15_point_less_overconfident_review_is_told_apart_with_enough_outcomes():
    standard = wilson(35, 100)  # stated 0.8
    adversarial = wilson(35, 100)  # stated 0.65
    d = gap_difference(0.8, standard, 0.65, adversarial)
    assert d.value == pytest.approx(0.15) and significant(d)


discrete = st.lists(
    st.tuples(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95]), st.sampled_from([0.0, 1.0])),
    min_size=1,
    max_size=200,
)


@pytest.mark.slow
@given(discrete)
def test_reliability_minus_resolution_plus_uncertainty_is_the_brier_score(pairs):
    p, y = zip(*pairs, strict=True)
    parts = brier_parts(list(p), list(y))
    assert parts.grouped_by == "value" and parts.within_bin == 0.0
    assert parts.reliability - parts.resolution + parts.uncertainty == pytest.approx(
        parts.brier, abs=1e-12
    )
    assert parts.reliability >= 0 and parts.resolution >= 0
    rate = sum(y) / len(y)
    assert parts.uncertainty == pytest.approx(rate * (1 - rate), abs=1e-12)
    base_rate = sum((rate - v) ** 2 for v in y) / len(y)
    assert parts.base_rate_brier == pytest.approx(base_rate, abs=1e-12)


@given(st.lists(st.tuples(probability, probability), min_size=1, max_size=300))
def test_the_decomposition_is_exact_for_any_forecasts_and_graded_outcomes(pairs):
    p, y = zip(*pairs, strict=True)
    parts = brier_parts(list(p), list(y))
    total = parts.reliability - parts.resolution + parts.uncertainty + parts.within_bin
    assert total == pytest.approx(parts.brier, abs=1e-12)
    assert parts.groups <= max(MAX_GROUPS, len(set(p)))
    if len(set(p)) <= MAX_GROUPS:
        assert parts.within_bin == pytest.approx(0.0, abs=1e-12)


def test_a_forecaster_no_better_than_the_base_rate_shows_no_skill():
    p = [0.5] * 10
    y = [1.0, 0.0] * 5
    parts = brier_parts(p, y)
    assert parts.brier == parts.base_rate_brier == 0.25
    assert parts.skill == 0.0 and parts.resolution == 0.0
    assert brier_parts([], []) is None
    assert brier_parts([0.7, 0.7], [1.0, 1.0]).skill is None  # one outcome class: no skill
    with pytest.raises(ValueError, match="equal-length"):
        brier_parts([0.5], [1.0, 0.0])


@given(probability, st.integers(1, 500), st.integers(1, 500))
def test_the_auroc_interval_holds_its_value_inside_the_unit_interval(area, pos, neg):
    from noetic.calibration.rates import auroc_interval

    i = auroc_interval(area, pos, neg)
    assert 0.0 <= i.low <= area <= i.high <= 1.0


def test_the_auroc_interval_is_as_wide_as_the_auroc_really_varies():
    """Binormal scores with a true AUROC of 0.80, 50 successes and 50 failures: the spread of
    the AUROC over repeated samples is what the Hanley-McNeil standard error says."""
    import numpy as np

    from noetic.calibration.metrics import auroc
    from noetic.calibration.rates import auroc_interval

    rng = np.random.default_rng(5)
    y = np.array([1.0] * 50 + [0.0] * 50)
    areas = [
        auroc(np.concatenate([rng.normal(1.19, 1, 50), rng.normal(0, 1, 50)]), y)
        for _ in range(1000)
    ]
    i = auroc_interval(0.8, 50, 50)
    assert (i.high - i.low) / (2 * 1.959964) == pytest.approx(float(np.std(areas)), rel=0.15)
