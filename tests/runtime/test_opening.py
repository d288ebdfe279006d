"""One way to open a store and a tracker (``noetic.store.open_store``,
``noetic.runtime.opening``), used by the command line, the MCP server, the dashboard, the hooks
and the engines alike."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import noetic
from noetic.errors import NotFoundError, StoreError
from noetic.runtime.opening import open_tracker, remembered_session
from noetic.store import close_stores, command_stores, open_store
from noetic.store.current import write_current_session

PACKAGE = Path(noetic.__file__).parent
MAKERS = {PACKAGE / "runtime" / "opening.py", PACKAGE / "runtime" / "tracker.py"}


def test_a_tracker_is_made_in_one_place() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in MAKERS:
            continue
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Tracker"
            ):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []


def test_a_missing_store_is_refused_unless_the_caller_creates_it(tmp_path: Path) -> None:
    home = tmp_path / "nowhere"
    with pytest.raises(NotFoundError, match="no Noetic store here"):
        open_store(home)
    assert not home.exists()
    with open_store(home, create=True) as made:
        made.create_session(ai_id="a", profile="balanced")
    with open_store(home) as found:
        assert [s.ai_id for s in found.list_sessions()] == ["a"]


def test_a_command_closes_the_stores_it_opened_and_no_others(tmp_path: Path) -> None:
    before = open_store(tmp_path / "before", create=True)
    command_stores()
    try:
        mine = open_store(tmp_path / "mine", create=True)
        tracker = open_tracker(tmp_path / "tracked", create=True)
    finally:
        close_stores()
    for closed in (mine, tracker.store):
        with pytest.raises(StoreError, match="is closed"):
            closed.conn.execute("SELECT 1")
    assert before.conn.execute("SELECT 1").fetchone()[0] == 1
    after = open_store(tmp_path / "after", create=True)
    close_stores()  # outside a command: nothing is the command's
    assert after.conn.execute("SELECT 1").fetchone()[0] == 1
    before.close()
    after.close()


def test_the_remembered_session_is_none_once_it_is_gone(tmp_path: Path) -> None:
    tracker = open_tracker(tmp_path, create=True)
    try:
        session = tracker.store.create_session(ai_id="host", profile="balanced")
        assert remembered_session(tracker.store, "host") is None
        write_current_session(tmp_path, session.id, "host")
        assert remembered_session(tracker.store, "host") == session.id
        write_current_session(tmp_path, "s_gone", "host")
        assert remembered_session(tracker.store, "host") is None
    finally:
        tracker.store.close()
