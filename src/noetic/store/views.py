"""The reads behind a task's view and a run's timeline: a task's rows in each table, the
events of a task, a Nova run or a session, and what a run id names.

Rows are plain dicts of a table's columns (as :mod:`noetic.store.nova` gives them); the
statements are the store's, written once for SQLite and PostgreSQL.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal, NamedTuple

if TYPE_CHECKING:
    from noetic.store.base import BaseStore

TaskTable = Literal["assessments", "investigations", "outcomes", "llm_calls"]
EventColumn = Literal["cascade_id", "session_id"]


def task_with_agent(store: BaseStore, task_id: str) -> dict[str, Any] | None:
    """The task's row with its session's ``ai_id``, if the task exists."""
    row = store.conn.execute(
        "SELECT c.*, s.ai_id FROM cascades c JOIN sessions s ON s.id = c.session_id WHERE c.id = ?",
        (task_id,),
    ).fetchone()
    return None if row is None else dict(row)


def task_rows(store: BaseStore, table: TaskTable, task_id: str) -> list[dict[str, Any]]:
    """The task's rows in ``table``, in the order they were written."""
    order = "seq" if table == "assessments" else "id"
    sql = f"SELECT * FROM {table} WHERE cascade_id = ? ORDER BY {order}"
    return [dict(r) for r in store.conn.execute(sql, (task_id,))]


def task_engines(store: BaseStore, session_id: str, task_id: str) -> list[str]:
    """The engines that wrote an event about the task, sorted."""
    rows = store.conn.execute(
        # through the session's index: events has none on the task
        "SELECT DISTINCT engine FROM events WHERE session_id = ? AND cascade_id = ? "
        "AND engine IS NOT NULL ORDER BY 1",
        (session_id, task_id),
    )
    return [r[0] for r in rows]


def run_events(
    store: BaseStore, column: EventColumn, key: str, session_id: str | None, limit: int
) -> list[dict[str, Any]]:
    """The first ``limit`` events whose ``column`` is ``key``, oldest first (a task's read
    through its session's index when ``session_id`` is given)."""
    within = " AND session_id = ?" if column == "cascade_id" and session_id else ""
    args = (key, session_id) if within else (key,)
    rows = store.conn.execute(
        f"SELECT * FROM events WHERE {column} = ?{within} ORDER BY id LIMIT ?", (*args, limit)
    ).fetchall()
    return [dict(r) for r in rows]


class Span(NamedTuple):
    created_at: str
    ended_at: str | None


def span(store: BaseStore, table: Literal["cascades", "sessions"], key: str) -> Span | None:
    """When the task or session began and ended, if it exists."""
    row = store.conn.execute(
        f"SELECT created_at, ended_at FROM {table} WHERE id = ?", (key,)
    ).fetchone()
    return None if row is None else Span(row["created_at"], row["ended_at"])


class Named(NamedTuple):
    """What a run id names: its kind (``task``, ``nova``, ``observer``, ``session``, or
    ``event`` for a task known only from its events), its session, its task and its title."""

    kind: str
    session_id: str | None
    cascade_id: str | None
    title: str


def named_run(store: BaseStore, run_id: str) -> Named | None:
    conn = store.conn
    task = conn.execute("SELECT session_id, task FROM cascades WHERE id = ?", (run_id,)).fetchone()
    if task is not None:
        return Named("task", task["session_id"], run_id, task["task"])
    nova = conn.execute(
        "SELECT session_id, cascade_id, question FROM nova_runs WHERE id = ?", (run_id,)
    ).fetchone()
    if nova is not None and (nova["cascade_id"] or nova["session_id"]):
        return Named("nova", nova["session_id"], nova["cascade_id"], nova["question"])
    observed = conn.execute("SELECT query FROM observer_runs WHERE id = ?", (run_id,)).fetchone()
    if observed is not None:
        return Named("observer", None, run_id, observed["query"])
    session = conn.execute("SELECT ai_id FROM sessions WHERE id = ?", (run_id,)).fetchone()
    if session is not None:
        return Named("session", run_id, None, session["ai_id"])
    bare = conn.execute("SELECT session_id FROM events WHERE cascade_id = ? LIMIT 1", (run_id,))
    row = bare.fetchone()
    if row is not None:
        return Named("event", row["session_id"], run_id, run_id)
    return None


def nova_runs_of(store: BaseStore, run_id: str, task_id: str | None) -> list[dict[str, Any]]:
    """The Nova run ``run_id`` and those deliberating for ``task_id``, oldest first (their id,
    question, status, result and creation time)."""
    sql = "SELECT id, question, status, result, created_at FROM nova_runs WHERE id = ?"
    args: tuple[str, ...] = (run_id,)
    if task_id is not None:
        sql, args = sql + " OR cascade_id = ?", (run_id, task_id)
    return [dict(r) for r in store.conn.execute(sql + " ORDER BY created_at", args).fetchall()]


def nova_turn_rows(store: BaseStore, run_id: str) -> list[tuple[int, str]]:
    """A Nova run's turns as ``(seq, turn as JSON)``, in order."""
    rows = store.conn.execute(
        "SELECT seq, turn FROM nova_turns WHERE run_id = ? ORDER BY seq", (run_id,)
    )
    return [(int(t["seq"]), t["turn"]) for t in rows]


def observer_run(store: BaseStore, run_id: str) -> dict[str, Any] | None:
    row = store.conn.execute("SELECT * FROM observer_runs WHERE id = ?", (run_id,)).fetchone()
    return None if row is None else dict(row)


def observations_of(store: BaseStore, run_id: str) -> list[dict[str, Any]]:
    """An observer run's observations, by stage."""
    rows = store.conn.execute(
        "SELECT * FROM observations WHERE run_id = ? ORDER BY stage, id", (run_id,)
    )
    return [dict(r) for r in rows]
