"""The drift monitor: a sequential test whose false-alarm rate holds however often it is checked."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.calibration.drift import detect_drift, detection_delay, monitor


def stream(n, seed, *, success=lambda p: p, confidence=lambda i, r: r.uniform(0.5, 0.95)):
    rng = random.Random(seed)
    p = [confidence(i, rng) for i in range(n)]
    return p, [float(rng.random() < min(1.0, max(0.0, success(c)))) for c in p]


@pytest.mark.parametrize(
    "success",
    [lambda p: p, lambda p: p - 0.15, lambda p: 0.6],
    ids=["calibrated", "steadily-overconfident", "confidence-says-nothing"],
)
def test_agents_that_never_change_rarely_raise_an_alarm(success):
    alarms = sum(bool(monitor(*stream(200, s, success=success), seed=s).alarms) for s in range(80))
    assert alarms <= 8  # the guarantee is 5%; 80 runs leave room for chance, not for a bias


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
    report = detect_drift(p, [float(rng.random() < 0.6) for _ in p], window=10)
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
    least = math.ceil(math.log(1 / alpha) / math.log(1.5))  # capital grows at most 1.5× a step
    assert all(a.at - a.since + 1 >= least for a in path.alarms)
    assert 0 <= path.e_value < 1 / alpha  # the current segment has not crossed
    assert monitor(p, y, alpha=alpha) == path  # seeded: the same stream gives the same report
    report = detect_drift(p, y, alpha=alpha)
    assert report.calibration_drift == any(a.at > len(p) - report.recent for a in path.alarms)
