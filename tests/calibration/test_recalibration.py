"""The recalibration map and the release gate's rule, as maths (``noetic.calibration
.recalibration``): monotone, within [0, 1], the identity with no data; in force only with a
held-out proof and a credible departure; the gate's fixed-sequence scan and its interval."""

import itertools
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.calibration import recalibration
from noetic.calibration.recalibration import (
    GRID,
    Fitted,
    Map,
    Prefixes,
    binom_cdf,
    clopper_pearson,
    fit,
    fit_logistic,
    min_released,
    recalibrate,
    release_gate,
    scan_start,
    sums_of,
)

probabilities = st.floats(0.0, 1.0, allow_nan=False)
pairs = st.lists(st.tuples(probabilities, st.sampled_from([0.0, 1.0])), max_size=80)
GRID_POINTS = [i / 50 for i in range(51)]


def split(data):
    return [p for p, _ in data], [y for _, y in data]


@given(pairs, st.sampled_from(["logistic", "isotonic"]))
def test_every_map_is_monotone_and_within_0_and_1(data, method):
    p, y = split(data)
    m = fit(sums_of(p, y), method) if data else Map()
    values = [m(x) for x in GRID_POINTS]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values))


@given(pairs)
def test_whatever_is_in_force_is_monotone_within_0_and_1_and_survives_storing(data):
    fitted = recalibrate(*split(data))
    again = Fitted.from_json(fitted.to_json())
    values = [again(x) for x in GRID_POINTS]
    assert values == [fitted(x) for x in GRID_POINTS]
    assert all(0.0 <= v <= 1.0 for v in values)
    assert all(a <= b + 1e-12 for a, b in itertools.pairwise(values))


@given(probabilities)
def test_with_no_data_the_map_is_the_identity(p):
    assert fit_logistic({}).a == 0.0 and fit_logistic({}).b == 1.0
    assert fit({}, "logistic")(p) == pytest.approx(p, abs=1.001e-3)  # logit kept finite
    nothing = recalibrate([], [])
    assert not nothing.in_force and nothing(p) == p and nothing.method == "identity"
    assert "15 needed" in nothing.reason


def test_an_overconfident_agent_gets_a_map_near_what_happened():
    rng = random.Random(5)
    y = [1.0 if rng.random() < 0.35 else 0.0 for _ in range(60)]
    fitted = recalibrate([0.8] * 60, y)
    assert fitted.in_force and fitted.method == "logistic"
    assert fitted(0.8) == pytest.approx(sum(y) / 60, abs=0.05)
    before, after = fitted.brier_before, fitted.brier_after
    assert before is not None and after is not None and after[0] < before[0]
    assert before[1] <= before[0] <= before[2]  # each with its interval
    assert fitted.departure is not None and fitted.departure > 7.38


def _gradient(sums, a, b):
    """The log-posterior's gradient at ``(a, b)`` (module docstring's prior), summed directly."""
    g1 = -a / recalibration.PRIOR_SD_A**2
    g2 = -(b - 1) / recalibration.PRIOR_SD_B**2
    for p, (w, _, s) in sums.items():
        x = recalibration._logit(p)
        r = s - w * recalibration._sigmoid(a + b * x)
        g1 += r
        g2 += r * x
    return g1, g2


weights = st.integers(1, 400)
groups = st.lists(
    st.tuples(probabilities, weights, st.floats(0.0, 1.0)), min_size=1, max_size=6
).map(lambda cells: {p: [float(w), p * w, round(share * w)] for p, w, share in cells})


@given(groups)
def test_the_logistic_fit_is_the_mode_of_the_posterior(sums):
    """Wherever the statements are (near 0 or 1 included) and however far the outcomes are
    from them, the fit ends at the mode: the gradient vanishes there, or, with the slope held
    at 0, vanishes along the intercept and points to a negative slope."""
    fitted = fit_logistic(sums)
    g1, g2 = _gradient(sums, fitted.a, fitted.b)
    scale = 1 + sum(w for w, _, _ in sums.values())
    assert abs(g1) < 1e-6 * scale
    if fitted.b > 0:
        assert abs(g2) < 1e-6 * scale
    else:
        assert fitted.b == 0.0 and g2 <= 1e-6 * scale


@pytest.mark.parametrize("stated", [0.9, 0.95, 0.99])
def test_an_agent_that_always_states_near_certainty_and_mostly_fails_is_corrected(stated):
    """One statement near 1, two outcomes in three failures: the map reads it as what
    happened (plain Newton steps from the identity overshoot there, back and forth)."""
    y = [1.0 if k % 3 == 0 else 0.0 for k in range(30)]
    fitted = recalibrate([stated] * 30, y)
    assert fitted.in_force and fitted.method == "logistic"
    assert fitted(stated) == pytest.approx(sum(y) / 30, abs=0.08)
    assert fitted.brier_after is not None and fitted.brier_before is not None
    assert fitted.brier_after[0] < fitted.brier_before[0] / 2


def test_an_agent_whose_statements_held_keeps_them():
    rng = random.Random(6)
    p = [round(rng.uniform(0.2, 0.95), 2) for _ in range(200)]
    y = [1.0 if rng.random() < q else 0.0 for q in p]
    fitted = recalibrate(p, y)
    assert not fitted.in_force and fitted(0.73) == 0.73
    assert "the stated values stand" in fitted.reason


def test_a_handful_of_outcomes_moves_the_map_only_a_little():
    """The prior holds the map near the identity until the outcomes outweigh it."""
    few = fit_logistic(sums_of([0.8] * 3, [0.0] * 3))
    many = fit_logistic(sums_of([0.8] * 300, [0.0] * 300))
    q_few = Map("logistic", (few.a, few.b))(0.8)
    q_many = Map("logistic", (many.a, many.b))(0.8)
    assert 0.2 < q_few < 0.8 and q_many < 0.02


def test_isotonic_is_tried_with_enough_outcomes_and_chosen_only_when_it_scores_better():
    rng = random.Random(8)
    # success jumps at 0.6: a step no two-parameter curve follows
    p = [round(rng.uniform(0.3, 0.9), 2) for _ in range(600)]
    y = [1.0 if rng.random() < (0.9 if q >= 0.6 else 0.1) else 0.0 for q in p]
    fitted = recalibrate(p, y)
    assert set(fitted.tried) == {"logistic", "isotonic"}
    assert fitted.in_force and fitted.method == "isotonic"
    assert fitted.tried["isotonic"] < fitted.tried["logistic"]


# the gate -------------------------------------------------------------------------------------


def test_binomial_tail_and_clopper_pearson_match_known_values():
    assert binom_cdf(0, 10, 0.1) == pytest.approx(0.9**10)
    assert binom_cdf(2, 5, 0.5) == pytest.approx(0.5)
    low, high = clopper_pearson(0, 10)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-6)
    low, high = clopper_pearson(5, 10)
    assert low == pytest.approx(0.187086, abs=1e-5) and high == pytest.approx(0.812914, abs=1e-5)
    assert min_released(0.10, 0.95) == 29  # 0.9^29 < 0.05 < 0.9^28


@given(
    st.lists(st.tuples(st.sampled_from(GRID), st.booleans()), max_size=150),
    st.sampled_from([0.05, 0.1, 0.2]),
)
def test_the_gate_is_the_lowest_threshold_of_an_unbroken_run_of_rejections(data, rate):
    p = [x for x, _ in data]
    y = [1.0 if ok else 0.0 for _, ok in data]
    gate = release_gate(p, y, rate, 0.95)
    need = scan_start(len(p), rate, 0.95)
    tested = []
    for lam in GRID:
        released = [yy for pp, yy in zip(p, y, strict=True) if pp >= lam - 1e-12]
        if len(released) < need and not tested:
            continue
        k = sum(1 for v in released if v < 0.5)
        tested.append((lam, binom_cdf(k, len(released), rate) <= 0.05, len(released), k))
    rejected = []
    for lam, reject, n, k in tested:
        if not reject:
            break
        rejected.append((lam, n, k))
    if not rejected:
        assert gate.threshold is None and "profile's threshold applies" in gate.reason
    else:
        lam, n, k = rejected[-1]
        assert gate.threshold == lam and gate.released == n and gate.failures == k
        assert gate.held == len(p) - n
        assert gate.low is not None and gate.high is not None
        assert gate.low <= k / n <= gate.high


def test_the_gate_keeps_its_promise_on_a_simulated_agent():
    """At most 10% of released tasks fail in at least 95% of runs (a calibrated agent)."""
    rng = random.Random(11)
    missed = 0
    for _ in range(200):
        p = [round(rng.uniform(0.5, 0.99), 2) for _ in range(400)]
        y = [1.0 if rng.random() < q else 0.0 for q in p]
        gate = release_gate(p, y, 0.10)
        if gate.threshold is not None:
            lam = gate.threshold
            true = [1 - q for q in GRID if q >= lam]  # stated is uniform over the grid above
            missed += sum(true) / len(true) > 0.10
    assert missed <= 10


def test_bad_gate_settings_are_refused():
    with pytest.raises(ValueError, match="in \\(0, 1\\)"):
        release_gate([0.9], [1.0], 0.0)
    with pytest.raises(ValueError, match="in \\(0, 1\\)"):
        release_gate([0.9], [1.0], 0.1, confidence=1.0)
    assert math.isclose(release_gate([], [], 0.1).held, 0)


def from_scratch(p, y):
    """``recalibrate`` with nothing kept from an earlier fit: every sum from the first outcome."""
    kept = recalibration.PREFIXES
    recalibration.PREFIXES = Prefixes()
    try:
        return recalibrate(p, y)
    finally:
        recalibration.PREFIXES = kept


stated_values = st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.9, 0.95]) | probabilities
outcomes = st.lists(
    st.tuples(stated_values, st.sampled_from([0.0, 0.5, 1.0])), min_size=15, max_size=120
)


@given(outcomes, outcomes, st.lists(st.tuples(st.booleans(), st.integers(0, 120)), max_size=25))
def test_a_refit_on_more_outcomes_is_exactly_the_fit_from_scratch(data, other, steps):
    """Refits carry the group sums on from the fit before (as the map is refitted after each
    outcome); whatever came before (fewer outcomes, more, another agent's), each is the fit a
    pass from the first outcome gives, to the last bit."""
    p, y = split(data)
    q, z = split(other)
    for mine, n in steps:
        a, b = (p, y) if mine else (q, z)
        n = min(n, len(a))
        assert recalibrate(a[:n], b[:n]) == from_scratch(a[:n], b[:n])
        assert recalibrate(a, b) == from_scratch(a, b)


def test_a_refit_after_each_outcome_of_an_agent_is_the_fit_from_scratch_isotonic_included():
    rng = random.Random(7)
    p = [rng.choice([0.6, 0.7, 0.8, 0.9]) for _ in range(170)]
    y = [float(rng.random() < 0.55) for _ in p]
    seen = set()
    for n in range(171):
        fitted = recalibrate(p[:n], y[:n])
        assert fitted == from_scratch(p[:n], y[:n])
        seen.update(fitted.tried)
    assert seen == {"logistic", "isotonic"}


@given(outcomes)
def test_group_sums_are_a_pass_in_order(data):
    p, y = split(data)
    sums = sums_of(p, y)
    assert list(sums) == list(dict.fromkeys(p))
    for key, (w, sp, sy) in sums.items():
        mine = [i for i, pi in enumerate(p) if pi == key]
        assert w == len(mine)
        assert sp == sum(p[i] for i in mine) and sy == sum(y[i] for i in mine)
