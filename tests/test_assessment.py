import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.assessment import (
    COHERENCE_MINIMUM,
    ENGAGEMENT_GATE,
    Action,
    Assessment,
    Phase,
    Thresholds,
    decide,
    gaps,
)
from noetic.errors import ValidationError
from noetic.vectors import VECTOR_NAMES, oriented

from .conftest import uniform

FIXED = Thresholds(confidence_threshold=0.70)
DYNAMIC = Thresholds(confidence_threshold=None, dynamic_fallback_threshold=0.7)


def pre(**vectors) -> Assessment:
    return Assessment(phase=Phase.PREFLIGHT, vectors=vectors)


def test_from_input_accepts_flat_nested_and_envelope_forms():
    flat = Assessment.from_input("preflight", uniform(0.8))
    nested = Assessment.from_input(
        "preflight",
        {
            k: {"score": v, "rationale": f"why {k}", "evidence": "seen"}
            for k, v in uniform(0.8).items()
        },
    )
    envelope = Assessment.from_input(
        "preflight",
        {"vectors": uniform(0.8), "recommended_action": "proceed", "note": "ready"},
    )
    assert flat.vectors == nested.vectors == envelope.vectors
    assert nested.rationales["know"] == "why know"
    assert nested.evidence["impact"] == "seen"
    assert envelope.recommended_action is Action.PROCEED
    assert envelope.note == "ready"


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ([0.5] * 13, "must be a JSON object"),
        ({"vectors": [1, 2]}, "vectors must be an object"),
        ({**uniform(0.5), "know": 1.5}, "outside"),
        ({**uniform(0.5), "know": float("nan")}, "finite"),
        ({**uniform(0.5), "wisdom": 0.5}, "unknown vector"),
        ({"vectors": uniform(0.5), "mood": "good"}, "unknown assessment fields"),
        ({"vectors": {**uniform(0.5), "know": {"rationale": "x"}}}, "has no 'score'"),
        ({"vectors": uniform(0.5), "action": "PANIC"}, "unknown action"),
        ({"vectors": uniform(0.5), "rationales": {"wisdom": "x"}}, "unknown vectors"),
    ],
)
def test_bad_input_is_rejected_with_a_named_problem(data, message):
    with pytest.raises(ValidationError, match=message):
        Assessment.from_input("preflight", data)


@pytest.mark.parametrize("phase", ["preflight", "postflight"])
def test_full_phases_need_all_thirteen_and_name_the_missing(phase):
    vectors = uniform(0.7)
    del vectors["impact"], vectors["signal"]
    with pytest.raises(ValidationError, match="missing: signal, impact"):
        Assessment.from_input(phase, vectors)


def test_check_may_be_partial_and_says_what_is_missing():
    partial = Assessment.from_input("check", {"know": 0.9, "uncertainty": 0.2})
    assert not partial.complete
    assert "know" not in partial.missing and "do" in partial.missing
    assert len(partial.missing) == 11
    with pytest.raises(ValidationError, match="at least one vector"):
        Assessment.from_input("check", {})


def test_carry_forward_fills_only_missing_and_records_them():
    before = Assessment.from_input("preflight", uniform(0.5))
    check = Assessment.from_input("check", {"know": 0.9}).carry_forward(before)
    assert check.complete
    assert check.vectors["know"] == 0.9
    assert check.vectors["do"] == 0.5
    assert "know" not in check.carried and len(check.carried) == 12


def test_engagement_gate_boundary():
    at_gate = decide(pre(**uniform(0.9, engagement=ENGAGEMENT_GATE)), FIXED)
    below = decide(pre(**uniform(0.9, engagement=ENGAGEMENT_GATE - 0.001)), FIXED)
    assert at_gate.action is Action.PROCEED
    assert below.action is Action.CLARIFY and below.rule == "engagement_gate"


def test_coherence_minimum_boundary():
    at_min = decide(pre(**uniform(0.9, coherence=COHERENCE_MINIMUM)), FIXED)
    below = decide(pre(**uniform(0.9, coherence=COHERENCE_MINIMUM - 0.001)), FIXED)
    assert at_min.action is Action.PROCEED
    assert below.action is Action.RESET and below.rule == "coherence_minimum"


def test_universal_gates_outrank_everything_else():
    a = Assessment(
        phase=Phase.PREFLIGHT,
        vectors=uniform(0.9, engagement=0.3, coherence=0.2),
        recommended_action="PROCEED",
    )
    assert decide(a, DYNAMIC).action is Action.CLARIFY


@pytest.mark.parametrize("stop", [Action.CLARIFY, Action.DELEGATE, Action.RESET])
def test_an_agent_that_says_stop_is_never_overruled(stop):
    a = Assessment(phase=Phase.PREFLIGHT, vectors=uniform(0.95), recommended_action=stop)
    result = decide(a, FIXED)
    assert result.action is stop and result.rule == "agent_stop"


def test_clarity_and_capability_thresholds_come_from_the_profile():
    t = Thresholds(confidence_threshold=0.5, clarify_below=0.6, delegate_below=0.4)
    assert decide(pre(**uniform(0.9, clarity=0.6)), t).action is Action.PROCEED
    assert decide(pre(**uniform(0.9, clarity=0.59)), t).action is Action.CLARIFY
    assert decide(pre(**uniform(0.9, do=0.4)), t).action is Action.PROCEED
    assert decide(pre(**uniform(0.9, do=0.39)), t).action is Action.DELEGATE


def test_threshold_boundary_proceeds_at_equality():
    a = pre(**uniform(0.8))
    c = decide(a, FIXED).confidence
    assert decide(a, Thresholds(confidence_threshold=c)).action is Action.PROCEED
    below = decide(a, Thresholds(confidence_threshold=c + 0.001))
    assert below.action is Action.INVESTIGATE
    assert "below the threshold" in below.reason


def test_dynamic_threshold_follows_the_agent_then_the_fallback():
    middling = uniform(0.55, engagement=0.8, coherence=0.8)
    unsure = Assessment(phase=Phase.PREFLIGHT, vectors=middling, recommended_action="PROCEED")
    assert decide(unsure, DYNAMIC).action is Action.PROCEED
    assert decide(unsure, FIXED).action is Action.INVESTIGATE
    silent = pre(**middling)
    assert decide(silent, DYNAMIC).action is Action.INVESTIGATE
    assert decide(silent, DYNAMIC).threshold == 0.7


def test_gaps_list_weak_vectors_weakest_first_with_inverted_ones_oriented():
    found = gaps(uniform(0.9, know=0.3, context=0.5, uncertainty=0.8), 0.6)
    assert found == ("uncertainty", "know", "context")


@given(st.fixed_dictionaries({v: st.floats(0, 1) for v in VECTOR_NAMES}))
def test_decide_is_total_over_valid_vectors(vectors):
    result = decide(pre(**vectors), FIXED)
    assert result.action in Action
    assert 0 <= result.confidence <= 1


def test_below_threshold_without_gaps_names_the_lowest_not_a_fixed_vector():
    strict = Thresholds(confidence_threshold=0.95, gap_threshold=0.6)
    vectors = uniform(0.8, know=0.7, context=0.72, state=0.74, uncertainty=0.15)
    decision = decide(pre(**vectors), strict)
    assert decision.action is Action.INVESTIGATE and decision.gaps == ()
    assert decision.reason.endswith(
        "no vector below the gap threshold 0.60; lowest: know, context, state"
    )
    weak = decide(pre(**uniform(0.8, know=0.3, uncertainty=0.9)), strict)
    assert weak.reason.endswith("weakest: uncertainty, know")


@given(st.fixed_dictionaries({v: st.floats(0, 1) for v in VECTOR_NAMES}))
def test_an_investigate_reason_only_names_vectors_that_are_gaps_or_lowest(vectors):
    decision = decide(pre(**vectors), FIXED)
    if decision.rule == "threshold" and decision.action is Action.INVESTIGATE:
        named = decision.reason.rpartition(": ")[2].split(", ")
        ranked = [n for _, n in sorted((oriented(n, s), n) for n, s in vectors.items())]
        assert named == (list(decision.gaps[:3]) or ranked[:3])


def test_p_success_and_the_review_kind_travel_in_the_envelope():
    a = Assessment.from_input(
        "postflight", {"vectors": uniform(0.8), "p_success": 0.35, "review": "Adversarial"}
    )
    assert a.p_success == 0.35 and a.review == "adversarial"
    assert Assessment.from_input("preflight", {"vectors": uniform(0.8)}).p_success is None
    assert Assessment.from_input("check", {"vectors": {"know": 0.5}, "p_success": 1}).p_success == 1


def test_a_flat_mapping_may_state_p_success_and_a_note_beside_the_vectors():
    a = Assessment.from_input("preflight", uniform(0.8) | {"p_success": 0.7, "note": "n"})
    assert a.p_success == 0.7 and a.note == "n"
    assert a.vectors == Assessment.from_input("preflight", uniform(0.8)).vectors
    with pytest.raises(ValidationError, match=r"p_success is 1\.5"):
        Assessment.from_input("preflight", uniform(0.8) | {"p_success": 1.5})
    with pytest.raises(ValidationError, match="unknown vector 'p_sucess'"):
        Assessment.from_input("preflight", uniform(0.8) | {"p_sucess": 0.7})


@pytest.mark.parametrize(
    "value, message",
    [
        (1.2, "p_success is 1.2, outside [0, 1]"),
        (-0.1, "outside [0, 1]"),
        (float("nan"), "outside [0, 1]"),
        (float("inf"), "outside [0, 1]"),
        (True, "must be a probability in [0, 1], got True"),
        ("0.8", "must be a probability in [0, 1], got '0.8'"),
        ([0.8], "must be a probability"),
    ],
)
def test_a_bad_p_success_is_refused_by_name(value, message):
    with pytest.raises(ValidationError, match=message.replace("[", r"\[").replace("]", r"\]")):
        Assessment.from_input("preflight", {"vectors": uniform(0.8), "p_success": value})


@given(st.floats(allow_nan=True, allow_infinity=True))
def test_p_success_is_kept_exactly_when_in_range_and_refused_otherwise(value):
    try:
        a = Assessment.from_input("preflight", {"vectors": uniform(0.8), "p_success": value})
    except ValidationError as exc:
        assert exc.field == "p_success" and not 0.0 <= value <= 1.0
    else:
        assert a.p_success == value and 0.0 <= value <= 1.0


def test_only_a_postflight_records_a_review_kind():
    with pytest.raises(ValidationError, match="only a POSTFLIGHT records a review kind"):
        Assessment.from_input("preflight", {"vectors": uniform(0.8), "review": "adversarial"})
    with pytest.raises(ValidationError, match="unknown review kind 'harsh'"):
        Assessment.from_input("postflight", {"vectors": uniform(0.8), "review": "harsh"})
