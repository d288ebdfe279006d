"""The session file built from what changed since the last drain equals a full export."""

import tempfile

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from noetic.assessment import Assessment, Thresholds, decide
from noetic.events import Event, EventKind
from noetic.store import Store
from noetic.store.derived_files import json_line, session_json_path

from ..conftest import uniform

T = Thresholds(confidence_threshold=0.7)
OPS = st.sampled_from(
    ["assess", "event", "investigate", "goal", "open", "finish", "replace", "replace-elsewhere"]
)


def exported(store: Store, sid: str) -> bytes:
    return json_line(store.export_session(sid))


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(ops=st.lists(OPS, max_size=25), notes=st.lists(st.text(max_size=40), min_size=1))
@example(ops=["assess", "assess", "replace", "assess"], notes=["n"])
@example(ops=["assess", "replace-elsewhere", "assess"], notes=["n"])
def test_the_document_read_incrementally_is_the_full_export_after_any_writes(ops, notes):
    with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store, Store(tmp) as elsewhere:
        sid = store.create_session(ai_id="a", profile="balanced").id
        cascade = store.open_cascade(sid, "task", profile="balanced")
        earlier = store.export_session(sid)
        for i, op in enumerate(ops):
            note = notes[i % len(notes)]
            if op == "assess":
                a = Assessment.from_input("check", {"vectors": uniform(0.7), "note": note})
                store.add_assessment(sid, a, decide(a, T), cascade_id=cascade.id)
            elif op == "event":
                store.append_event(Event(kind=EventKind.DECISION, session_id=sid, data={"n": note}))
            elif op == "investigate":
                store.add_investigation(sid, cascade_id=cascade.id, note=note)
            elif op == "goal":
                store.add_goal(sid, note or "g", source="threshold")
            elif op == "open":
                cascade = store.open_cascade(sid, note or "t", profile="balanced")
            elif op == "finish":
                store.finish_cascade(cascade.id, "completed", {"note": note})
            elif op == "replace":  # fewer assessments, under new ids
                store.import_session(earlier, replace=True)
            else:  # another store (process) replaces it, as many assessments, other notes
                doc = store.export_session(sid)
                for rec in doc["assessments"]:
                    rec["assessment"]["note"] += "!"
                elsewhere.import_session(doc, replace=True)
            if op.startswith("replace"):
                cascade = store.cascades(sid)[-1]  # those opened since are gone
            if i % 3 == 0:
                earlier = store.export_session(sid)
            assert store.session_document(sid) == exported(store, sid)
        store.flush_files()
        assert session_json_path(store.home, sid).read_bytes() == exported(store, sid)


@pytest.mark.sqlite_only  # counts SQLite's statements
def test_a_store_reads_only_the_rows_added_since_its_last_document(store):
    sid = store.create_session(ai_id="a", profile="balanced").id
    for _ in range(3):
        a = Assessment.from_input("check", {"vectors": uniform(0.7)})
        store.add_assessment(sid, a, decide(a, T))
    store.session_document(sid)
    queries: list[str] = []
    store.conn.set_trace_callback(queries.append)
    a = Assessment.from_input("check", {"vectors": uniform(0.6)})
    store.add_assessment(sid, a, decide(a, T))
    queries.clear()
    document = store.session_document(sid)
    store.conn.set_trace_callback(None)
    reads = [q for q in queries if "FROM assessments" in q and "COUNT" not in q]
    assert len(reads) == 1 and "seq > 3" in reads[0]
    assert document == exported(store, sid)


def test_the_cascade_export_matches_the_validated_records(store):
    sid = store.create_session(ai_id="a", profile="balanced").id
    c = store.open_cascade(sid, "t", profile="balanced", provider="p")
    store.finish_cascade(c.id, "completed", {"x": [1, {"y": None}]})
    store.open_cascade(sid, "u", profile="balanced")
    validated = [c.model_dump(mode="json") for c in store.cascades(sid)]
    assert store.export_session(sid)["cascades"] == validated


@pytest.mark.sqlite_only  # the session files a local store writes
def test_a_task_opened_by_a_process_that_writes_nothing_else_is_in_the_document(tmp_path):
    with Store(tmp_path) as store:
        sid = store.create_session(ai_id="a", profile="balanced").id
    with Store(tmp_path) as store:
        task = store.open_cascade(sid, "opened alone", profile="balanced")
    with Store(tmp_path, write_files=False) as store:
        assert session_json_path(tmp_path, sid).read_bytes() == exported(store, sid)
    assert task.id.encode() in session_json_path(tmp_path, sid).read_bytes()
