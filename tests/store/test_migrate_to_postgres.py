"""``noetic migrate --to postgresql://…``: a SQLite store copied whole, verified per table,
idempotent when run again; and sessions moved between the backends by export and import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from noetic.assessment import Assessment, Thresholds, decide
from noetic.errors import StoreError
from noetic.events import Event, EventKind
from noetic.store import Store
from noetic.store.writer import writing_as

from ..conftest import uniform

pytest.importorskip("psycopg")
pytestmark = pytest.mark.postgres
T = Thresholds(confidence_threshold=0.7)
NOETIC = str(Path(sys.executable).with_name("noetic"))


def fill(store: Store) -> str:
    """A store with a row in every kind of table, awkward values included; the session, the
    task, the later assessments, the goal and one event written as the token alice."""
    from noetic.calibration.outcomes import add_outcome
    from noetic.store import agent_memory, nova, observations, summaries

    with writing_as("alice"):
        s = store.create_session(ai_id="laptop", profile="balanced", project="p")
        c = store.open_cascade(s.id, "naïve task ✓", profile="balanced")
    for value in (0.2, 0.55, 0.9):
        a = Assessment.from_input("check", {"vectors": uniform(value), "p_success": value})
        with writing_as("alice" if value > 0.5 else None):
            store.add_assessment(s.id, a, decide(a, T), cascade_id=c.id)
    store.add_investigation(s.id, cascade_id=c.id, note="grep", success=True)
    with writing_as("alice"):
        store.add_goal(s.id, "raise know", source="threshold", target_vector="know")
        store.append_event(Event(kind=EventKind.DECISION, session_id=s.id, data={"x": 1.5}))
    store.finish_cascade(c.id, "completed", {"calibration": {"classification": "good"}})
    add_outcome(
        store, session_id=s.id, cascade_id=c.id, ai_id="laptop", profile="balanced",
        domain=None, source="test", score=1.0, evidence="ok", predicted_preflight=0.5,
        predicted_check=None, predicted_vectors={"know": 0.5},
    )  # fmt: skip
    summary = summaries.RecallSummary(
        cascade_id=c.id, session_id=s.id, ai_id="laptop", project="p", task="naïve task ✓",
        ended_at="2026-01-01T00:00:00+00:00", pre={"know": 0.4}, post={"know": 0.8},
        delta={"know": 0.4}, learning=0.4, calibration="good", confidence_pre=0.4,
        confidence_post=0.8, notes="",
    )  # fmt: skip
    summaries.save_summary(store, summary)
    [row] = summaries.pending(store, "e")
    summaries.save_vectors(store, "e", [row], [bytes(range(256))])
    agent_memory.save_workspace(store, "task_1", "u", "q", "done", {"k": [1, 2]})
    run = nova.create_run(store, "why?", {"k": 1}, session_id=s.id)
    nova.save_turn(store, run, 1, "1:a:b", {"t": 1})
    observations.save_run(
        store,
        {"query": "q", "provider": None, "model": None, "stages": 1, "reason": "r",
         "model_calls": 1, "cache_hit": True, "stage_budget": 3, "answer": "a",
         "confidence": 0.5, "note": ""},
        [{"stage": 1, "layers": ["l"], "confidence": 0.5, "content": "c"}],
    )  # fmt: skip
    return s.id


def migrate(home: Path, url: str) -> tuple[int, dict]:
    env = {**os.environ, "NOETIC_HOME": str(home)}
    done = subprocess.run(
        [NOETIC, "migrate", "--to", url, "--json"], capture_output=True, text=True, env=env
    )
    return done.returncode, json.loads(done.stdout)


def test_a_store_is_copied_whole_verified_and_copied_again_only_what_is_new(tmp_path, postgres_url):
    from noetic.store.postgres import PostgresStore

    home = tmp_path / "laptop"
    with Store(home) as local:
        sid = fill(local)
        exported = local.export_session(sid)
    code, report = migrate(home, postgres_url)
    assert code == 0, report
    assert report["verified"] is True
    counts = {t["table"]: t["source_rows"] for t in report["tables"]}
    assert counts["assessments"] == 3 and counts["recall_vectors"] == 1
    assert all(t["target_rows"] == t["source_rows"] for t in report["tables"])
    assert report["copied"] == sum(counts.values())
    assert _writers(exported) == WRITERS
    with PostgresStore(postgres_url) as team:
        assert team.export_session(sid) == exported
        for table in ("sessions", "cascades", "goals"):
            assert [r[0] for r in team.conn.execute(f"SELECT written_by FROM {table}")] == ["alice"]
        a = Assessment.from_input("check", {"know": 0.5})
        added = team.add_assessment(sid, a, decide(a, T))  # new ids do not collide
        assert added.seq == 4
    with Store(home) as local:  # the laptop writes on: the next run copies only that
        local.append_event(Event(kind=EventKind.DECISION, data={"later": True}))
    code, again = migrate(home, postgres_url)
    assert code == 3  # a store error: the team's new assessment is not in this store
    assert "assessments: 3 rows here, 4 there" in again["error"]["message"]


def test_running_it_twice_changes_nothing_the_second_time(tmp_path, postgres_url):
    home = tmp_path / "laptop"
    with Store(home) as local:
        fill(local)
    assert migrate(home, postgres_url)[0] == 0
    with Store(home) as local:
        local.append_event(Event(kind=EventKind.DECISION, data={"later": True}))
    code, again = migrate(home, postgres_url)
    assert code == 0 and again["verified"]
    assert again["copied"] == 1  # the one new event
    code, third = migrate(home, postgres_url)
    assert code == 0 and third["copied"] == 0


def test_a_target_that_is_not_a_postgresql_url_is_refused(tmp_path):
    home = tmp_path / "laptop"
    Store(home).close()
    env = {**os.environ, "NOETIC_HOME": str(home)}
    done = subprocess.run(
        [NOETIC, "migrate", "--to", "/tmp/x", "--json"], capture_output=True, text=True, env=env
    )
    assert done.returncode == 1
    assert "is not a PostgreSQL URL" in json.loads(done.stdout)["error"]["message"]


def test_a_session_moves_between_backends_by_export_and_import(tmp_path, postgres_url):
    home = tmp_path / "laptop"
    with Store(home) as local:
        sid = fill(local)
    env = {**os.environ, "NOETIC_HOME": str(home)}
    out = tmp_path / "s.json"
    subprocess.run([NOETIC, "sessions", "export", sid, "--output", str(out)], check=True, env=env)
    imported = subprocess.run(
        [NOETIC, "sessions", "import", str(out), "--store", postgres_url, "--json"],
        capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert imported.returncode == 0, imported.stdout + imported.stderr
    back = subprocess.run(
        [NOETIC, "sessions", "export", sid, "--store", postgres_url],
        capture_output=True, text=True, env=env, check=True,
    )  # fmt: skip
    assert json.loads(back.stdout) == json.loads(out.read_text())
    assert _writers(json.loads(back.stdout)) == WRITERS


WRITERS = {
    "session": ["alice"],
    "cascades": ["alice"],
    "assessments": [None, "alice", "alice"],
    "investigations": [None],
    "goals": ["alice"],
    "events": ["alice"],
}


def _writers(doc: dict) -> dict:
    """Who wrote each part of a session document (the events: those naming anyone)."""
    found = {"session": [doc["session"]["written_by"]]}
    for part in ("cascades", "assessments", "investigations", "goals"):
        found[part] = [row["written_by"] for row in doc[part]]
    found["events"] = [e["written_by"] for e in doc["events"] if e["written_by"]]
    return found


def test_the_copy_refuses_a_source_that_is_not_sqlite(postgres_url, tmp_path):
    from noetic.store.copy import copy_store
    from noetic.store.postgres import PostgresStore

    with PostgresStore(postgres_url) as pg, pytest.raises(StoreError, match="SQLite store"):
        copy_store(pg, pg, target_name="x")
