"""``session_summaries``: one row per finished task, written at POSTFLIGHT, so recall reads one
table and never runs a query per session. Embeddings are filled on first recall (embedding at
POSTFLIGHT would add the model's load time to every CLI postflight)."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.store.sqlite import Store
from noetic.vectors import VECTOR_NAMES


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


def pack(vectors: dict[str, float]) -> bytes:
    """13 float32 in canonical order, NaN where a vector is absent (no numpy: this runs at
    every POSTFLIGHT, where importing numpy would cost more than the write)."""
    return struct.pack(f"{len(VECTOR_NAMES)}f", *(vectors.get(v, math.nan) for v in VECTOR_NAMES))


def save_summary(store: Store, summary: RecallSummary) -> None:
    row = summary.model_dump()
    for key in ("pre", "post", "delta"):
        row[key] = json.dumps(row[key])
    row["pre_vec"] = pack(summary.pre)
    row["delta_vec"] = pack(summary.delta)
    cols = ", ".join(row)
    with store.transaction() as conn:
        conn.execute(
            f"INSERT OR REPLACE INTO session_summaries ({cols}) "
            f"VALUES ({', '.join('?' for _ in row)})",
            list(row.values()),
        )


def scoring_columns(store: Store, *, ai_id: str | None = None) -> list[Any]:
    """What recall scores with, for every summary (oldest first): no JSON parsing."""
    sql = (
        "SELECT cascade_id, task, project, calibration, learning, ended_at, embedder, embedding, "
        "pre_vec, delta_vec FROM session_summaries"
    )
    args: list[Any] = []
    if ai_id is not None:
        sql, args = sql + " WHERE ai_id = ?", [ai_id]
    return store.conn.execute(sql + " ORDER BY ended_at, cascade_id", args).fetchall()


def load_summaries(store: Store, cascade_ids: list[str]) -> dict[str, RecallSummary]:
    """Full summaries for the given tasks."""
    out = {}
    for start in range(0, len(cascade_ids), 500):
        chunk = cascade_ids[start : start + 500]
        rows = store.conn.execute(
            f"SELECT * FROM session_summaries WHERE cascade_id IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        for r in rows:
            data = {k: r[k] for k in RecallSummary.model_fields}
            for key in ("pre", "post", "delta"):
                data[key] = json.loads(data[key])
            out[r["cascade_id"]] = RecallSummary(**data)
    return out


def save_embeddings(store: Store, embedder: str, rows: list[tuple[str, bytes]]) -> None:
    with store.transaction() as conn:
        conn.executemany(
            "UPDATE session_summaries SET embedder = ?, embedding = ? WHERE cascade_id = ?",
            [(embedder, blob, cid) for cid, blob in rows],
        )
