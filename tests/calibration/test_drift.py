"""The drift monitor: a sequential test whose false-alarm rate holds however often it is checked."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.calibration.drift import (
    MAX_PAYOFF,
    PRIOR,
    advance,
    conformal_pvalue,
    detect_drift,
    detection_delay,
    least_outcomes,
    monitor,
    payoffs,
    start_weight,
)


def stream(n, seed, *, success=lambda p: p, confidence=lambda i, r: r.uniform(0.5, 0.95)):
    rng = random.Random(seed)
    p = [confidence(i, rng) for i in range(n)]
    return p, [float(rng.random() < min(1.0, max(0.0, success(c)))) for c in p]


@pytest.mark.parametrize(
    "success",
    [lambda p: p, lambda p: p - 0.15, lambda p: 0.6],
    ids=["calibrated", "steadily-overconfident", "confidence-says-nothing"],
)
@pytest.mark.slow
def test_agents_that_never_change_rarely_raise_an_alarm(success):
    runs = 300
    alarms = sum(
        bool(monitor(*stream(200, s, success=success), seed=s).alarms) for s in range(runs)
    )
    # the guarantee is 5% over any horizon; 2.5 binomial standard errors of slack for chance
    assert alarms / runs <= 0.05 + 2.5 * math.sqrt(0.05 * 0.95 / runs)


def test_a_large_shift_is_detected_and_named():
    caught = 0
    for s in range(30):
        p, y = stream(100, s)
        p2, y2 = stream(100, 100 + s, success=lambda c: c - 0.4)
        path = monitor(p + p2, y + y2)
        after = [a for a in path.alarms if a.at > 100]
        caught += bool(after) and after[0].direction == "overconfident"
    assert caught >= 24


def test_a_rise_in_success_is_underconfidence():
    p, y = stream(100, 1, confidence=lambda i, r: r.uniform(0.3, 0.5))
    p2, y2 = stream(100, 2, confidence=lambda i, r: r.uniform(0.3, 0.5), success=lambda c: c + 0.5)
    alarms = [a for a in monitor(p + p2, y + y2).alarms if a.at > 100]
    assert alarms and alarms[0].direction == "underconfident"


def test_confidence_rising_while_outcomes_do_not_is_sycophancy():
    caught = 0
    for s in range(20):
        rng = random.Random(s)
        p = [0.6] * 100 + [0.95] * 100
        y = [float(rng.random() < 0.6) for _ in p]
        alarms = [a for a in monitor(p, y).alarms if a.at > 100]
        caught += bool(alarms) and alarms[0].direction == "overconfident" and alarms[0].sycophancy
    assert caught >= 14
    rng = random.Random(7)
    p = [0.6] * 100 + [0.95] * 40
    report = detect_drift(p, [float(rng.random() < 0.6) for _ in p])
    assert report.calibration_drift and report.sycophancy_drift
    assert "sycophancy" in report.reason


def test_the_report_states_its_guarantee_and_the_last_alarm():
    p, y = stream(60, 4)
    report = detect_drift(p, y)
    assert not report.calibration_drift and report.alarms == []
    assert "at most 0.05" in report.guarantee and report.alpha == 0.05
    assert report.reason.startswith("no drift")
    strict = detect_drift(p, y, alpha=0.01)
    assert "at most 0.01" in strict.guarantee


def test_detection_delay_is_simulated_on_the_agents_own_confidences():
    d = detection_delay(0.4, runs=40, horizon=150)
    assert d.detected > 0.5 and d.median is not None and 0 < d.median <= 150
    assert detection_delay(0.0, runs=20, horizon=50).detected <= 0.2
    own = detection_delay(0.4, runs=20, confidences=[0.9] * 30, horizon=150)
    assert own.runs == 20 and own.shift == 0.4


@pytest.mark.parametrize(
    ("p", "y", "kwargs"),
    [([0.5, 1.2], [1, 0], {}), ([0.5], [1, 0], {}), ([0.5, math.nan], [1, 0], {}),
     ([0.5], [1.0], {"alpha": 0.0}), ([0.5], [1.0], {"alpha": 1.5})],
)  # fmt: skip
def test_bad_input_is_refused(p, y, kwargs):
    with pytest.raises(ValueError):
        monitor(p, y, **kwargs)


pairs = st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), max_size=300)


@settings(max_examples=60, deadline=None)
@given(pairs, st.sampled_from([0.01, 0.05, 0.2]))
def test_the_monitor_is_well_formed_on_any_stream(data, alpha):
    p = [a for a, _ in data]
    y = [b for _, b in data]
    path = monitor(p, y, alpha=alpha)
    ats = [a.at for a in path.alarms]
    assert ats == sorted(set(ats)) and all(1 <= a <= len(p) for a in ats)
    assert path.since == (ats[-1] + 1 if ats else 1)
    least = least_outcomes(alpha)  # every bet winning its most at every step
    assert all(a.at - a.since + 1 >= least for a in path.alarms)
    assert 0 <= path.e_value < 1 / alpha  # the current segment has not crossed
    assert monitor(p, y, alpha=alpha) == path  # seeded: the same stream gives the same report
    report = detect_drift(p, y, alpha=alpha)
    assert report.calibration_drift == any(a.at > len(p) - report.recent for a in path.alarms)


def _mean_over_uniform(f, b, points=4000):
    """The average of ``f(u)`` over u uniform on (0, 1), by the midpoint rule on each side of
    ``b`` (where the payoffs change shape)."""
    total = 0.0
    for lo, hi in ((0.0, b), (b, 1.0)):
        step = (hi - lo) / points
        total += step * sum(f(lo + (k + 0.5) * step) for k in range(points))
    return total


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.floats(1e-4, 1 - 1e-4))
def test_every_bet_is_fair_for_an_agent_that_does_not_change(b):
    for k in range(len(PRIOR)):
        assert _mean_over_uniform(lambda u, k=k: payoffs(u, b)[k], b) == pytest.approx(1, abs=1e-6)
    for u in (0.0, b / 2, b, (1 + b) / 2, 1 - 1e-12):
        assert all(0 < f <= MAX_PAYOFF * (1 + 1e-12) for f in payoffs(u, b))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(0, 50), min_size=len(PRIOR), max_size=len(PRIOR)),
    st.integers(1, 5000),
    st.floats(1e-3, 1 - 1e-3),
)
@pytest.mark.slow
def test_the_capital_is_a_martingale_for_an_agent_that_does_not_change(capital, t, b):
    started = sum(start_weight(j) for j in range(1, t))
    before = sum(capital) + 1 - started

    def after(u):
        paid, now = advance(capital, started, t, u, b)
        return sum(paid) + 1 - now

    assert _mean_over_uniform(after, b, points=1000) == pytest.approx(before, rel=1e-6)
    assert after(0.5) >= 0


@pytest.mark.slow
def test_the_start_weights_sum_to_one():
    partial = sum(start_weight(j) for j in range(1, 100_001))
    assert 0.998 < partial < 1
    assert math.fsum(start_weight(j) for j in range(1, 2_000_001)) == pytest.approx(1, abs=1e-4)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([-0.5, -0.2, 0.0, 0.1, 0.3]), min_size=1, max_size=30))
def test_conformal_pvalues_of_exchangeable_residuals_are_uniform(bag):
    """Whichever residual of the bag comes last (each equally likely) and whatever the draw,
    the p-value's distribution is uniform: the intervals it is spread over tile (0, 1)."""
    n = len(bag)
    spans = []
    for i, r in enumerate(bag):
        seen = sorted(bag[:i] + bag[i + 1 :])
        lo, hi = conformal_pvalue(seen, r, 0.0), conformal_pvalue(seen, r, 1.0)
        spans.append((lo, hi))
    cuts = [k / 97 for k in range(98)]
    for x in cuts:  # P(u <= x) averaged over which element is last, u uniform on its span
        mass = sum(min(max((x - lo) / (hi - lo), 0), 1) for lo, hi in spans) / n
        assert mass == pytest.approx(x, abs=1e-9)


def test_least_outcomes_grows_as_alpha_shrinks():
    assert least_outcomes(0.2) <= least_outcomes(0.05) <= least_outcomes(0.001)
    with pytest.raises(ValueError):
        payoffs(0.5, 0.0)
