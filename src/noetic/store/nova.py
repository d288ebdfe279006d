"""NovaProcess runs and their turns.

A run's row holds its question, settings, status, the people's inputs and, once it ends, its
result. Each turn is written in its own transaction the moment it finishes, keyed by its
sequence number and by ``round:node:persona``; a resumed run reads them back and replays them
instead of calling the model again.
"""

from __future__ import annotations

import json
from typing import Any

from noetic.store import reads
from noetic.store.base import BaseStore
from noetic.store.rows import new_id, now, update_sql


def create_run(
    store: BaseStore,
    question: str,
    settings: dict[str, Any],
    *,
    session_id: str | None = None,
) -> str:
    run_id = new_id("n")
    row = {"id": run_id, "session_id": session_id, "question": question, "status": "running",
           "settings": json.dumps(settings), "created_at": now()}  # fmt: skip
    with store.transaction() as conn:
        store.insert(conn, "nova_runs", row)
    return run_id


def save_turn(store: BaseStore, run_id: str, seq: int, key: str, turn: dict[str, Any]) -> None:
    row = {"run_id": run_id, "seq": seq, "key": key, "turn": json.dumps(turn), "at": now()}
    with store.transaction() as conn:
        store.insert(conn, "nova_turns", row)


def drop_turn(store: BaseStore, run_id: str, key: str) -> None:
    """Forget one turn, so a resumed run asks for it again (a final recommendation that could
    not be read)."""
    store.write("DELETE FROM nova_turns WHERE run_id = ? AND key = ?", (run_id, key))


def update_run(store: BaseStore, run_id: str, **fields: Any) -> None:
    """Set ``status``, ``cascade_id``, ``inputs``, ``result`` or ``settings`` (JSON-encoded as
    needed)."""
    allowed = ("status", "cascade_id", "inputs", "result", "ended_at", "settings")
    sql, values = update_sql("nova_runs", fields, allowed, ("inputs", "result", "settings"))
    store.write(sql + " WHERE id = ?", [*values, run_id])


def get_run(store: BaseStore, run_id: str) -> dict[str, Any]:
    """A run by id or unique id prefix."""
    return _decoded(reads.run_row(store, "nova_runs", run_id, "Nova run", "noetic nova runs"))


def turns(store: BaseStore, run_id: str) -> list[dict[str, Any]]:
    rows = store.conn.execute(
        "SELECT turn FROM nova_turns WHERE run_id = ? ORDER BY seq", (run_id,)
    )
    return [json.loads(r["turn"]) for r in rows]


def runs(store: BaseStore) -> list[dict[str, Any]]:
    """Every run, oldest first, with settings, inputs and result decoded."""
    return [
        _decoded(r) for r in store.conn.execute("SELECT * FROM nova_runs ORDER BY created_at, id")
    ]


def _decoded(row: Any) -> dict[str, Any]:
    return {**dict(row), **{k: json.loads(row[k]) for k in ("settings", "inputs", "result")}}


def run_outcomes(store: BaseStore) -> list[tuple[str, float]]:
    """``(run id, outcome score)`` for every run whose task has a recorded outcome (the latest
    outcome of each task)."""
    rows = store.conn.execute(
        "SELECT r.id AS run_id, o.score AS score FROM nova_runs r "
        "JOIN outcomes o ON o.cascade_id = r.cascade_id "
        "WHERE o.id = (SELECT MAX(id) FROM outcomes WHERE cascade_id = r.cascade_id) "
        "ORDER BY r.created_at, r.id"
    )
    return [(r["run_id"], float(r["score"])) for r in rows]
