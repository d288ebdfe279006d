"""Reflex logs: one line per assessment, appended, and exact mirrors of SQLite after any cut."""

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store
from noetic.store.derived_files import extend_lines, legacy_reflex_files, reflex_path

from ..conftest import uniform

T = Thresholds(confidence_threshold=0.7)


def record(store: Store, session_id: str, value: float = 0.8, note: str = "") -> None:
    a = Assessment.from_input("check", {"vectors": uniform(value), "note": note})
    store.add_assessment(session_id, a, decide(a, T))


def logs(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*.jsonl")}


def requeue(store: Store, session_id: str, after_seq: int = 0) -> None:
    """The backlog as a drain killed before deleting its rows leaves it."""
    with store.transaction() as c:
        c.execute(
            "INSERT INTO file_backlog (session_id, assessment_id) "
            "SELECT session_id, id FROM assessments WHERE session_id = ? AND seq > ?",
            (session_id, after_seq),
        )


def rebuilt(store: Store) -> dict[str, bytes]:
    store.rebuild_files()
    return logs(store.home)


@pytest.mark.sqlite_only  # the session files
def test_a_log_holds_a_line_per_assessment_in_seq_order_and_grows_by_appending(store):
    s = store.create_session(ai_id="a", profile="balanced")
    for i in range(3):
        record(store, s.id, value=0.5 + i / 10)
    store.flush_files()
    [log] = (store.home / "reflex_logs").rglob("*.jsonl")
    first = log.read_bytes()
    inode = log.stat().st_ino
    record(store, s.id, value=0.9)
    store.flush_files()
    assert log.stat().st_ino == inode  # appended in place, not replaced
    assert log.read_bytes().startswith(first)
    frames = [json.loads(line) for line in log.read_text().splitlines()]
    assert [f["seq"] for f in frames] == [1, 2, 3, 4]
    assert frames[3]["vectors"]["know"] == 0.9 and frames[3]["format"] == "noetic.reflex"
    assert logs(store.home) == rebuilt(store)


@pytest.mark.sqlite_only  # the session files
def test_a_drain_repeated_after_a_kill_writes_each_line_once(store):
    s = store.create_session(ai_id="a", profile="balanced")
    for _ in range(5):
        record(store, s.id)
    store.flush_files()
    before = logs(store.home)
    requeue(store, s.id, after_seq=2)  # the files were written, the backlog rows not deleted
    assert store.flush_files() == 3
    assert logs(store.home) == before == rebuilt(store)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(kept=st.integers(0, 4), fraction=st.floats(0, 1), notes=st.lists(st.text(max_size=300)))
def test_a_log_cut_anywhere_by_a_killed_append_is_whole_after_the_next_drain(kept, fraction, notes):
    with tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
        s = store.create_session(ai_id="a", profile="balanced")
        for i in range(kept):
            record(store, s.id, note=f"before {i}")
        store.flush_files()
        log = reflex_path(store.home, "a", s.created_at, s.id)
        size = log.stat().st_size if log.exists() else 0
        for note in [*notes, "last"]:
            record(store, s.id, note=note)
        store.flush_files()
        full = log.read_bytes()
        cut = size + round(fraction * (len(full) - size))
        log.write_bytes(full[:cut])  # the append reached this far before the process died
        requeue(store, s.id, after_seq=kept)  # the backlog still names every line it was writing
        store.flush_files()
        assert log.read_bytes() == full
        assert store.conn.execute("SELECT COUNT(*) FROM file_backlog").fetchone()[0] == 0


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(0, 20_000), min_size=1, max_size=6),
    written=st.integers(0, 6),
    start=st.integers(1, 7),
)
def test_extending_appends_only_what_follows_the_last_line(sizes, written, start):
    lines = [
        json.dumps({"seq": i + 1, "pad": "x" * n}).encode() + b"\n" for i, n in enumerate(sizes)
    ]
    written = min(written, len(lines))
    start = min(start, written + 1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "day" / "s.jsonl"
        if written:
            path.parent.mkdir()
            path.write_bytes(b"".join(lines[:written]))
        offered = list(enumerate(lines, start=1))[start - 1 :]
        assert extend_lines(path, offered) == len(lines) - written
        assert path.read_bytes() == b"".join(lines)


def test_a_log_whose_end_is_unterminated_or_unreadable_is_left_for_a_rewrite(tmp_path):
    path = tmp_path / "s.jsonl"
    for damaged in (b'{"seq":1}\n{"seq":2', b'{"seq":1}\nnot json\n', b"[1]\n"):
        path.write_bytes(damaged)
        assert extend_lines(path, [(3, b'{"seq":3}\n')]) is None
        assert path.read_bytes() == damaged


def test_a_session_across_midnight_has_a_log_per_day(store, tmp_path):
    s = store.create_session(ai_id="a", profile="balanced")
    record(store, s.id)
    record(store, s.id)
    doc = store.export_session(s.id)
    doc["assessments"][0]["created_at"] = "2026-01-01T23:59:59.000000+00:00"
    doc["assessments"][1]["created_at"] = "2026-01-02T00:00:01.000000+00:00"
    with Store(tmp_path / "other") as other:
        other.import_session(doc)
        record(other, s.id)  # today's: appended to today's log
        other.flush_files()
        found = logs(other.home)
        days = sorted(Path(name).parent.name for name in found)
        assert days[:2] == ["2026-01-01", "2026-01-02"] and len(found) == 3
        seqs = sorted(json.loads(line)["seq"] for b in found.values() for line in b.splitlines())
        assert seqs == [1, 2, 3]
        assert found == rebuilt(other)


@pytest.mark.sqlite_only  # the session files
def test_rebuild_replaces_reflex_logs_in_the_layout_before_lines(store):
    s = store.create_session(ai_id="a", profile="balanced")
    record(store, s.id)
    store.flush_files()
    log = reflex_path(store.home, "a", s.created_at, s.id)
    legacy = log.with_name(f"{s.id}-0001-check.json")
    legacy.write_text(log.read_text())
    other = log.with_name("notes.json")  # not a reflex log of the old layout: left alone
    other.write_text("{}")
    assert legacy_reflex_files(store.home) == [legacy]
    assert store.rebuild_files() == {"sessions": 1, "reflex_logs": 1}
    assert not legacy.exists() and other.exists() and log.exists()
