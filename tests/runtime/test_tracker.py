import pytest

from noetic.assessment import Action, Assessment
from noetic.errors import NotFoundError, ValidationError, WorkflowError
from noetic.events import EventKind
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker

from ..conftest import uniform


@pytest.fixture
def tracker(store):
    return Tracker(store, ProfileRegistry(store.home / "profiles"))


def a(phase, value=0.8, **kw):
    """An assessment at ``value`` that clears the universal gates unless told otherwise."""
    gates = {"engagement": max(value, 0.8), "coherence": max(value, 0.8)}
    return Assessment.from_input(phase, uniform(value, **{**gates, **kw}))


@pytest.mark.subprocess
def test_a_full_cascade_is_recorded_in_order(tracker, store):
    session, profile = tracker.bootstrap(ai_id="claude", ai_model="claude-sonnet-4")
    assert profile.name == "high_reasoning_collaborative"
    first = tracker.preflight(session.id, "refactor the parser", a("preflight", 0.5))
    assert first.decision.action is Action.INVESTIGATE
    tracker.investigate(session.id, "read the parser", tool="read_file")
    second = tracker.check(session.id, Assessment.from_input("check", {"know": 0.95}))
    assert second.assessment.assessment.vectors["do"] == 0.5  # carried forward
    assert "do" in second.assessment.assessment.carried
    done = tracker.postflight(session.id, a("postflight", 0.8))
    assert done.cascade.status == "completed"
    assert done.calibration.delta["know"] == pytest.approx(0.3)
    assert [r.seq for r in store.assessments(session_id=session.id)] == [1, 2, 3]
    kinds = [e.kind for e in store.events(session_id=session.id)]
    assert kinds[0] == EventKind.SESSION_STARTED
    assert kinds.count(EventKind.ASSESSMENT_RECORDED) == 3
    assert EventKind.INVESTIGATION in kinds and kinds[-1] == EventKind.RUN_FINISHED
    assert store.investigations(session_id=session.id)[0].round == 1


def test_check_before_preflight_is_a_workflow_error(tracker):
    session, _ = tracker.bootstrap()
    with pytest.raises(WorkflowError, match="needs a PREFLIGHT first") as info:
        tracker.check(session.id, Assessment.from_input("check", {"know": 0.5}))
    assert "noetic preflight" in info.value.fix


@pytest.mark.subprocess
def test_postflight_twice_is_refused(tracker):
    session, _ = tracker.bootstrap()
    tracker.preflight(session.id, "t", a("preflight"))
    tracker.postflight(session.id, a("postflight"))
    with pytest.raises(WorkflowError, match="already completed"):
        tracker.postflight(session.id, a("postflight"))


@pytest.mark.subprocess
def test_preflight_while_a_task_is_open_needs_abandon(tracker, store):
    session, _ = tracker.bootstrap()
    first = tracker.preflight(session.id, "one", a("preflight"))
    with pytest.raises(WorkflowError, match="still open"):
        tracker.preflight(session.id, "two", a("preflight"))
    tracker.preflight(session.id, "two", a("preflight"), abandon_open=True)
    assert store.get_cascade(first.cascade.id).status == "abandoned"


def test_wrong_phase_and_empty_inputs(tracker):
    session, _ = tracker.bootstrap()
    with pytest.raises(ValidationError, match="expected a preflight"):
        tracker.preflight(session.id, "t", a("postflight"))
    with pytest.raises(ValidationError, match="task description is empty"):
        tracker.preflight(session.id, "  ", a("preflight"))
    with pytest.raises(WorkflowError):
        tracker.investigate(session.id, "note")
    with pytest.raises(NotFoundError, match="unknown session"):
        tracker.preflight("s_nope", "t", a("preflight"))


@pytest.mark.subprocess
def test_critical_domain_requires_evidence_at_postflight(tracker):
    session, profile = tracker.bootstrap(domain="medical")
    assert profile.name == "critical_domain"
    tracker.preflight(session.id, "dose check", a("preflight", 0.95))
    with pytest.raises(ValidationError, match="requires evidence"):
        tracker.postflight(session.id, a("postflight", 0.95))
    evidenced = Assessment.from_input(
        "postflight",
        {k: {"score": v, "evidence": "ref"} for k, v in uniform(0.95).items()},
    )
    assert tracker.postflight(session.id, evidenced).cascade.status == "completed"


@pytest.mark.subprocess
def test_exploratory_asks_for_a_learning_note(tracker):
    session, _ = tracker.bootstrap(profile="exploratory")
    tracker.preflight(session.id, "survey", a("preflight"))
    with pytest.raises(ValidationError, match="what was learned"):
        tracker.postflight(session.id, a("postflight"))
    noted = Assessment.from_input("postflight", {"vectors": uniform(0.8), "note": "learned X"})
    assert tracker.postflight(session.id, noted).calibration is not None


@pytest.mark.subprocess
def test_state_says_what_to_do_next(tracker):
    session, _ = tracker.bootstrap(profile="balanced")
    assert "start a task" in tracker.state(session.id).next_step
    tracker.preflight(session.id, "t", a("preflight", 0.5))
    assert "INVESTIGATE" in tracker.state(session.id).next_step
    tracker.check(session.id, a("check", 0.9))
    assert "postflight" in tracker.state(session.id).next_step


@pytest.mark.sqlite_only
def test_a_preflight_reads_no_assessments_of_the_task_it_opens(tracker, store):
    """The task a PREFLIGHT opens has none before it: nothing is read back to find them."""
    session, _ = tracker.bootstrap(ai_id="a")
    statements = []
    store.conn.set_trace_callback(statements.append)
    try:
        recorded = tracker.preflight(session.id, "t", a("preflight"))
    finally:
        store.conn.set_trace_callback(None)
    assert not [s for s in statements if s.startswith("SELECT") and "FROM assessments" in s]
    assert [r.id for r in store.assessments(session_id=session.id)] == [recorded.assessment.id]
    assert recorded.assessment.seq == 1


def test_each_recorded_event_is_what_its_checked_payload_dumps(tracker, store):
    """The tracker's payloads, built from values checked already, hold what a payload checked
    from the same fields would: each stored event's data reads back as its kind's payload and
    dumps as stored (numbers as numbers of the field's type, lists as lists)."""
    from noetic.events import PAYLOADS, Event

    session, _ = tracker.bootstrap(ai_id="a")
    emitted: list[Event] = []
    tracker.bus.subscribe(emitted.append)
    tracker.preflight(
        session.id, "t", Assessment.from_input("preflight", {**uniform(1), "p_success": 1})
    )
    tracker.check(session.id, Assessment.from_input("check", {"know": 1}))
    tracker.postflight(session.id, a("postflight", 0.8))
    stored = store.events(session_id=session.id)[1:]
    assert [e.kind for e in stored] == [e.kind for e in emitted]
    for event, record in zip(emitted, stored, strict=True):
        payload = PAYLOADS[event.kind].model_validate(record.data)
        assert payload.model_dump(mode="json") == record.data == event.data
        assert event == Event(
            **{
                n: getattr(event, n)
                for n in ("kind", "at", "engine", "session_id", "cascade_id", "data")
            }
        )
    recorded = [e.data for e in stored if e.kind == EventKind.ASSESSMENT_RECORDED]
    assert [type(d["confidence"]) for d in recorded] == [float] * 3
    assert recorded[0]["p_success"] == 1.0 and recorded[1]["carried"]
