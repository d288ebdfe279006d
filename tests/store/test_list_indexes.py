"""Migration m017: the sessions and tasks lists read their pages off an index in their order
(newest first by ``created_at``, then ``id``) instead of sorting every row."""

from __future__ import annotations

import sqlite3

import pytest

from noetic.operations.session_list import SessionFilters, list_sessions
from noetic.operations.task_list import TaskFilters, list_tasks

INDEXES = {"sessions_created": "sessions", "cascades_created": "cascades"}


def _indexes(store) -> dict[str, str]:
    if isinstance(store.conn, sqlite3.Connection):
        rows = store.conn.execute("SELECT name, tbl_name FROM sqlite_master WHERE type = 'index'")
    else:
        rows = store.conn.execute(
            "SELECT indexname, tablename FROM pg_indexes WHERE schemaname = current_schema()"
        )
    return {r[0]: r[1] for r in rows}


def test_the_lists_order_has_an_index_on_either_backend(store):
    found = _indexes(store)
    assert {name: found.get(name) for name in INDEXES} == INDEXES


def _fill(store, n: int) -> None:
    with store.transaction() as c:
        for i in range(n):
            at = f"2026-01-{1 + i % 28:02d}T00:00:{i % 60:02d}+00:00"
            c.execute(
                "INSERT INTO sessions (id, ai_id, profile, status, created_at) "
                "VALUES (?, 'a', 'balanced', 'active', ?)",
                (f"s_{i:04d}", at),
            )
            c.execute(
                "INSERT INTO cascades (id, session_id, task, status, profile, created_at) "
                "VALUES (?, ?, 'a task', 'open', 'balanced', ?)",
                (f"c_{i:04d}", f"s_{i:04d}", at),
            )


@pytest.mark.sqlite_only  # SQLite's query plan
@pytest.mark.parametrize(
    ("read", "index"),
    [
        (lambda s: list_sessions(s, SessionFilters(page=3, per_page=10)), "sessions_created"),
        (lambda s: list_tasks(s, TaskFilters(page=3, per_page=10)), "cascades_created"),
    ],
)
def test_a_page_of_the_list_is_read_off_the_index_without_a_sort(store, read, index):
    _fill(store, 60)
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    try:
        page = read(store)
    finally:
        store.conn.set_trace_callback(None)
    assert page.total == 60 and len(page.rows) == 10
    ordered = [s for s in statements if "created_at DESC, " in s and "OFFSET 20" in s]
    assert len(ordered) == 1, statements
    plan = " | ".join(r[3] for r in store.conn.execute("EXPLAIN QUERY PLAN " + ordered[0]))
    assert index in plan and "TEMP B-TREE" not in plan, plan
