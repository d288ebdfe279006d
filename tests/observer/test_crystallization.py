import pytest

from noetic.observer.crystallization import (
    ObserverSettings,
    Reason,
    check,
    layer_overlap,
    stage_budget,
)
from noetic.observer.observation import Observation

S = ObserverSettings()


def obs(stage, confidence, layers, predicted=None):
    return Observation(
        stage=stage,
        layers=tuple(layers),
        content="c",
        confidence=confidence,
        predicted_confidence=predicted,
    )


MANY = ("C01", "C02", "C03", "C04")


def reason(current, previous=None, pattern=False, budget=4, settings=S):
    return check(
        current, previous, pattern_match=pattern, stage_budget=budget, settings=settings
    ).reason


def test_high_confidence_boundary():
    assert reason(obs(1, 0.95, MANY)) is Reason.HIGH_CONFIDENCE
    assert reason(obs(1, 0.9499, MANY)) is None


def test_consistency_boundaries():
    prev = obs(1, 0.70, MANY)
    assert reason(obs(2, 0.7499, MANY), prev) is Reason.CONSISTENCY
    assert reason(obs(2, 0.75, MANY), prev) is None  # delta not below 0.05
    ten = tuple(f"C{i:02d}" for i in range(1, 11))
    nine_of_ten = tuple(f"C{i:02d}" for i in range(1, 10))
    assert layer_overlap(ten, nine_of_ten) == pytest.approx(0.9)
    assert reason(obs(2, 0.7, nine_of_ten), obs(1, 0.7, ten)) is None  # overlap not above 0.9
    assert reason(obs(2, 0.7, ten), obs(1, 0.7, ten)) is Reason.CONSISTENCY


def test_low_complexity_needs_two_simple_looks():
    assert reason(obs(1, 0.9, ["C02"])) is None  # one look is not enough
    assert reason(obs(2, 0.8, ["C02", "C07"]), obs(1, 0.9, ["C02"])) is Reason.LOW_COMPLEXITY
    assert reason(obs(2, 0.8, ["C02", "C07", "C08"]), obs(1, 0.9, ["C02"])) is None
    assert reason(obs(2, 0.8, ["C02"]), obs(1, 0.6, MANY)) is None


def test_pattern_match_and_max_stages():
    assert reason(obs(1, 0.6, MANY), pattern=True) is Reason.PATTERN_MATCH
    assert reason(obs(4, 0.6, MANY), obs(3, 0.8, MANY[:3])) is Reason.MAX_STAGES_REACHED
    assert reason(obs(2, 0.6, MANY), obs(1, 0.8, MANY[:3]), budget=2) is (Reason.MAX_STAGES_REACHED)


def test_reasons_are_checked_in_the_seed_order():
    prev = obs(1, 0.96, ["C02"])
    every = obs(4, 0.96, ["C02"])  # qualifies for all five
    assert reason(every, prev, pattern=True) is Reason.HIGH_CONFIDENCE
    assert reason(obs(4, 0.94, ["C02"]), obs(3, 0.94, ["C02"]), True) is Reason.CONSISTENCY
    assert reason(obs(4, 0.8, ["C02"]), obs(3, 0.9, ["C07"]), True) is Reason.LOW_COMPLEXITY
    assert reason(obs(4, 0.8, MANY), obs(3, 0.9, ["C07"]), True) is Reason.PATTERN_MATCH


def test_every_threshold_is_configurable():
    loose = ObserverSettings(high_confidence=0.8, low_complexity_layers=6)
    assert reason(obs(1, 0.85, MANY), settings=loose) is Reason.HIGH_CONFIDENCE
    assert reason(obs(2, 0.5, MANY), obs(1, 0.7, MANY), settings=loose) is (Reason.LOW_COMPLEXITY)


def test_adaptive_budget_from_the_explorers_prediction():
    adaptive = ObserverSettings(adaptive=True)
    assert stage_budget(obs(1, 0.6, MANY, predicted=0.97), adaptive) == 2
    assert stage_budget(obs(1, 0.6, MANY, predicted=0.8), adaptive) == 3
    assert stage_budget(obs(1, 0.6, MANY, predicted=0.5), adaptive) == 4
    assert stage_budget(obs(1, 0.6, MANY, predicted=0.97), S) == 4  # off by default
    assert stage_budget(obs(1, 0.6, MANY), adaptive) == 4  # no prediction given
