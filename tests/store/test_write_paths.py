"""What the eval's writes hand back is what the store holds, on both backends, built from the
values just written rather than read and checked again: an event's row, an assessment's
record."""

import json

import pytest

from noetic.assessment import Assessment, Thresholds, decide
from noetic.events import Event, EventBus, EventKind, PhaseCompleted, RunFinished
from noetic.vectors import VECTOR_NAMES

from ..conftest import uniform

T = Thresholds(confidence_threshold=0.7)


def test_an_events_row_is_its_dump_without_the_event_dumped_again(store, monkeypatch):
    session = store.create_session(ai_id="a", profile="balanced")
    bus = EventBus()
    bus.subscribe(store.append_event)
    sent = [
        bus.emit(EventKind.PHASE_COMPLETED, session_id=session.id,
                 data=PhaseCompleted(phase="ACT", ms=1.5)),
        bus.emit(EventKind.RUN_FINISHED, engine="eval", session_id=session.id, cascade_id="c_1",
                 data=RunFinished(status="completed", summary={"n": (1, 2), "é": None})),
    ]  # fmt: skip
    # data a subscriber-built event may hold that JSON cannot: dumped as the event dumps it
    sent.append(Event(kind=EventKind.RUN_FINISHED, session_id=session.id,
                      data={"status": "done", "kinds": (EventKind.DECISION,)}))  # fmt: skip
    expected = [e.model_dump(mode="json") for e in sent]

    def refused(self, **kw):
        raise AssertionError("the event was dumped again")

    monkeypatch.setattr(Event, "model_dump", refused)
    store.append_event(sent[-1])
    monkeypatch.undo()
    rows = store.events(session_id=session.id)
    got = [r.model_dump(mode="json") for r in rows if r.kind != EventKind.SESSION_STARTED]
    assert [{k: g[k] for k in e} for g, e in zip(got, expected, strict=True)] == expected
    raw = store.conn.execute("SELECT at, data FROM events ORDER BY id").fetchall()
    assert [r[0] for r in raw][-3:] == [e["at"] for e in expected]
    assert [json.loads(r[1]) for r in raw][-3:] == [e["data"] for e in expected]


def assessment(vectors, **more):
    return Assessment.from_input("preflight", {"vectors": vectors, **more})


@pytest.mark.parametrize(
    "given",
    [
        uniform(0.8) | {"p_success": 0.7},  # as models reply: the canonical order, floats
        dict(reversed(uniform(0.6).items())),  # another order: read back in the canonical one
        {**uniform(0.8), "know": 1, "p_success": 1},  # whole numbers: read back as floats
    ],
)
def test_an_assessments_record_is_the_one_read_back(store, given):
    session = store.create_session(ai_id="a", profile="balanced")
    given = dict(given)
    p_success = given.pop("p_success", None)
    a = assessment(given, p_success=p_success, note="n", rationales={"know": "r"})
    recorded = store.add_assessment(session.id, a, decide(a, T))
    (read,) = store.assessments(session_id=session.id)
    assert recorded == read
    assert list(recorded.assessment.vectors) == list(read.assessment.vectors)
    assert json.dumps(recorded.model_dump(mode="json")) == json.dumps(read.model_dump(mode="json"))
    # in the canonical order (whole numbers are floats once checked): not checked again
    assert (recorded.assessment is a) == (list(given) == [v for v in VECTOR_NAMES if v in given])


def test_a_finished_task_is_handed_back_as_written_without_reading_it_again(store, backend):
    session = store.create_session(ai_id="a", profile="balanced")
    opened = store.open_cascade(session.id, "t", profile="balanced")
    statements = []
    if backend == "sqlite":
        store.conn.set_trace_callback(statements.append)
    result = {"eval": {"run": "e_1", "ids": (1, 2)}, "n": 1.5, "é": None}
    try:
        closed = store.finish_cascade(opened.id[:10], "completed", result)
    finally:
        if backend == "sqlite":
            store.conn.set_trace_callback(None)
    assert closed == store.get_cascade(opened.id)
    assert closed.status == "completed" and closed.result["eval"]["ids"] == [1, 2]
    if backend == "sqlite":
        after = statements[next(i for i, s in enumerate(statements) if s.startswith("UPDATE")) :]
        assert not [s for s in after if s.startswith("SELECT")]
