"""A fresh process's drain starts from the record the last drain kept beside the session's
document, reads only the rows added since, and writes the same bytes as a full rebuild: with the
record missing, damaged, of another format, or no longer matching SQLite or the document."""

from __future__ import annotations

import shutil
import sqlite3
import tempfile
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from noetic.assessment import Assessment, Thresholds, decide
from noetic.events import Event, EventKind
from noetic.store import Store, document
from noetic.store.derived_files import grown_path, grown_records, session_json_path

from ..conftest import uniform

pytestmark = pytest.mark.sqlite_only  # the session files a local store writes

T = Thresholds(confidence_threshold=0.7)


def assess(store: Store, sid: str, note: str = "n", cascade_id: str | None = None) -> None:
    a = Assessment.from_input("check", {"vectors": uniform(0.7), "note": note})
    store.add_assessment(sid, a, decide(a, T), cascade_id=cascade_id)


def event(store: Store, sid: str, note: str = "e") -> None:
    store.append_event(Event(kind=EventKind.DECISION, session_id=sid, data={"n": note}))


def session(home: Path, assessments: int = 3, events: int = 4) -> str:
    """A session written by one process: its document and record are on disk."""
    with Store(home) as store:
        sid = store.create_session(ai_id="a", profile="balanced").id
        for i in range(assessments):
            assess(store, sid, f"a{i}")
        for i in range(events):
            event(store, sid, f"e{i}")
    return sid


def fresh(home: Path, sid: str) -> bytes:
    with Store(home, write_files=False) as store:
        return store.session_document(sid, fresh=True)


def on_disk(home: Path, sid: str) -> bytes:
    return session_json_path(home, sid).read_bytes()


def recorded(home: Path, sid: str) -> document.Grown | None:
    """The record beside the document, as the next process reads it."""
    with Store(home, write_files=False) as store:
        database = store.database_id()
    assert database is not None
    return document.restore(grown_path(home, sid), session_json_path(home, sid), sid, database)


def write_in_a_new_process(home: Path, sid: str, note: str = "next") -> None:
    with Store(home) as store:
        assess(store, sid, note)
        event(store, sid, note)


def assert_current(home: Path, sid: str) -> None:
    """The document is a full rebuild's, byte for byte, and its record describes it."""
    assert on_disk(home, sid) == fresh(home, sid)
    grown = recorded(home, sid)
    assert grown is not None
    with Store(home, write_files=False) as store:
        assert grown.intact(store.conn, sid)
        count = store.conn.execute(
            "SELECT COUNT(*) FROM assessments WHERE session_id = ?", (sid,)
        ).fetchone()[0]
    assert grown.count == count


def test_a_fresh_store_reads_only_the_rows_added_since_the_last_drain(tmp_path: Path) -> None:
    sid = session(tmp_path, assessments=5, events=6)
    store = Store(tmp_path)
    drained = store.conn.execute(
        "SELECT MAX(id) FROM events WHERE session_id = ?", (sid,)
    ).fetchone()[0]
    assess(store, sid, "sixth")
    event(store, sid, "seventh")
    queries: list[str] = []
    store.conn.set_trace_callback(queries.append)
    store.close()
    reads = [q for q in queries if q.startswith("SELECT *") and "ORDER BY" in q]
    assessments = [q for q in reads if "FROM assessments" in q]
    events = [q for q in reads if "FROM events" in q]
    assert len(assessments) == 1 and "seq > 5" in assessments[0], assessments
    assert len(events) == 1 and f"id > {drained} " in events[0], events
    assert_current(tmp_path, sid)


def damage(how: str, home: Path, sid: str, other: str) -> None:
    record = grown_path(home, sid)
    raw = record.read_bytes()
    if how == "missing":
        record.unlink()
    elif how == "corrupt":  # one byte of the payload changed: still loads as marshal
        cut = len(raw) - 10
        record.write_bytes(raw[:cut] + bytes([raw[cut] ^ 0x01]) + raw[cut + 1 :])
    elif how == "truncated":
        record.write_bytes(raw[: len(raw) // 2])
    elif how == "empty":
        record.write_bytes(b"")
    elif how == "garbage":
        record.write_bytes(b"\x00\xff" * 40)
    elif how == "another format":
        record.write_bytes(raw.replace(document.MAGIC, b"noetic-grown-0\n", 1))
    elif how == "another session's":
        shutil.copyfile(grown_path(home, other), record)
    elif how == "a folder":
        record.unlink()
        record.mkdir()
    elif how == "document edited":  # the document no longer the one recorded
        path = session_json_path(home, sid)
        text = path.read_bytes()
        path.write_bytes(text.replace(b'"note":"a1"', b'"note":"a9"', 1))
    elif how == "document gone":
        session_json_path(home, sid).unlink()
    else:
        raise AssertionError(how)


DAMAGE = [
    "missing",
    "corrupt",
    "truncated",
    "empty",
    "garbage",
    "another format",
    "another session's",
    "a folder",
    "document edited",
    "document gone",
]


@pytest.mark.parametrize("how", DAMAGE)
def test_a_damaged_or_missing_record_gives_the_full_documents_bytes(
    tmp_path: Path, how: str
) -> None:
    sid = session(tmp_path)
    other = session(tmp_path, assessments=2, events=1)
    damage(how, tmp_path, sid, other)
    if how == "a folder":  # the record cannot be replaced: the document is still right
        write_in_a_new_process(tmp_path, sid)
        assert on_disk(tmp_path, sid) == fresh(tmp_path, sid)
        assert recorded(tmp_path, sid) is None
        return
    write_in_a_new_process(tmp_path, sid)
    assert_current(tmp_path, sid)
    write_in_a_new_process(tmp_path, sid, "again")  # from the record just rewritten
    assert_current(tmp_path, sid)


@settings(max_examples=30, deadline=None)
@given(cut=st.integers(min_value=0, max_value=200), flip=st.integers(min_value=0, max_value=200))
def test_a_record_cut_or_changed_anywhere_is_never_used(cut: int, flip: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        sid = session(home)
        record = grown_path(home, sid)
        raw = record.read_bytes()
        if cut < len(raw):
            raw = raw[:cut]
        elif flip < len(raw):
            raw = raw[:flip] + bytes([raw[flip] ^ 0x20]) + raw[flip + 1 :]
        else:
            raw = raw + b"\x00"
        record.write_bytes(raw)
        # a damaged record is refused as it is read, before SQLite is asked
        assert recorded(home, sid) is None
        write_in_a_new_process(home, sid)
        assert_current(home, sid)


def test_assessments_replaced_by_another_process_are_read_again(tmp_path: Path) -> None:
    sid = session(tmp_path, assessments=4)
    with Store(tmp_path) as store:
        doc = store.export_session(sid)
        for rec in doc["assessments"]:
            rec["assessment"]["note"] += "!"
        store.import_session(doc, replace=True)  # as many rows, new ids, other notes
    assert_current(tmp_path, sid)
    # and a process that finds the record of the rows replaced, without the drain that follows
    before = recorded(tmp_path, sid)
    with Store(tmp_path, write_files=False) as store:
        doc = store.export_session(sid)
        doc["assessments"][0]["assessment"]["note"] = "changed"
        store.import_session(doc, replace=True)
        assert before is not None and not before.intact(store.conn, sid)
    write_in_a_new_process(tmp_path, sid)
    assert_current(tmp_path, sid)


def test_events_that_changed_under_the_record_are_read_again(tmp_path: Path) -> None:
    sid = session(tmp_path, assessments=1, events=5)
    db = sqlite3.connect(tmp_path / "noetic.db")
    with db:  # outside Noetic: the trigger that keeps events append-only removed first
        db.execute("DROP TRIGGER events_no_delete")
        last = db.execute("SELECT MAX(id) FROM events WHERE session_id = ?", (sid,)).fetchone()
        db.execute("DELETE FROM events WHERE id = ?", (last[0] - 1,))
    db.close()
    write_in_a_new_process(tmp_path, sid)
    assert_current(tmp_path, sid)


def test_a_database_replaced_by_an_older_copy_is_read_again(tmp_path: Path) -> None:
    sid = session(tmp_path)
    with Store(tmp_path) as store:  # a backup: the database as one file
        store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    backup = tmp_path.parent / "backup.db"
    shutil.copyfile(tmp_path / "noetic.db", backup)
    write_in_a_new_process(tmp_path, sid, "after the backup")
    for suffix in ("-wal", "-shm"):
        (tmp_path / f"noetic.db{suffix}").unlink(missing_ok=True)
    shutil.copyfile(backup, tmp_path / "noetic.db")  # the older copy back; its files newer
    with Store(tmp_path) as store:
        event(store, sid, "on the older copy")
    assert_current(tmp_path, sid)
    assert b"after the backup" not in on_disk(tmp_path, sid)


def test_another_database_with_the_same_rows_counted_the_same_is_read_again(
    tmp_path: Path,
) -> None:
    """Another store holding the session imported with other notes numbers its rows as this
    one did (both begin at 1), so the counts and ids agree: the database's identity tells them
    apart."""
    home, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    sid = session(home, assessments=3, events=3)
    with Store(home) as store:
        doc = store.export_session(sid)
    for rec in doc["assessments"]:
        rec["assessment"]["note"] += " elsewhere"
    for ev in doc["events"]:
        ev["data"] = {"n": "elsewhere"}
    with Store(elsewhere) as other:
        other.import_session(doc)
    for suffix in ("", "-wal", "-shm"):
        (home / f"noetic.db{suffix}").unlink(missing_ok=True)
    with Store(elsewhere) as other:
        other.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copyfile(elsewhere / "noetic.db", home / "noetic.db")
    with Store(home) as store:
        got = store.conn.execute(
            "SELECT COUNT(*), MAX(id) FROM events WHERE session_id = ?", (sid,)
        ).fetchone()
        assert tuple(got) == (3, 3)  # as the record says: only the identity differs
        event(store, sid, "last")
    assert_current(tmp_path / "here", sid)
    assert b"elsewhere" in on_disk(home, sid)


def test_rebuild_writes_every_record_again_and_drops_those_of_no_session(
    tmp_path: Path,
) -> None:
    sid = session(tmp_path)
    grown_path(tmp_path, sid).write_bytes(b"stale")
    orphan = grown_path(tmp_path, "gone-session")
    shutil.copyfile(grown_path(tmp_path, session(tmp_path, 1, 1)), orphan)
    with Store(tmp_path) as store:
        store.rebuild_files()
    assert not orphan.exists()
    assert_current(tmp_path, sid)
    assert len(grown_records(tmp_path)) == 2


def test_a_long_lived_store_and_fresh_ones_keep_one_document(tmp_path: Path) -> None:
    """A long-lived process (the MCP server) keeps its rows in memory and records them too:
    a fresh process after it starts from its record, and it reads what the other added."""
    sid = session(tmp_path)
    with Store(tmp_path) as server:
        for i in range(3):
            assess(server, sid, f"server {i}")
            server.flush_files()
            assert_current(tmp_path, sid)
            write_in_a_new_process(tmp_path, sid, f"hook {i}")
            assert_current(tmp_path, sid)
        event(server, sid, "server last")
    assert_current(tmp_path, sid)


OPS = st.sampled_from(
    ["assess", "event", "investigate", "goal", "open", "finish", "replace", "rebuild", "damage"]
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(st.tuples(OPS, st.integers(0, 2), st.booleans()), max_size=20),
    notes=st.lists(st.text(max_size=30), min_size=1),
)
@example(steps=[("assess", 0, False), ("replace", 1, False), ("assess", 2, True)], notes=["n"])
@example(steps=[("event", 0, True), ("damage", 0, False), ("event", 1, False)], notes=["é"])
def test_writes_from_any_sequence_of_processes_give_the_full_documents_bytes(
    steps: list[tuple[str, int, bool]], notes: list[str]
) -> None:
    """Each step is a process (a new store, closed after it) writing to one of two sessions,
    or the long-lived store, which stays open and writes its files when asked: after each
    close, the document is the full rebuild's."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        with Store(home) as store:
            sids = [store.create_session(ai_id="a", profile="balanced").id for _ in range(2)]
            for sid in sids:
                store.open_cascade(sid, "task", profile="balanced")
        earlier = {}
        with Store(home, write_files=False) as store:
            earlier = {sid: store.export_session(sid) for sid in sids}
        server = Store(home)
        try:
            for i, (op, which, long_lived) in enumerate(steps):
                sid = sids[which % 2]
                note = notes[i % len(notes)]
                store = server if long_lived else Store(home)
                cascade = store.cascades(sid)[-1]
                if op == "assess":
                    assess(store, sid, note, cascade.id)
                elif op == "event":
                    event(store, sid, note)
                elif op == "investigate":
                    store.add_investigation(sid, cascade_id=cascade.id, note=note)
                elif op == "goal":
                    store.add_goal(sid, note or "g", source="threshold")
                elif op == "open":
                    store.open_cascade(sid, note or "t", profile="balanced")
                elif op == "finish":
                    store.finish_cascade(cascade.id, "completed", {"note": note})
                elif op == "replace":  # fewer assessments, under new ids
                    store.import_session(earlier[sid], replace=True)
                elif op == "rebuild":
                    store.rebuild_files()
                else:
                    record = grown_path(home, sid)
                    if record.exists():
                        record.write_bytes(record.read_bytes()[: which * 7])
                if i % 3 == 0:
                    earlier[sid] = store.export_session(sid)
                if long_lived:
                    server.flush_files()
                else:
                    store.close()
                for each in sids:
                    if session_json_path(home, each).exists():
                        assert on_disk(home, each) == fresh(home, each), (i, op)
        finally:
            server.close()
        for each in sids:
            assert on_disk(home, each) == fresh(home, each)
