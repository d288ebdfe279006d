import json
import re
import sqlite3

import pytest

from noetic.assessment import Assessment, Thresholds, decide
from noetic.errors import MigrationError, NotFoundError, StoreError, ValidationError
from noetic.events import Event, EventKind
from noetic.store import Store, resolve_home
from noetic.store import migrations as m
from noetic.store.derived_files import atomic_write_json, reflex_path, session_json_path
from noetic.vectors import VECTOR_NAMES

from ..conftest import uniform

try:
    import psycopg

    REFUSED: tuple[type[Exception], ...] = (sqlite3.IntegrityError, psycopg.Error)
except ImportError:  # without the postgres extra only the SQLite store runs
    REFUSED = (sqlite3.IntegrityError,)

T = Thresholds(confidence_threshold=0.7)


def record(store, session_id, phase="preflight", value=0.8, cascade_id=None):
    a = Assessment.from_input(phase, uniform(value))
    return store.add_assessment(session_id, a, decide(a, T), cascade_id=cascade_id)


def test_migration_names_are_unique_and_rising():
    names = [fn.__name__ for fn in m.MIGRATIONS]
    numbers = [int(re.match(r"m(\d{3})_", n).group(1)) for n in names]
    assert len(set(names)) == len(names)
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


@pytest.mark.sqlite_only  # the file, pragmas, session files
def test_a_blank_database_reaches_the_schema(store):
    cols = {r[1] for r in store.conn.execute("PRAGMA table_info(assessments)")}
    assert set(VECTOR_NAMES) <= cols
    assert {"confidence", "action", "phase", "seq", "cascade_id"} <= cols
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "cascades", "assessments", "goals", "events", "investigations"} <= tables
    applied = [r[0] for r in store.conn.execute("SELECT name FROM schema_migrations")]
    assert applied == [fn.__name__ for fn in m.MIGRATIONS]
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_reopening_applies_nothing_twice(tmp_path):
    Store(tmp_path / "s").close()
    with Store(tmp_path / "s") as again:
        assert m.migrate(again.conn) == []


def test_a_database_from_a_newer_noetic_is_refused(tmp_path):
    Store(tmp_path / "s").close()
    conn = sqlite3.connect(tmp_path / "s" / "noetic.db")
    conn.execute("INSERT INTO schema_migrations VALUES ('m999_future', 'x')")
    conn.commit()
    conn.close()
    with pytest.raises(MigrationError, match="m999_future"):
        Store(tmp_path / "s")


def test_a_corrupt_database_file_is_a_clear_store_error(tmp_path):
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "noetic.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="cannot open the store database") as info:
        Store(tmp_path / "s")
    assert "rebuild --from-files" in info.value.fix


@pytest.mark.sqlite_only  # the file, pragmas, session files
def test_every_assessment_lands_in_sqlite_json_and_a_reflex_log(store):
    s = store.create_session(ai_id="claude/opus", profile="balanced")
    c = store.open_cascade(s.id, "task", profile="balanced")
    rec = record(store, s.id, cascade_id=c.id)
    assert not session_json_path(store.home, s.id).exists()  # written at flush or close
    assert store.flush_files() == 3  # the session, its task, the assessment: one rewrite serves all
    doc = json.loads(session_json_path(store.home, s.id).read_text())
    assert doc["assessments"][0]["assessment"]["vectors"]["know"] == 0.8
    log = reflex_path(store.home, "claude/opus", rec.created_at, s.id)
    [frame] = [json.loads(line) for line in log.read_text().splitlines()]
    assert frame["task"] == "task" and frame["decision"]["action"] == rec.decision.action
    assert frame["seq"] == 1 and frame["phase"] == "preflight"
    assert log.parent.parent.name == "claude_opus" and log.parent.name == rec.created_at[:10]


def test_a_write_marks_a_sessions_files_behind_once(tmp_path):
    store = Store(tmp_path)  # (PostgreSQL keeps no session files)
    s = store.create_session(ai_id="claude/opus", profile="balanced")
    c = store.open_cascade(s.id, "task", profile="balanced")
    store.flush_files()

    def event(phase):
        return Event(kind=EventKind.PHASE_COMPLETED, session_id=s.id, cascade_id=c.id,
                     data={"phase": phase, "ms": 1.0})  # fmt: skip

    def backlog():
        rows = store.conn.execute("SELECT session_id, assessment_id FROM file_backlog ORDER BY id")
        return [tuple(r) for r in rows]

    with store.unit():  # one write: five events and an assessment of one session
        for phase in ("ACT", "TEST", "ACT", "TEST", "ACT"):
            store.append_event(event(phase))
        rec = record(store, s.id, cascade_id=c.id)
    assert backlog() == [(s.id, None), (s.id, rec.id)]
    store.append_event(event("TEST"))  # a write of its own marks them again
    assert backlog() == [(s.id, None), (s.id, rec.id), (s.id, None)]
    store.flush_files()
    assert json.loads(session_json_path(store.home, s.id).read_text()) == store.export_session(s.id)
    assert backlog() == []
    store.close()


def test_export_import_round_trips_exactly(store, open_store, tmp_path):
    s = store.create_session(ai_id="a", profile="balanced", domain="code", project="p")
    c = store.open_cascade(s.id, "task", profile="balanced")
    record(store, s.id, cascade_id=c.id)
    store.add_investigation(s.id, cascade_id=c.id, note="n", tool="grep", success=True)
    store.add_goal(s.id, "raise know", source="threshold", target_vector="know")
    store.append_event(Event(kind=EventKind.DECISION, session_id=s.id, data={"x": 1}))
    store.finish_cascade(c.id, "completed", {"calibration": {"classification": "x"}})
    doc = store.export_session(s.id)
    with open_store(tmp_path / "other") as other:
        other.import_session(doc)
        assert other.export_session(s.id) == doc
        with pytest.raises(ValidationError, match="already exists"):
            other.import_session(doc)
        other.import_session(doc, replace=True)
        assert other.export_session(s.id) == doc


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.update(format="other"), "not a Noetic session export"),
        (lambda d: d.update(version=99), "unsupported export version"),
        (lambda d: d.pop("session"), "missing"),
        (lambda d: d["assessments"][0]["assessment"]["vectors"].update(know=7), "outside"),
        (lambda d: d["assessments"][0].update(session_id="s_other"), "another session"),
    ],
)
def test_importing_a_damaged_export_fails_cleanly(store, tmp_path, mutate, message):
    s = store.create_session(ai_id="a", profile="balanced")
    record(store, s.id)
    doc = store.export_session(s.id)
    mutate(doc)
    with Store(tmp_path / "other") as other:
        with pytest.raises(ValidationError, match=message):
            other.import_session(doc)
        assert other.list_sessions() == []


def test_events_are_append_only(store):
    store.append_event(Event(kind=EventKind.DECISION, data={"m": 1}))
    with pytest.raises(REFUSED, match="append-only"):
        store.conn.execute("UPDATE events SET kind = 'x'")
    with pytest.raises(REFUSED, match="append-only"):
        store.conn.execute("DELETE FROM events")
    assert len(store.events()) == 1


def test_session_lookup_by_prefix_and_unknown(store):
    s = store.create_session(ai_id="a", profile="balanced")
    assert store.get_session(s.id[:6]).id == s.id
    with pytest.raises(NotFoundError, match="unknown session"):
        store.get_session("s_doesnotexist")
    with pytest.raises(NotFoundError):
        store.get_session("%")  # LIKE wildcards are escaped


def test_a_nova_run_is_found_by_prefix_and_a_bad_id_names_a_nova_run(store):
    from noetic.store import nova

    first, second = (nova.create_run(store, "Which auth?", {}) for _ in range(2))
    assert nova.get_run(store, first[:-1])["id"] == first
    assert nova.get_run(store, second)["id"] == second
    with pytest.raises(ValidationError, match="Nova run id prefix 'n_' is ambiguous") as info:
        nova.get_run(store, "n_")
    assert info.value.value == "n_"
    with pytest.raises(ValidationError, match="the Nova run id is empty"):
        nova.get_run(store, "  ")
    with pytest.raises(NotFoundError, match="no Nova run 'n_nope'"):
        nova.get_run(store, "n_nope")


@pytest.mark.sqlite_only  # the file, pragmas, session files
def test_rebuild_restores_deleted_files(store):
    s = store.create_session(ai_id="a", profile="balanced")
    for _ in range(3):
        record(store, s.id, phase="check")
    for path in list(store.home.rglob("*.json*")):
        path.unlink()
    assert store.rebuild_files() == {"sessions": 1, "reflex_logs": 3}
    doc = json.loads(session_json_path(store.home, s.id).read_text())
    assert len(doc["assessments"]) == 3
    [log] = (store.home / "reflex_logs").rglob("*.jsonl")
    assert [json.loads(line)["seq"] for line in log.read_text().splitlines()] == [1, 2, 3]


def test_files_can_be_switched_off_and_rebuilt_later(tmp_path):
    with Store(tmp_path / "s", write_files=False) as quiet:
        s = quiet.create_session(ai_id="a", profile="balanced")
        record(quiet, s.id)
        assert not list(quiet.home.rglob("*.json*"))
        assert quiet.rebuild_files()["reflex_logs"] == 1


def test_atomic_write_leaves_the_old_file_when_serialisation_fails(tmp_path):
    target = tmp_path / "x.json"
    atomic_write_json(target, {"ok": 1})
    with pytest.raises(TypeError):
        atomic_write_json(target, {"bad": object()})
    assert json.loads(target.read_text()) == {"ok": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_resolve_home_order(tmp_path, monkeypatch):
    monkeypatch.delenv("NOETIC_HOME")
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    deep = project / "src" / "pkg"
    deep.mkdir(parents=True)
    assert resolve_home(cwd=deep) == project / ".noetic"
    (deep / ".noetic").mkdir()
    assert resolve_home(cwd=deep) == deep / ".noetic"
    monkeypatch.setenv("NOETIC_HOME", str(tmp_path / "env"))
    assert resolve_home(cwd=deep) == tmp_path / "env"
    assert resolve_home(tmp_path / "explicit", cwd=deep) == tmp_path / "explicit"


def test_the_fast_export_matches_the_validated_records(store):
    s = store.create_session(ai_id="a", profile="balanced")
    c = store.open_cascade(s.id, "t", profile="balanced")
    a = Assessment.from_input(
        "check",
        {"vectors": {"know": {"score": 0.4, "rationale": "r", "evidence": "e"}}, "action": "RESET"},
    )
    store.add_assessment(s.id, a, decide(a, T), cascade_id=c.id)
    record(store, s.id, cascade_id=c.id)
    exported = store.export_session(s.id)["assessments"]
    validated = [
        r.model_dump(mode="json", exclude={"id"}) for r in store.assessments(session_id=s.id)
    ]
    assert exported == validated


def test_an_open_task_is_read_from_the_sqlite_file_as_the_store_reads_it(tmp_path):
    # a test run's PostToolUse asks the SQLite file alone whether there is a task to record
    # for; anything it cannot read so is left to the store
    from noetic.store.reads import open_task_in

    with Store(tmp_path / "a store?#%20") as store:
        s = store.create_session(ai_id="a", profile="balanced")
        assert open_task_in(store.home, s.id) == (True, False)
        assert open_task_in(store.home, "s_not_here") == (False, False)
        c = store.open_cascade(s.id, "task", profile="balanced")
        assert open_task_in(store.home, s.id) == (True, True)
        assert store.open_cascade_of(s.id) is not None
        store.finish_cascade(c.id, "completed", {})
        assert open_task_in(store.home, s.id) == (True, False)
        assert store.open_cascade_of(s.id) is None
    assert open_task_in(tmp_path / "nowhere", s.id) is None  # no file
    (tmp_path / "noetic.db").write_bytes(b"not a database, " * 64)
    assert open_task_in(tmp_path, s.id) is None


def test_the_newest_decision_is_read_as_plain_values_as_the_models_give_it(store):
    from noetic.store.reads import newest_decision

    s = store.create_session(ai_id="a", profile="balanced")
    c = store.open_cascade(s.id, "task", profile="balanced")
    assert newest_decision(store, c.id) is None
    record(store, s.id, "preflight", 0.81, cascade_id=c.id)
    record(store, s.id, "check", 0.42, cascade_id=c.id)
    last = store.assessments(cascade_id=c.id)[-1]
    expected = (last.assessment.phase.value, last.decision.action.value, last.decision.confidence)
    assert newest_decision(store, c.id) == expected
    assert expected[0] == "check"
