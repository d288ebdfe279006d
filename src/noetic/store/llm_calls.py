"""The ``llm_calls`` table: every model call attempt, with tokens, cost, latency and outcome."""

from __future__ import annotations

from noetic.llm.base import LLMCall
from noetic.store.base import BaseStore
from noetic.store.rows import now

_FIELDS = tuple(LLMCall.model_fields)


class LoggedCall(LLMCall):
    """A recorded call with its row id and when it was made."""

    id: int
    at: str


def record_llm_call(store: BaseStore, call: LLMCall) -> None:
    data = call.model_dump()
    cols = ", ".join(("at", *_FIELDS))
    marks = ", ".join("?" for _ in range(len(_FIELDS) + 1))
    with store.transaction() as conn:
        conn.execute(
            f"INSERT INTO llm_calls ({cols}) VALUES ({marks})",
            [now(), *(data[f] for f in _FIELDS)],
        )


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
    where: list[str] = []
    args: list[str | int] = []
    if session_id is not None:
        where.append("session_id = ?")
        args.append(session_id)
    if cascade_id is not None:
        where.append("cascade_id = ?")
        args.append(cascade_id)
    if model is not None:
        where.append("(substr(model, 1, ?) = ? OR substr(provider || ':' || model, 1, ?) = ?)")
        args += [len(model), model, len(model), model]
    sql = f"SELECT id, at, {', '.join(_FIELDS)} FROM llm_calls"
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += " ORDER BY id DESC"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(limit)
    rows = [LoggedCall(**dict(row)) for row in store.conn.execute(sql, args)]
    return rows[::-1]
