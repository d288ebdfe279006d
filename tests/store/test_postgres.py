"""What only the PostgreSQL store has: its schema and migrations, many writers on many
connections, a connection killed mid-write, the server restarted under load, and the modules
beside the store (outcomes, model calls, summaries, agent memory, Nova, the observer) on it.

Every test here runs against the real server the tests start (see tests/_postgres.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

psycopg = pytest.importorskip("psycopg")

from noetic.assessment import Assessment, Thresholds, decide  # noqa: E402
from noetic.errors import InvalidValueError, MigrationError, StoreError  # noqa: E402
from noetic.events import Event, EventKind  # noqa: E402
from noetic.store import migrations as m  # noqa: E402
from noetic.store.location import safe_url  # noqa: E402
from noetic.store.postgres import PostgresStore  # noqa: E402

pytestmark = pytest.mark.postgres
T = Thresholds(confidence_threshold=0.7)
WRITER = Path(__file__).with_name("_pg_writer.py")


def assess(store: PostgresStore, sid: str, value: float = 0.8, cascade_id: str | None = None):
    a = Assessment.from_input("check", {"know": value, "do": value})
    return store.add_assessment(sid, a, decide(a, T), cascade_id=cascade_id)


@pytest.fixture
def pg(postgres_url: str, tmp_path: Path):
    with PostgresStore(postgres_url, home=tmp_path / "home") as store:
        yield store


def test_every_migration_is_applied_once_and_recorded(postgres_url, tmp_path):
    with PostgresStore(postgres_url) as store:
        names = [r[0] for r in store.conn.execute("SELECT name FROM schema_migrations")]
        columns = {
            r[0]
            for r in store.conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = "
                "'assessments' AND table_schema = current_schema()"
            )
        }
    assert sorted(names) == sorted(fn.__name__ for fn in m.MIGRATIONS)
    assert {"know", "uncertainty", "seq", "note", "p_success"} <= columns
    with PostgresStore(postgres_url) as again:  # reopening applies nothing
        count = again.conn.execute("SELECT count(*) FROM schema_migrations").fetchone()[0]
    assert count == len(m.MIGRATIONS)


def test_a_schema_from_a_newer_noetic_is_refused_and_left_alone(postgres_url):
    PostgresStore(postgres_url).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_migrations VALUES ('m999_future', 'x')")
    with pytest.raises(MigrationError, match="newer Noetic") as info:
        PostgresStore(postgres_url)
    assert "m999_future" in info.value.message
    assert "upgrade noetic" in (info.value.fix or "")


def test_an_unreachable_server_is_a_clear_store_error_without_the_password():
    from tests._postgres import free_port

    url = f"postgresql://someone:s3cret@127.0.0.1:{free_port()}/nothing"
    started = time.monotonic()
    with pytest.raises(StoreError, match="cannot reach the PostgreSQL store") as info:
        PostgresStore(url)
    assert "s3cret" not in info.value.message and "***" in info.value.message
    assert time.monotonic() - started < 30
    assert safe_url("postgresql://u@h/db") == "postgresql://u@h/db"


def test_rows_compare_byte_by_byte_as_in_sqlite(pg):
    ids = []
    for _ in range(3):
        ids.append(pg.create_session(ai_id="a", profile="balanced").id)
    listed = [r[0] for r in pg.conn.execute("SELECT id FROM sessions ORDER BY id")]
    assert listed == sorted(ids)  # Python's order is code-point order, as SQLite's BINARY
    assert pg.get_session(ids[0][:8]).id in ids  # a prefix finds it (or is ambiguous)


def test_events_refuse_truncate_too(pg):
    pg.append_event(Event(kind=EventKind.DECISION, data={"k": 1}))
    with pytest.raises(psycopg.Error, match="append-only"):
        pg.conn.execute("TRUNCATE events")
    assert len(pg.events()) == 1


def test_a_killed_backend_mid_transaction_applies_nothing_and_the_next_write_works(
    pg, postgres_url
):
    sid = pg.create_session(ai_id="victim", profile="balanced").id
    killed = pytest.raises(StoreError, match="nothing of it was applied")
    with psycopg.connect(postgres_url, autocommit=True) as admin, killed, pg.transaction() as c:
        c.execute(
            "INSERT INTO events (at, kind, session_id, data) VALUES (?, ?, ?, ?)",
            ("now", "decision", sid, "{}"),
        )
        pid = c.execute("SELECT pg_backend_pid()").fetchone()[0]
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        c.execute("SELECT 1")
    assert pg.events(session_id=sid) == []
    record = assess(pg, sid)  # the pool replaced the dead connection
    assert record.seq == 1


def test_a_write_is_two_round_trips_and_returns_what_it_stored(postgres_url, tmp_path):
    """The BEGIN and the write's statements go in one batch, the COMMIT in a second; no write
    reads back a row its insert could return."""
    from noetic.calibration.outcomes import add_outcome, list_outcomes
    from noetic.store import requests
    from tests._round_trips import Relay

    ids = iter(range(100))

    def with_request_id() -> object:
        requests.start(store, f"r{next(ids)}", "check", {})
        return assess(store, sid, cascade_id=cid)

    with Relay(postgres_url) as relay, PostgresStore(relay.url, home=tmp_path) as store:
        sid = store.create_session(ai_id="rt", profile="balanced").id
        cid = store.open_cascade(sid, "t", profile="balanced").id
        writes = {
            "session": lambda: store.create_session(ai_id="rt2", profile="balanced"),
            "assessment": lambda: assess(store, sid, cascade_id=cid),
            "assessment with a request id": with_request_id,
            "event": lambda: store.append_event(
                Event(kind=EventKind.DECISION, session_id=sid, data={"k": 1})
            ),
            "outcome": lambda: add_outcome(
                store,
                session_id=sid,
                cascade_id=cid,
                ai_id="rt",
                profile="balanced",
                domain=None,
                source="test",
                score=0.5,
                evidence="e",
                predicted_preflight=None,
                predicted_check=0.5,
                predicted_vectors={"know": 0.5},
            ),
        }
        trips, made = {}, {}
        for name, write in writes.items():
            for _ in range(3):  # the same on every call, prepared statements or not
                relay.reset()
                made[name] = write()
                trips.setdefault(name, set()).add(relay.trips)
        # with a request id: its lookup (is it a retry?), then the write, the record in it
        assert trips == {name: {3 if "request" in name else 2} for name in writes}
        assert made["assessment"] in store.assessments(session_id=sid)
        assert made["outcome"] in list_outcomes(store)
        assert made["outcome"].predicted_vectors == {"know": 0.5}


def test_a_connection_the_server_ended_in_the_pool_is_replaced_before_a_write(pg, postgres_url):
    sid = pg.create_session(ai_id="idle", profile="balanced").id
    pids = {pg.conn.execute("SELECT pg_backend_pid()").fetchone()[0] for _ in range(3)}
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        for pid in pids:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        deadline = time.monotonic() + 30
        while (
            time.monotonic() < deadline
            and admin.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY(%s)", (list(pids),)
            ).fetchone()[0]
        ):
            time.sleep(0.02)
    assert [assess(pg, sid).seq for _ in range(3)] == [1, 2, 3]  # no write failed


def test_a_write_that_fails_after_queueing_statements_applies_none_of_them(pg):
    sid = pg.create_session(ai_id="undo", profile="balanced").id
    insert = "INSERT INTO events (at, kind, session_id, data) VALUES (?, ?, ?, ?)"
    with pytest.raises(RuntimeError, match="the body failed"), pg.transaction() as c:
        c.execute(insert, ("t", "decision", sid, "{}"))  # queued, not yet sent
        raise RuntimeError("the body failed")
    with pytest.raises(psycopg.errors.UndefinedColumn), pg.transaction() as c:
        c.execute(insert, ("t", "decision", sid, "{}"))
        c.execute("UPDATE sessions SET no_such_column = 1 WHERE id = ?", (sid,))
    with pytest.raises(psycopg.errors.DivisionByZero), pg.transaction() as c:
        assess(pg, sid)  # another write meanwhile, on another connection
        c.execute(insert, ("t", "decision", sid, "{}"))
        c.execute("SELECT 1 / 0").fetchone()  # reading sends the batch, which fails
    assert pg.events(session_id=sid) == []
    assert [a.seq for a in pg.assessments(session_id=sid)] == [1]
    assert assess(pg, sid).seq == 2  # the connections are clean for the next write


def test_one_request_id_written_on_two_machines_at_once_is_applied_once(pg, postgres_url, tmp_path):
    """The second call's record of the request waits for the first's transaction, then finds
    it and rolls its own write back, with the error that says so."""
    from noetic.store import requests

    sid = pg.create_session(ai_id="twice", profile="balanced").id
    outcome: list[str] = []

    def second(other: PostgresStore) -> None:
        requests.start(other, "same", "check", {"v": 1})
        try:
            assess(other, sid)
        except StoreError as exc:
            outcome.append(exc.message)

    with PostgresStore(postgres_url, home=tmp_path / "other") as other:
        requests.start(pg, "same", "check", {"v": 1})
        with pg.transaction() as c:
            appended = c.execute(
                "INSERT INTO events (at, kind, session_id, data) VALUES (?, ?, ?, ?) RETURNING id",
                ("t", "decision", sid, "{}"),
            )
            assert appended.fetchall()  # the request's record went with it: on the server,
            # not yet committed
            thread = threading.Thread(target=second, args=(other,))
            thread.start()
            thread.join(timeout=0.5)
            assert thread.is_alive()  # waiting for this transaction to end
        thread.join(timeout=30)
    assert outcome and "applied meanwhile by another call" in outcome[0]
    assert pg.assessments(session_id=sid) == []  # the second call's write was rolled back
    assert len(pg.events(session_id=sid)) == 1
    assert pg.conn.execute("SELECT count(*) FROM requests").fetchone()[0] == 1


def test_sixteen_writer_processes_lose_nothing_and_number_the_session_contiguously(
    pg, postgres_url
):
    sid = pg.create_session(ai_id="team", profile="balanced").id
    rounds = 12
    procs = [
        subprocess.Popen(
            [sys.executable, str(WRITER), postgres_url, sid, str(rounds), str(i)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(16)
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    seqs = [r.seq for r in pg.assessments(session_id=sid)]
    assert seqs == list(range(1, 16 * rounds + 1))
    assert len(pg.events(session_id=sid, limit=10_000)) == sum(r["events"] for r in reports)
    outcomes = pg.conn.execute(
        "SELECT count(*) FROM outcomes WHERE session_id = ?", (sid,)
    ).fetchone()[0]
    assert outcomes == sum(r["outcomes"] for r in reports) == 16 * 3
    assert len(pg.cascades(sid)) == 16


def test_the_server_restarted_under_load_loses_no_acknowledged_write(pg, postgres_server):
    sid = pg.create_session(ai_id="load", profile="balanced").id
    acknowledged: list[int] = []
    unsure: list[str] = []
    stop = threading.Event()

    def write() -> None:
        while not stop.is_set() and len(acknowledged) < 400:
            try:
                acknowledged.append(assess(pg, sid).seq)
            except StoreError as exc:  # refused while the server is down: try again
                if "wholly applied or not at all" in exc.message:
                    unsure.append(exc.message)
                time.sleep(0.05)

    threads = [threading.Thread(target=write) for _ in range(4)]
    for t in threads:
        t.start()
    while len(acknowledged) < 20:
        time.sleep(0.01)
    postgres_server.restart(down_for=0.5)
    before = len(acknowledged)
    deadline = time.monotonic() + 60
    while len(acknowledged) < before + 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    stop.set()
    for t in threads:
        t.join(timeout=60)
    seqs = [r.seq for r in pg.assessments(session_id=sid)]
    assert len(acknowledged) >= before + 20, "writes did not resume after the restart"
    assert seqs == list(range(1, len(seqs) + 1))  # contiguous: nothing half-applied
    assert set(acknowledged) <= set(seqs)
    assert len(acknowledged) <= len(seqs) <= len(acknowledged) + len(unsure)


def test_a_read_only_store_writes_nothing(postgres_url):
    with PostgresStore(postgres_url) as writer:
        sid = writer.create_session(ai_id="a", profile="balanced").id
    with PostgresStore(postgres_url, read_only=True) as reader:
        assert reader.get_session(sid).id == sid
        with pytest.raises(StoreError, match="read-only"):
            reader.create_session(ai_id="b", profile="balanced")
        with pytest.raises(StoreError, match="read-only"):
            assess(reader, sid)
        assert len(reader.list_sessions()) == 1


def test_the_modules_beside_the_store_read_and_write_postgresql(pg):
    from noetic.calibration.outcomes import add_adjustment, adjustments, list_outcomes
    from noetic.llm.base import LLMCall
    from noetic.store import agent_memory, llm_calls, nova, observations, summaries
    from noetic.store.checkpoints import (
        last_assessment,
        list_checkpoints,
        make_checkpoint,
        write_checkpoint,
    )

    sid = pg.create_session(ai_id="a", profile="balanced", project="p").id
    c = pg.open_cascade(sid, "task", profile="balanced")
    adj = add_adjustment(
        pg, profile="balanced", field="t", old=0.7, new=0.6, reason="r", evidence={"n": 3}
    )
    assert adjustments(pg, adjustment_id=adj.id)[0].evidence == {"n": 3}
    assert list_outcomes(pg) == []
    llm_calls.record_llm_call(
        pg, LLMCall(provider="p", model="m-1", attempt=1, outcome="ok", session_id=sid)
    )
    assert [x.model for x in llm_calls.llm_calls(pg, model="m")] == ["m-1"]
    agent_memory.save_workspace(pg, "task_1", "u", "q", "running", {"x": 1})
    agent_memory.save_workspace(pg, "task_1", "u", "q", "done", {"x": 2})
    assert agent_memory.load_workspace(pg, "task_")[3:] == ("done", {"x": 2})
    run = nova.create_run(pg, "why?", {"k": 1}, session_id=sid)
    nova.save_turn(pg, run, 1, "1:a:b", {"t": 1})
    nova.update_run(pg, run, status="done", result={"ok": True})
    assert nova.get_run(pg, run[:6])["result"] == {"ok": True}
    assert nova.turns(pg, run) == [{"t": 1}]
    observations.save_run(
        pg,
        {"query": "q", "provider": None, "model": None, "stages": 1, "reason": "r",
         "model_calls": 1, "cache_hit": False, "stage_budget": 3, "answer": "a",
         "confidence": 0.5, "note": ""},
        [{"stage": 1, "layers": ["l"], "confidence": 0.5, "content": "c"}],
    )  # fmt: skip
    assert observations.runs(pg)[0]["cache_hit"] == 0
    summary = summaries.RecallSummary(
        cascade_id=c.id, session_id=sid, ai_id="a", project="p", task="task",
        ended_at="2026-01-01T00:00:00+00:00", pre={"know": 0.4}, post={"know": 0.8},
        delta={"know": 0.4}, learning=0.4, calibration="good", confidence_pre=0.4,
        confidence_post=0.8, notes="",
    )  # fmt: skip
    summaries.save_summary(pg, summary)
    summaries.save_summary(pg, summary)  # rewriting replaces it
    assert summaries.load_summaries(pg, [c.id])[c.id] == summary
    [row] = summaries.pending(pg, "e")
    summaries.save_vectors(pg, "e", [row], [b"\x00\x00\x80\x3f"])
    summaries.save_vectors(pg, "e", [row], [b"\x00\x00\x80\x3f"])  # once only
    assert summaries.pending_count(pg, "e") == 0
    assert summaries.vector_state(pg, "e") == (0, summaries.vectors_since(pg, "e", 0)[0][0])
    summaries.save_summary(pg, summary)  # its vectors go, and the generation moves
    assert summaries.vector_state(pg, "e")[0] == 1
    point = make_checkpoint(sid, c.id, "check", {"know": 0.5}, "proceed", None)
    assert write_checkpoint(pg, point, None) == "sqlite"
    assert [cp.line() for _, cp in list_checkpoints(pg, None)] == [point.line()]
    assess(pg, sid, 0.6, cascade_id=c.id)
    assess(pg, sid, 0.9, cascade_id=c.id)
    last = pg.assessments(cascade_id=c.id)[-1]  # as models
    assert last_assessment(pg, c.id) == (last.assessment.vectors, last.decision.action.value)


def test_p_success_and_the_per_phase_report_on_postgresql(pg):
    from noetic.calibration import Filters, calibration_report, record_outcome
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    tracker = Tracker(pg, ProfileRegistry(), checkpoints=False)
    session, _ = tracker.bootstrap(ai_id="a", ai_model="m")
    vectors = {v: 0.8 for v in Assessment.from_input("check", {"know": 0.8}).missing}
    vectors |= {"know": 0.8}
    pre = tracker.preflight(
        session.id, "t", Assessment.from_input("preflight", {"vectors": vectors, "p_success": 0.7})
    )
    post = {"vectors": vectors, "p_success": 0.4, "review": "adversarial"}
    tracker.postflight(session.id, Assessment.from_input("postflight", post))
    record_outcome(pg, pre.cascade.id, score=0.0, source="test")
    report = calibration_report(pg, Filters(), by="model")
    assert report.summary.mean_stated == 0.7 and report.stated == "p_success"
    assert report.by_phase["adversarial_review"].mean_stated == 0.4
    assert [g.value for g in report.groups] == ["m"]


def test_events_get_their_ids_in_commit_order_so_a_poller_misses_none(pg):
    """A writer that draws an event id and commits late would leave a hole a poller by id
    (the dashboard's live view, another machine) has already passed; appenders take turns."""
    done = threading.Event()

    def second() -> None:
        pg.append_event(Event(kind=EventKind.DECISION, data={"n": 2}))
        done.set()

    with pg.transaction() as c:
        pg.order_appends(c, "events")
        c.execute(
            "INSERT INTO events (at, kind, data) VALUES (?, ?, ?)", ("t", "decision", '{"n": 1}')
        )
        thread = threading.Thread(target=second)
        thread.start()
        assert not done.wait(0.5)  # the second appender waits for the first to commit
    thread.join(timeout=30)
    assert done.is_set()
    assert [e.data["n"] for e in pg.events()] == [1, 2]


def test_session_files_are_written_locally_when_asked_and_only_for_this_process(
    postgres_url, tmp_path
):
    from noetic.store import open_store
    from noetic.store.derived_files import reflex_path, session_json_path

    laptop, ci = tmp_path / "laptop", tmp_path / "ci"
    laptop.mkdir()
    (laptop / "config.toml").write_text(f'[store]\nurl = "{postgres_url}"\nfiles = true\n')
    with open_store(laptop, create=True) as mine:
        sid = mine.create_session(ai_id="me", profile="balanced").id
        records = [assess(mine, sid, v) for v in (0.3, 0.9)]
        assert mine.flush_files() == 1
        exported = mine.export_session(sid)
    doc = json.loads(session_json_path(laptop, sid).read_text())
    assert doc == exported
    log = reflex_path(laptop, "me", records[0].created_at, sid).read_text().splitlines()
    assert [json.loads(line)["seq"] for line in log] == [1, 2]
    with PostgresStore(postgres_url, home=ci) as theirs:  # another machine, files not asked
        other = theirs.create_session(ai_id="ci", profile="balanced").id
        assess(theirs, other)
    assert not ci.exists() or not list(ci.rglob("*.json*"))
    with open_store(laptop, create=True) as mine:  # the laptop mirrors only what it writes
        assess(mine, sid)
    assert not session_json_path(laptop, other).exists()
    assert json.loads(session_json_path(laptop, sid).read_text())["assessments"][-1]["seq"] == 3
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.toml").write_text(f'[store]\nurl = "{postgres_url}"\nfiles = "yes"\n')
    with pytest.raises(InvalidValueError, match="true or false"):
        open_store(bad, create=True)
