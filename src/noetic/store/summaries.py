"""``session_summaries``: one row per finished task, written at POSTFLIGHT, so recall reads one
table and never runs a query per session. Embeddings are filled on first recall (embedding at
POSTFLIGHT would add the model's load time to every CLI postflight)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.store.sqlite import Store


class RecallSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    cascade_id: str
    session_id: str
    ai_id: str
    project: str | None
    task: str
    ended_at: str
    pre: dict[str, float]
    post: dict[str, float]
    delta: dict[str, float]
    learning: float
    calibration: str
    confidence_pre: float
    confidence_post: float
    notes: str


def save_summary(store: Store, summary: RecallSummary) -> None:
    row = summary.model_dump()
    for key in ("pre", "post", "delta"):
        row[key] = json.dumps(row[key])
    cols = ", ".join(row)
    with store.transaction() as conn:
        conn.execute(
            f"INSERT OR REPLACE INTO session_summaries ({cols}) "
            f"VALUES ({', '.join('?' for _ in row)})",
            list(row.values()),
        )


def load_summaries(store: Store, *, ai_id: str | None = None) -> list[tuple[RecallSummary, Any]]:
    """Every summary with its stored embedding blob (or ``None``), oldest first."""
    sql = "SELECT * FROM session_summaries"
    args: list[Any] = []
    if ai_id is not None:
        sql, args = sql + " WHERE ai_id = ?", [ai_id]
    out = []
    for r in store.conn.execute(sql + " ORDER BY ended_at, cascade_id", args):
        data = {k: r[k] for k in RecallSummary.model_fields}
        for key in ("pre", "post", "delta"):
            data[key] = json.loads(data[key])
        out.append((RecallSummary(**data), (r["embedder"], r["embedding"])))
    return out


def save_embeddings(store: Store, embedder: str, rows: list[tuple[str, bytes]]) -> None:
    with store.transaction() as conn:
        conn.executemany(
            "UPDATE session_summaries SET embedder = ?, embedding = ? WHERE cascade_id = ?",
            [(embedder, blob, cid) for cid, blob in rows],
        )
