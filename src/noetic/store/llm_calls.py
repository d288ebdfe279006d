"""The ``llm_calls`` table: every model call attempt, with tokens, latency and outcome."""

from __future__ import annotations

from noetic.llm.base import LLMCall
from noetic.store.sqlite import Store, now

_FIELDS = tuple(LLMCall.model_fields)


def record_llm_call(store: Store, call: LLMCall) -> None:
    data = call.model_dump()
    cols = ", ".join(("at", *_FIELDS))
    marks = ", ".join("?" for _ in range(len(_FIELDS) + 1))
    with store.transaction() as conn:
        conn.execute(
            f"INSERT INTO llm_calls ({cols}) VALUES ({marks})",
            [now(), *(data[f] for f in _FIELDS)],
        )


def llm_calls(
    store: Store, *, session_id: str | None = None, cascade_id: str | None = None
) -> list[LLMCall]:
    sql = f"SELECT {', '.join(_FIELDS)} FROM llm_calls"
    args: list[str] = []
    if session_id is not None:
        sql += " WHERE session_id = ?"
        args.append(session_id)
    if cascade_id is not None:
        sql += (" AND" if args else " WHERE") + " cascade_id = ?"
        args.append(cascade_id)
    return [LLMCall(**dict(row)) for row in store.conn.execute(sql + " ORDER BY id", args)]
