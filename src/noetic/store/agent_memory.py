"""The agent's two persisted horizons, in the seed's tables (``docs/agent.md``).

``user_profiles`` holds one JSON profile per user (horizon 1); ``task_workspaces`` one JSON
workspace per task (horizon 2), written after every step of a run with the task's status and
query, so ``noetic agent resume TASK`` can pick it up after a crash. Forgetting deletes with
SQLite's ``secure_delete`` on, then checkpoints the write-ahead log (:func:`_wiping`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from noetic.errors import NotFoundError, StoreError
from noetic.store.base import BaseStore
from noetic.store.rows import now


def load_profile(store: BaseStore, user_id: str) -> dict[str, Any] | None:
    row = store.conn.execute(
        "SELECT profile_data FROM user_profiles WHERE user_id = ?", (user_id,)
    ).fetchone()
    return _decode(row[0], f"the profile of {user_id!r}") if row else None


def save_profile(store: BaseStore, user_id: str, data: dict[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, default=str)
    store.write(
        "INSERT INTO user_profiles (user_id, profile_data, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT (user_id) DO UPDATE SET profile_data = excluded.profile_data, "
        "updated_at = excluded.updated_at",
        (user_id, text, now()),
    )


def save_workspace(
    store: BaseStore, task_id: str, user_id: str, query: str, status: str, data: dict[str, Any]
) -> None:
    """Write one task's workspace; the user gets an empty profile row if it has none."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    at = now()
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO user_profiles (user_id, profile_data, updated_at) "
            "VALUES (?, ?, ?) ON CONFLICT (user_id) DO NOTHING",
            (user_id, json.dumps({"user_id": user_id}), at),
        )
        conn.execute(
            "INSERT INTO task_workspaces (task_id, user_id, query, status, workspace_data, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (task_id) DO UPDATE SET "
            "status = excluded.status, workspace_data = excluded.workspace_data, "
            "updated_at = excluded.updated_at",
            (task_id, user_id, query, status, text, at),
        )


def load_workspace(store: BaseStore, task_id: str) -> tuple[str, str, str, str, dict[str, Any]]:
    """(id, user, query, status, workspace) of a task; a unique id prefix is enough."""
    rows = store.conn.execute(
        "SELECT task_id, user_id, query, status, workspace_data FROM task_workspaces "
        "WHERE substr(task_id, 1, length(?)) = ? ORDER BY task_id = ? DESC LIMIT 2",
        (task_id, task_id, task_id),
    ).fetchall()
    if not rows:
        raise NotFoundError(f"no agent task {task_id!r}", fix="list tasks: noetic agent tasks")
    if len(rows) > 1 and rows[0][0] != task_id:
        raise NotFoundError(f"task prefix {task_id!r} is ambiguous", fix="give more of the id")
    found, user, query, status, data = rows[0]
    return found, user, query, status, _decode(data, f"the workspace of task {found}")


def list_workspaces(store: BaseStore, limit: int = 20) -> list[dict[str, Any]]:
    rows = store.conn.execute(
        "SELECT task_id, user_id, query, status, updated_at FROM task_workspaces "
        "ORDER BY updated_at DESC LIMIT ?",
        (limit,),
    )
    return [dict(row) for row in rows]


def delete_user(store: BaseStore, user_id: str) -> list[str]:
    """Remove ``user_id``'s profile and every workspace of theirs; the ids of the tasks removed.
    A user the store does not know is a :class:`NotFoundError`."""
    with _wiping(store), store.transaction() as conn:
        tasks = [
            r[0]
            for r in conn.execute(
                "SELECT task_id FROM task_workspaces WHERE user_id = ? ORDER BY task_id",
                (user_id,),
            )
        ]
        conn.execute("DELETE FROM task_workspaces WHERE user_id = ?", (user_id,))
        gone = conn.execute("DELETE FROM user_profiles WHERE user_id = ?", (user_id,)).rowcount
    if not gone and not tasks:
        raise NotFoundError(
            f"the agent keeps nothing about user {user_id!r}", fix="list tasks: noetic agent tasks"
        )
    return tasks


def delete_workspace(store: BaseStore, task_id: str) -> str:
    """Remove one task's workspace (a unique id prefix is enough); the id removed."""
    found = load_workspace(store, task_id)[0]
    with _wiping(store), store.transaction() as conn:
        conn.execute("DELETE FROM task_workspaces WHERE task_id = ?", (found,))
    return found


@contextmanager
def _wiping(store: BaseStore) -> Iterator[None]:
    """``secure_delete`` on for the deletes, then the log checkpointed (SQLite only)."""
    conn = store.conn if isinstance(store.conn, sqlite3.Connection) else None
    if conn is None:
        yield
        return
    conn.execute("PRAGMA secure_delete = ON")
    try:
        yield
    finally:
        conn.execute("PRAGMA secure_delete = OFF")
    with suppress(sqlite3.OperationalError):  # a reader holding the log: it truncates later
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _decode(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise StoreError(f"{what} in the store is corrupt: {exc.msg} at {exc.pos}") from None
    if not isinstance(value, dict):
        raise StoreError(f"{what} in the store is corrupt: not a JSON object")
    return value
