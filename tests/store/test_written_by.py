"""Every table whose rows a request can create records the token that wrote each row
(``written_by``, migrations m018 and m019), on both backends: a write made under
:func:`writing_as` records the name, one made outside it records nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from noetic.assessment import Assessment, Thresholds, decide
from noetic.events import Event, EventKind
from noetic.llm.base import LLMCall
from noetic.store.base import BaseStore
from noetic.store.writer import STAMPED, writing_as

from ..conftest import uniform

T = Thresholds(confidence_threshold=0.7)


def _session(store: BaseStore) -> str:
    return store.create_session(ai_id="a", profile="default").id


def _cascade(store: BaseStore) -> str:
    return store.open_cascade(_session(store), "t", profile="default").id


def _assessment(store: BaseStore) -> None:
    a = Assessment.from_input("preflight", uniform(0.8))
    store.add_assessment(_session(store), a, decide(a, T))


def _investigation(store: BaseStore) -> None:
    store.add_investigation(_session(store), note="grep")


def _goal(store: BaseStore) -> None:
    store.add_goal(_session(store), "raise know", source="threshold")


def _event(store: BaseStore) -> None:
    store.append_event(Event(kind=EventKind.DECISION, data={"x": 1}))


def _outcome(store: BaseStore) -> None:
    from noetic.calibration.outcomes import add_outcome

    cascade = store.get_cascade(_cascade(store))
    add_outcome(
        store, session_id=cascade.session_id, cascade_id=cascade.id, ai_id="a",
        profile="default", domain=None, source="test", score=1.0, evidence="",
        predicted_preflight=0.5, predicted_check=None, predicted_vectors={},
    )  # fmt: skip


def _adjustment(store: BaseStore) -> None:
    from noetic.calibration.outcomes import add_adjustment

    add_adjustment(store, profile="default", field="confidence_weight", old=1.0, new=0.9,
                   reason="r", evidence={})  # fmt: skip


def _llm_call(store: BaseStore) -> None:
    from noetic.store.llm_calls import record_llm_call

    record_llm_call(store, LLMCall(provider="p", model="m", attempt=1, outcome="ok"))


def _observer_run(store: BaseStore) -> None:
    from noetic.store.observations import save_run

    save_run(
        store,
        {"query": "q", "provider": None, "model": None, "stages": 2, "reason": "r",
         "model_calls": 2, "cache_hit": False, "stage_budget": 3, "answer": "a",
         "confidence": 0.5, "note": ""},
        [{"stage": 1, "layers": ["l"], "confidence": 0.5, "content": "c"},
         {"stage": 2, "layers": ["l", "m"], "confidence": 0.6, "content": "d"}],
    )  # fmt: skip


def _nova_run(store: BaseStore) -> None:
    from noetic.store import nova

    run = nova.create_run(store, "why?", {"k": 1})
    nova.save_turn(store, run, 1, "1:a:b", {"t": 1})


def _checkpoint(store: BaseStore) -> None:
    from noetic.store.checkpoints import make_checkpoint, write_checkpoint

    cp = make_checkpoint("s_1", None, "preflight", uniform(0.5), "proceed", None)
    assert write_checkpoint(store, cp, None) == "sqlite"


def _eval_run(store: BaseStore) -> None:
    from noetic.store import evals

    evals.create_run(
        store, task_set="t", provider=None, model=None, ai_id="a", profile=None, settings={},
        problems=[({"task_id": "p/0"}, None)],
    )  # fmt: skip


# What each write adds to which stamped tables.
WRITES: dict[str, tuple[Callable[[BaseStore], Any], tuple[str, ...]]] = {
    "session": (_session, ("sessions",)),
    "task": (_cascade, ("sessions", "cascades")),
    "assessment": (_assessment, ("sessions", "assessments")),
    "investigation": (_investigation, ("sessions", "investigations")),
    "goal": (_goal, ("sessions", "goals")),
    "event": (_event, ("events",)),
    "outcome": (_outcome, ("sessions", "cascades", "outcomes")),
    "adjustment": (_adjustment, ("profile_adjustments",)),
    "model call": (_llm_call, ("llm_calls",)),
    "observer run": (_observer_run, ("observer_runs", "observations")),
    "nova run": (_nova_run, ("nova_runs", "nova_turns")),
    "checkpoint": (_checkpoint, ("checkpoints",)),
    "eval run": (_eval_run, ("eval_runs", "eval_tasks")),
}


def _writers(store: BaseStore, table: str) -> list[str | None]:
    rows = store.conn.execute(f"SELECT written_by FROM {table}").fetchall()
    return sorted((r[0] for r in rows), key=lambda w: w or "")


def test_every_stamped_table_has_a_write_here():
    assert {t for _, tables in WRITES.values() for t in tables} == STAMPED


@pytest.mark.parametrize("kind", list(WRITES))
def test_a_write_under_a_token_records_it_and_one_outside_records_nothing(store, kind):
    write, tables = WRITES[kind]
    write(store)
    with writing_as("alice"):
        write(store)
    for table in tables:
        found = _writers(store, table)
        half = len(found) // 2
        assert found == [None] * half + ["alice"] * half and half >= 1, (table, found)


def test_a_row_that_names_its_writer_keeps_it():
    from noetic.store.writer import stamped

    assert stamped("sessions", {"id": "s", "written_by": "bob"}) == {"id": "s", "written_by": "bob"}
    with writing_as("alice"):
        assert stamped("sessions", {"id": "s", "written_by": "bob"})["written_by"] == "bob"
        assert stamped("sessions", {"id": "s", "written_by": None})["written_by"] == "alice"
        assert "written_by" not in stamped("pattern_cache", {"id": 1})
    assert "written_by" not in stamped("sessions", {"id": "s"})


def test_an_export_carries_who_wrote_each_row_and_an_import_keeps_it(store, open_store, tmp_path):
    with writing_as("alice"):
        sid = _session(store)
        cascade = store.open_cascade(sid, "t", profile="default")
        a = Assessment.from_input("preflight", uniform(0.8))
        store.add_assessment(sid, a, decide(a, T), cascade_id=cascade.id)
        store.add_goal(sid, "raise know", source="threshold")
        store.append_event(Event(kind=EventKind.DECISION, session_id=sid, data={}))
    a = Assessment.from_input("check", uniform(0.9))
    store.add_assessment(sid, a, decide(a, T), cascade_id=cascade.id)
    store.add_investigation(sid, note="grep")
    with writing_as("bob"):
        store.add_investigation(sid, note="read")
    doc = store.export_session(sid)
    assert doc["session"]["written_by"] == "alice"
    assert [c["written_by"] for c in doc["cascades"]] == ["alice"]
    assert [x["written_by"] for x in doc["assessments"]] == ["alice", None]
    assert [x["written_by"] for x in doc["investigations"]] == [None, "bob"]
    assert [x["written_by"] for x in doc["goals"]] == ["alice"]
    assert [e["written_by"] for e in doc["events"]] == ["alice"]
    other = open_store(tmp_path / "other")
    with writing_as("carol"):  # an import keeps the names the document gives, None included
        other.import_session(doc)
    assert other.export_session(sid) == doc
    assert other.get_session(sid).written_by == "alice"


def test_an_export_without_writers_imports_as_written_by_nobody(store, open_store, tmp_path):
    """A document from before exports carried ``written_by`` reads as written by no token."""
    sid = _session(store)
    _assessment_in(store, sid)
    doc = store.export_session(sid)
    for part in ("cascades", "assessments", "investigations", "goals", "events"):
        for row in doc[part]:
            row.pop("written_by")
    doc["session"].pop("written_by")
    other = open_store(tmp_path / "other")
    other.import_session(doc)
    again = other.export_session(sid)
    assert again["session"]["written_by"] is None
    assert [x["written_by"] for x in again["assessments"]] == [None]


def _assessment_in(store: BaseStore, sid: str) -> None:
    a = Assessment.from_input("preflight", uniform(0.8))
    store.add_assessment(sid, a, decide(a, T))
