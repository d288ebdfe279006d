"""The ``llm_calls`` table: every model call attempt, with tokens, cost, latency and outcome."""

from __future__ import annotations

from noetic.errors import InvalidValueError
from noetic.llm.base import LLMCall
from noetic.store.base import BaseStore
from noetic.store.rows import now, where

_FIELDS = tuple(LLMCall.model_fields)


class LoggedCall(LLMCall):
    """A recorded call with its row id and when it was made."""

    id: int
    at: str


def record_llm_call(store: BaseStore, call: LLMCall) -> None:
    row = {"at": now(), **{f: getattr(call, f) for f in _FIELDS}}
    with store.transaction() as conn:
        store.insert(conn, "llm_calls", row)


def last_call_id(store: BaseStore) -> int:
    """The newest call's id (0 for none): where a run's calls begin."""
    return int(store.conn.execute("SELECT coalesce(max(id), 0) FROM llm_calls").fetchone()[0])


def file_under_task(store: BaseStore, session_id: str, task_id: str, after_id: int) -> int:
    """File the session's calls made after ``after_id`` with no task under ``task_id`` (a run's
    calls from before it opened its task: CASCADE's PREFLIGHT, Nova's unpacking); how many."""
    return store.write(
        "UPDATE llm_calls SET cascade_id = ? WHERE session_id = ? AND cascade_id IS NULL "
        "AND id > ?",
        (task_id, session_id, after_id),
    )


def task_of_calls(store: BaseStore, task: str) -> str:
    """The task id of recorded calls that ``task`` names exactly or as a unique prefix (itself
    when no call has it, so a filter on it finds nothing); an ambiguous prefix is an error."""
    found = [
        r[0]
        for r in store.conn.execute(
            "SELECT DISTINCT cascade_id FROM llm_calls WHERE cascade_id >= ? AND cascade_id < ? "
            "ORDER BY cascade_id LIMIT 3",
            (task, task + "\U0010ffff"),
        )
    ]
    if task in found or not found:
        return task
    if len(found) > 1:
        raise InvalidValueError(
            f"task id prefix {task!r} is ambiguous: {', '.join(found[:2])}, …",
            field="run",
            value=task,
            fix="give more of the id",
        )
    return str(found[0])


def llm_calls(
    store: BaseStore,
    *,
    session_id: str | None = None,
    cascade_id: str | None = None,
    model: str | None = None,
    limit: int | None = None,
) -> list[LoggedCall]:
    """Recorded calls, oldest first; ``model`` matches ``provider:model`` or the model name, or
    the start of either (``claude-sonnet-4-5`` finds ``claude-sonnet-4-5-20250929``);
    ``limit`` keeps the most recent."""
    named = "(substr(model, 1, ?) = ? OR substr(provider || ':' || model, 1, ?) = ?)"
    more = [] if model is None else [(named, [len(model), model, len(model), model])]
    cond, args = where(*more, session_id=session_id, cascade_id=cascade_id)
    sql = f"SELECT id, at, {', '.join(_FIELDS)} FROM llm_calls{cond} ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    rows = [LoggedCall(**dict(row)) for row in store.conn.execute(sql, args)]
    return rows[::-1]
