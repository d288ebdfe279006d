"""Several processes writing one store, and a process killed mid-write."""

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store
from noetic.store.derived_files import session_json_path

WRITER = str(Path(__file__).with_name("_writer.py"))


@pytest.mark.subprocess
def test_four_processes_times_200_assessments_all_present(tmp_path):
    home = tmp_path / "store"
    with Store(home) as store:
        sessions = [store.create_session(ai_id=f"ai{i}", profile="balanced").id for i in range(4)]
    procs = [
        subprocess.Popen([sys.executable, WRITER, str(home), sid, "200"], stderr=subprocess.PIPE)
        for sid in sessions
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    with Store(home) as store:
        assert store.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0] == 800
        for sid in sessions:
            seqs = [r.seq for r in store.assessments(session_id=sid)]
            assert seqs == list(range(1, 201))
            doc = json.loads(session_json_path(home, sid).read_text())
            assert len(doc["assessments"]) == 200


@pytest.mark.subprocess
def test_two_processes_on_one_session_never_collide_on_sequence_numbers(tmp_path):
    home = tmp_path / "store"
    with Store(home) as store:
        sid = store.create_session(ai_id="shared", profile="balanced").id
    procs = [
        subprocess.Popen([sys.executable, WRITER, str(home), sid, "60"], stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    with Store(home) as store:
        assert [r.seq for r in store.assessments(session_id=sid)] == list(range(1, 121))
        assert len(json.loads(session_json_path(home, sid).read_text())["assessments"]) == 120


@pytest.mark.subprocess
def test_sigkill_mid_write_leaves_sqlite_intact_and_rebuild_restores_files(tmp_path):
    home = tmp_path / "store"
    with Store(home) as store:
        sid = store.create_session(ai_id="victim", profile="balanced").id
    proc = subprocess.Popen([sys.executable, WRITER, str(home), sid, "0", "--forever"])
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            time.sleep(0.05)
            conn = sqlite3.connect(home / "noetic.db", timeout=30)
            count = conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0]
            conn.close()
            if count >= 40:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL
    with Store(home) as store:
        assert store.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = store.assessments(session_id=sid)
        assert len(rows) >= 40
        assert [r.seq for r in rows] == list(range(1, len(rows) + 1))
        for path in home.rglob("*.json"):
            json.loads(path.read_text())  # no half-written file is ever visible
        for path in home.rglob("*.jsonl"):
            for line in path.read_text().split("\n")[:-1]:
                json.loads(line)  # every finished line reads; only the last may be cut short
        for path in home.rglob("*.tmp"):
            path.unlink()  # a temp file the killed process left behind
        store.rebuild_files()
        doc = json.loads(session_json_path(home, sid).read_text())
        assert len(doc["assessments"]) == len(rows)
        assert _logged(home) == [r.seq for r in rows]


def _kill_after(home: Path, sid: str, count: int, *flags: str) -> None:
    proc = subprocess.Popen([sys.executable, WRITER, str(home), sid, "0", "--forever", *flags])
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            time.sleep(0.02)
            conn = sqlite3.connect(home / "noetic.db", timeout=30)
            done = conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0]
            conn.close()
            if done >= count:
                break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize(
    "flags", [(), ("--background",), ("--flush",)], ids=["at-close", "background", "each-write"]
)
@pytest.mark.subprocess
def test_after_sigkill_the_next_store_writes_what_the_dead_process_left(tmp_path, flags):
    home = tmp_path / "store"
    with Store(home) as store:
        sid = store.create_session(ai_id="victim", profile="balanced").id
    _kill_after(home, sid, 60, *flags)
    with Store(home) as store:
        behind = store.conn.execute("SELECT COUNT(*) FROM file_backlog").fetchone()[0]
        rows = store.assessments(session_id=sid)
        expected = store.export_session(sid)
    if "--flush" not in flags:  # (flushing after each write may have emptied it)
        assert behind > 0  # the marker survived the kill, in the same transactions as the writes
    with Store(home) as store:  # closing drained the backlog: files equal SQLite again
        assert store.conn.execute("SELECT COUNT(*) FROM file_backlog").fetchone()[0] == 0
    assert json.loads(session_json_path(home, sid).read_text()) == expected
    assert _logged(home) == [r.seq for r in rows]  # each once, in order
    drained = _files(home)
    with Store(home) as store:
        store.rebuild_files()
    assert _files(home) == drained  # byte for byte what a rebuild from SQLite writes


def _logged(home: Path) -> list[int]:
    """The seq of every reflex-log line, in file order."""
    return [
        json.loads(line)["seq"]
        for path in sorted((home / "reflex_logs").rglob("*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def _files(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in [*home.glob("sessions/*.json"), *home.rglob("*.jsonl")]
    }


@pytest.mark.slow
def test_a_long_lived_store_writes_files_in_the_background_and_coalesces(tmp_path):
    with Store(tmp_path / "s", background=True) as store:
        sid = store.create_session(ai_id="srv", profile="balanced").id
        for i in range(50):
            a = Assessment.from_input("check", {"know": i / 50})
            store.add_assessment(sid, a, decide(a, Thresholds(confidence_threshold=0.7)))
        deadline = time.monotonic() + 30
        path = session_json_path(store.home, sid)
        backlog = "SELECT COUNT(*) FROM file_backlog"
        while time.monotonic() < deadline and store.conn.execute(backlog).fetchone()[0]:
            time.sleep(0.02)
        assert len(json.loads(path.read_text())["assessments"]) == 50
        assert store.conn.execute("SELECT COUNT(*) FROM file_backlog").fetchone()[0] == 0


@pytest.mark.slow
def test_a_write_waits_for_a_read_on_its_own_connection_that_saw_an_older_snapshot(tmp_path):
    """An MCP server's threads share one connection: a read still open on one thread holds a
    snapshot; when another process has written since, SQLite refuses BEGIN IMMEDIATE at once
    (SQLITE_BUSY_SNAPSHOT, no busy wait). The write waits for the read to end and goes on."""
    import threading

    ours = Store(tmp_path / "s")
    session = ours.create_session(ai_id="a", profile="balanced").id
    ours.create_session(ai_id="b", profile="balanced")
    reading = ours.conn.execute("SELECT id FROM sessions")
    reading.fetchone()  # a read in progress: the connection keeps its snapshot
    with Store(tmp_path / "s") as theirs:  # another process writes after that snapshot
        theirs.create_session(ai_id="c", profile="balanced")

    def finish_reading():
        time.sleep(0.3)
        reading.fetchall()

    reader = threading.Thread(target=finish_reading)
    reader.start()
    try:
        ours.create_session(ai_id="d", profile="balanced")  # BEGIN IMMEDIATE on a stale snapshot
    finally:
        reader.join()
    assert {s.ai_id for s in ours.list_sessions()} >= {"a", "b", "c", "d"}
    assert ours.get_session(session).ai_id == "a"
    ours.close()


def test_threads_sharing_one_store_read_while_others_write(tmp_path):
    """An MCP server's worker threads share one open store: a read on one thread while another
    writes must neither fail (one SQLite connection used by two threads at once gives "no more
    rows available") nor see the other's transaction before it commits."""
    import threading

    with Store(tmp_path / "store") as store:
        sid = store.create_session(ai_id="shared", profile="balanced").id
        problems: list[BaseException] = []
        seen: list[int] = []
        go = threading.Barrier(8)

        def write(n: int) -> None:
            go.wait()
            try:
                for i in range(60):
                    with store.transaction() as c:  # two inserts, visible together or not at all
                        for half in ("a", "b"):
                            c.execute(
                                "INSERT INTO events (at, kind, engine, session_id, data) "
                                "VALUES (?, 'note', 'test', ?, ?)",
                                (f"{n}-{i}", sid, half),
                            )
            except BaseException as exc:  # reported below, with the thread's name
                problems.append(exc)

        def read() -> None:
            go.wait()
            try:
                for _ in range(150):
                    rows = store.conn.execute(
                        "SELECT COUNT(*) FROM events WHERE session_id = ? AND kind = 'note'",
                        (sid,),
                    ).fetchone()
                    seen.append(rows[0])
                    store.list_sessions()
            except BaseException as exc:
                problems.append(exc)

        threads = [threading.Thread(target=write, args=(n,)) for n in range(4)]
        threads += [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
        assert problems == []
        assert all(n % 2 == 0 for n in seen), "a read saw half of a write"
        count = store.conn.execute("SELECT COUNT(*) FROM events WHERE kind = 'note'").fetchone()
        assert count[0] == 4 * 60 * 2


_CLOSE_UNDER_READS = """
import sys, threading, time
from pathlib import Path
from noetic.errors import StoreError
from noetic.store import Store

COUNT = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 20000) "
COUNT += "SELECT SUM(x) FROM c"
base = Path(sys.argv[1])
for round in range(int(sys.argv[2])):
    store = Store(base / str(round))
    sid = store.create_session(ai_id="closing", profile="balanced").id
    said, started = [], threading.Barrier(4)

    def read():
        started.wait()
        try:
            while True:
                store.conn.execute(COUNT).fetchone()
        except StoreError as exc:
            said.append(str(exc))

    def write():
        started.wait()
        try:
            while True:
                with store.transaction() as c:
                    c.execute(
                        "INSERT INTO events (at, kind, engine, session_id, data) "
                        "VALUES ('t', 'note', 'test', ?, 'a')", (sid,))
                    time.sleep(0.001)
                    c.execute(
                        "INSERT INTO events (at, kind, engine, session_id, data) "
                        "VALUES ('t', 'note', 'test', ?, 'b')", (sid,))
        except StoreError as exc:
            said.append(str(exc))

    threads = [threading.Thread(target=read) for _ in range(2)] + [threading.Thread(target=write)]
    for t in threads:
        t.start()
    started.wait()
    time.sleep(0.003 * (round % 4))
    store.close()
    for t in threads:
        t.join(10)
        assert not t.is_alive(), "a thread kept using a closed store"
    assert len(said) == 3 and all("is closed" in s for s in said), said
    with Store(base / str(round)) as again:
        halves = again.conn.execute(
            "SELECT data, COUNT(*) FROM events WHERE kind = 'note' GROUP BY data").fetchall()
        assert len({n for _, n in halves}) <= 1, halves
print("closed", sys.argv[2], "times")
"""


def test_closing_a_store_while_other_threads_use_it_neither_crashes_nor_loses_a_write(tmp_path):
    """A store closed on one thread while others read and write on their own connections (an
    MCP server's embedding thread, at exit): closing a connection under another thread's
    statement crashed the interpreter. Each thread now finishes the statement or the
    transaction it is in and is told the store is closed; a write is stored whole or not."""
    done = subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", _CLOSE_UNDER_READS, str(tmp_path), "40"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "closed 40 times" in done.stdout


def test_a_closed_store_says_so_on_the_thread_that_closed_it_too(tmp_path):
    from noetic.errors import StoreError

    store = Store(tmp_path / "store")
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.conn.execute("SELECT 1")
    store.close()  # closing again does nothing
