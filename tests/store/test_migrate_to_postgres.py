"""``noetic migrate --to postgresql://…``: a SQLite store copied whole, verified per table,
idempotent when run again; a target holding another store's rows refused before anything is
written, or, with ``--merge``, this store's rows brought in beside them, re-keyed where their ids
are taken (into PostgreSQL and into another SQLite store); and sessions moved between the
backends by export and import."""

from __future__ import annotations

import json
import os
import shutil
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


def migrate(home: Path, url: str, *more: str) -> tuple[int, dict]:
    env = {**os.environ, "NOETIC_HOME": str(home)}
    done = subprocess.run(
        [NOETIC, "migrate", "--to", url, *more, "--json"], capture_output=True, text=True, env=env
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
    rows = {t["table"]: t["source_rows"] for t in report["tables"]}
    assert rows["assessments"] == 3 and rows["recall_vectors"] == 1
    assert all(t["target_rows"] == t["source_rows"] for t in report["tables"])
    assert report["copied"] == sum(rows.values())
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
    before = counts(postgres_url)
    code, again = migrate(home, postgres_url)
    assert code == 1  # the team's new assessment is not in this store: refused
    assert (
        "already holds rows that are not this store's (assessments 1)"
        in (again["error"]["message"])
    )
    assert "--merge" in again["error"]["fix"]
    assert counts(postgres_url) == before  # nothing written: not even the laptop's new event


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
    assert (
        "neither a PostgreSQL URL nor the folder of a Noetic store"
        in (json.loads(done.stdout)["error"]["message"])
    )


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


COUNTED = ("sessions", "cascades", "assessments", "investigations", "goals", "events",
           "outcomes", "session_summaries", "recall_vectors", "nova_runs", "nova_turns",
           "observer_runs", "observations", "task_workspaces")  # fmt: skip


def counts(where: str | Path) -> dict[str, int]:
    """Rows per table of a store: a PostgreSQL URL or a SQLite store's folder."""
    with _opened(where) as store:
        return {t: store.conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in COUNTED}


def _opened(where: str | Path):
    from noetic.store.postgres import PostgresStore

    return Store(where, write_files=False) if isinstance(where, Path) else PostgresStore(where)


def _second_member(tmp_path: Path) -> tuple[Path, Path, str, str]:
    """Two members' stores: the first's ``fill``, and a second whose history began as a copy
    of it (the same session and task ids, the same integer ids) and went its own way: its
    session renamed to another agent, one more assessment. Returns (first, second, the
    session id they share, the second's export of it)."""
    first, second = tmp_path / "first", tmp_path / "second"
    with Store(first) as one:
        sid = fill(one)
    shutil.copytree(first, second)
    with Store(second) as two:
        with two.transaction() as c:
            c.execute("UPDATE sessions SET ai_id = 'desktop' WHERE id = ?", (sid,))
        a = Assessment.from_input("check", {"know": 0.3})
        two.add_assessment(sid, a, decide(a, T))
        return first, second, sid, two.export_session(sid)


def _merged_into(team: str | Path, first: Path, second: Path, sid: str, exported: dict) -> None:
    """The second member's store, merged into a team store holding the first's: refused
    without --merge (nothing written), then merged, verified, re-keyed, and idempotent."""
    assert migrate(first, str(team))[0] == 0
    before = counts(team)
    code, refused = migrate(second, str(team))
    assert code == 1, refused
    assert "already holds rows that are not this store's" in refused["error"]["message"]
    assert counts(team) == before
    code, merged = migrate(second, str(team), "--merge")
    assert code == 0, merged
    assert merged["merged"] is True and merged["verified"] is True
    by_table = {t["table"]: t for t in merged["tables"]}
    assert all(t["verified"] for t in merged["tables"])
    # the session's id was taken (by the first's, which differs): a new one; so was its task's
    assert by_table["sessions"]["rekeyed"] == 1 and by_table["cascades"]["rekeyed"] == 1
    # ids 1-3 are the first's there; the fourth is free
    assert by_table["assessments"]["rekeyed"] == 3 and by_table["assessments"]["copied"] == 4
    assert by_table["recall_vectors"]["rekeyed"] == 1  # an integer sequence is re-keyed too
    # rows the second holds exactly as the team does (not about the session) are not doubled
    assert by_table["observer_runs"]["copied"] == by_table["task_workspaces"]["copied"] == 0
    after = counts(team)
    assert after == {t: before[t] + by_table[t]["copied"] for t in COUNTED}
    assert after["assessments"] == 7 and after["sessions"] == 2
    with _opened(team) as store:
        [new_sid] = [r[0] for r in store.conn.execute(
            "SELECT id FROM sessions WHERE ai_id = 'desktop'")]  # fmt: skip
        assert new_sid != sid and new_sid.startswith("s_")
        doc = store.export_session(new_sid)
        assert len(doc["assessments"]) == 4 and len(doc["cascades"]) == 1
        assert doc["cascades"][0]["id"] != exported["cascades"][0]["id"]
        assert [a["assessment"] for a in doc["assessments"]] == [
            a["assessment"] for a in exported["assessments"]]  # fmt: skip
        assert store.export_session(sid)["session"]["ai_id"] == "laptop"  # the first's, as was
    code, again = migrate(second, str(team), "--merge")  # run again: nothing added twice
    assert code == 0 and again["copied"] == 0, again
    assert counts(team) == after


def test_a_second_member_merges_into_a_postgresql_store(tmp_path, postgres_url):
    first, second, sid, exported = _second_member(tmp_path)
    _merged_into(postgres_url, first, second, sid, exported)


def test_a_second_member_merges_into_a_sqlite_store(tmp_path):
    first, second, sid, exported = _second_member(tmp_path)
    team = tmp_path / "team"
    Store(team).close()
    _merged_into(team, first, second, sid, exported)
