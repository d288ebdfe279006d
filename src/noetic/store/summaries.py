"""``session_summaries``: one row per finished task, written at POSTFLIGHT, so recall never runs
a query per session; and ``recall_vectors``: per task and embedder, its embedding and the
columns recall scores with, appended in ``seq`` order when the task is embedded (see
:mod:`noetic.recall.index`). Rewriting a summary deletes its vectors, so the task is embedded
again."""

from __future__ import annotations

import json
import math
import struct

from noetic.plain import Plain
from noetic.store.base import BaseStore
from noetic.vector_names import VECTOR_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class RecallSummary(Plain):
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


def save_summary(store: BaseStore, summary: RecallSummary) -> None:
    row = summary.model_dump()
    for key in ("pre", "post", "delta"):
        row[key] = json.dumps(row[key])
    row["pre_vec"] = pack(summary.pre)
    row["delta_vec"] = pack(summary.delta)
    cols = ", ".join(row)
    marks = ", ".join("?" for _ in row)
    if store.dialect == "sqlite":  # a replaced row gets a new rowid, which recall's index watches
        sql = f"INSERT OR REPLACE INTO session_summaries ({cols}) VALUES ({marks})"
    else:
        sets = ", ".join(f"{k} = excluded.{k}" for k in row if k != "cascade_id")
        sql = (
            f"INSERT INTO session_summaries ({cols}) VALUES ({marks}) "
            f"ON CONFLICT (cascade_id) DO UPDATE SET {sets}"
        )
    with store.transaction() as conn:
        conn.execute("DELETE FROM recall_vectors WHERE cascade_id = ?", (summary.cascade_id,))
        conn.execute(sql, list(row.values()))


def load_summaries(store: BaseStore, cascade_ids: list[str]) -> dict[str, RecallSummary]:
    """Full summaries for the given tasks."""
    out = {}
    for start in range(0, len(cascade_ids), 500):
        chunk = cascade_ids[start : start + 500]
        rows = store.conn.execute(
            f"SELECT * FROM session_summaries WHERE cascade_id IN ({','.join('?' * len(chunk))})",
            chunk,
        )
        for r in rows:
            vectors = {key: json.loads(r[key]) for key in ("pre", "post", "delta")}
            out[r["cascade_id"]] = RecallSummary.from_row(r, **vectors)
    return out


VECTOR_COLUMNS = "seq, cascade_id, ai_id, project, calibration, learning, ended, pre_vec, delta_vec"


def pending(store: BaseStore, embedder: str, limit: int | None = None) -> list[Any]:
    """Summaries not yet embedded with ``embedder``, newest first: cascade id, task and the
    scoring columns."""
    sql = (
        "SELECT cascade_id, task, ai_id, project, calibration, learning, ended_at, pre_vec, "
        "delta_vec FROM session_summaries s WHERE NOT EXISTS (SELECT 1 FROM recall_vectors r "
        "WHERE r.embedder = ? AND r.cascade_id = s.cascade_id) ORDER BY ended_at DESC"
    )
    args: list[Any] = [embedder]
    if limit is not None:
        sql, args = sql + " LIMIT ?", [embedder, limit]
    rows: list[Any] = store.conn.execute(sql, args).fetchall()
    return rows


def pending_count(store: BaseStore, embedder: str) -> int:
    """How many summaries have no vectors for ``embedder`` (two counts; no join unless they
    differ)."""
    conn = store.conn
    total = conn.execute("SELECT count(*) FROM session_summaries").fetchone()[0]
    done = conn.execute(
        "SELECT count(*) FROM recall_vectors WHERE embedder = ?", (embedder,)
    ).fetchone()[0]
    if total == done:
        return 0
    return int(
        conn.execute(
            "SELECT count(*) FROM session_summaries s WHERE NOT EXISTS (SELECT 1 FROM "
            "recall_vectors r WHERE r.embedder = ? AND r.cascade_id = s.cascade_id)",
            (embedder,),
        ).fetchone()[0]
    )


def save_vectors(store: BaseStore, embedder: str, rows: list[Any], vectors: list[bytes]) -> None:
    """Append the vectors of ``rows`` (as returned by :func:`pending`). A task whose summary
    was rewritten meanwhile is skipped: it is pending again."""
    with store.transaction() as conn:
        store.order_appends(conn, "recall_vectors")
        for r, blob in zip(rows, vectors, strict=True):
            conn.execute(
                "INSERT INTO recall_vectors (embedder, cascade_id, ai_id, project, "
                "calibration, learning, ended, pre_vec, delta_vec, vector) "
                "SELECT ?, cascade_id, ai_id, project, calibration, learning, ?, pre_vec, "
                "delta_vec, ? FROM session_summaries WHERE cascade_id = ? AND task = ? "
                "ON CONFLICT DO NOTHING",
                (embedder, _epoch(r["ended_at"]), blob, r["cascade_id"], r["task"]),
            )


def vectors_since(store: BaseStore, embedder: str, seq: int) -> list[Any]:
    """The vector rows of ``embedder`` after ``seq``, in order."""
    rows: list[Any] = store.conn.execute(
        f"SELECT {VECTOR_COLUMNS}, vector FROM recall_vectors WHERE embedder = ? AND seq > ? "
        "ORDER BY seq",
        (embedder, seq),
    ).fetchall()
    return rows


def vector_state(store: BaseStore, embedder: str) -> tuple[int, int]:
    """``(generation, last seq)`` of ``embedder``'s vectors: what an index compares with."""
    gen, last = store.conn.execute(  # one statement: one round trip to a server
        "SELECT (SELECT generation FROM recall_generations WHERE embedder = ?), "
        "(SELECT max(seq) FROM recall_vectors WHERE embedder = ?)",
        (embedder, embedder),
    ).fetchone()
    return (gen or 0), (last or 0)


def cascade_ids(store: BaseStore, seqs: list[int]) -> dict[int, str]:
    if not seqs:  # `IN ()` is SQLite's alone
        return {}
    rows = store.conn.execute(
        f"SELECT seq, cascade_id FROM recall_vectors WHERE seq IN ({','.join('?' * len(seqs))})",
        seqs,
    )
    return {r[0]: r[1] for r in rows}


def _epoch(iso: str) -> float:
    from datetime import UTC, datetime

    at = datetime.fromisoformat(iso)
    return (at if at.tzinfo else at.replace(tzinfo=UTC)).timestamp()
