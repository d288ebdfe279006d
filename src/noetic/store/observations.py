"""Observer-chain runs, their observations, and the pattern cache's rows."""

from __future__ import annotations

import json
from typing import Any

from noetic.store.base import BaseStore
from noetic.store.rows import new_id, now


def save_run(store: BaseStore, run: dict[str, Any], observations: list[dict[str, Any]]) -> str:
    """Persist one chain run and its observations in one transaction; returns the run id."""
    run_id = new_id("o")
    stamp = now()
    row = {"id": run_id, "at": stamp, "query": run["query"], "provider": run["provider"],
           "model": run["model"], "stages": run["stages"], "reason": run["reason"],
           "model_calls": run["model_calls"], "cache_hit": int(run["cache_hit"]),
           "stage_budget": run["stage_budget"], "answer": run["answer"],
           "confidence": run["confidence"], "note": run["note"]}  # fmt: skip
    with store.transaction() as conn:
        store.insert(conn, "observer_runs", row)
        for o in observations:
            store.insert(conn, "observations", {
                "run_id": run_id, "stage": o["stage"], "layers": json.dumps(list(o["layers"])),
                "confidence": o["confidence"], "content": o["content"], "at": stamp,
            })  # fmt: skip
    return run_id


def runs(store: BaseStore) -> list[dict[str, Any]]:
    return [dict(r) for r in store.conn.execute("SELECT * FROM observer_runs ORDER BY at, id")]


def cache_vectors(
    store: BaseStore, embedder: str, born_after: float
) -> list[tuple[int, bytes, bytes]]:
    """``(id, query embedding, answer embedding)`` of every live entry."""
    rows = store.conn.execute(
        "SELECT id, embedding, answer_embedding FROM pattern_cache "
        "WHERE embedder = ? AND created_at >= ? ORDER BY id",
        (embedder, born_after),
    )
    return [(r["id"], r["embedding"], r["answer_embedding"]) for r in rows]


def cache_newest(store: BaseStore) -> int:
    """The id of the newest entry (0 for none): how a cache sees that another run added one."""
    row = store.conn.execute("SELECT COALESCE(MAX(id), 0) AS newest FROM pattern_cache").fetchone()
    return int(row["newest"])


def cache_expire(store: BaseStore, born_before: float) -> int:
    return store.write("DELETE FROM pattern_cache WHERE created_at < ?", (born_before,))


def cache_touch(store: BaseStore, entry_id: int, at: float) -> dict[str, Any]:
    sql = "UPDATE pattern_cache SET last_used_at = ?, hits = hits + 1 WHERE id = ?"
    store.write(sql, (at, entry_id))
    return cache_entry(store, entry_id)


def cache_entry(store: BaseStore, entry_id: int) -> dict[str, Any]:
    row = store.conn.execute("SELECT * FROM pattern_cache WHERE id = ?", (entry_id,)).fetchone()
    return {**dict(row), "layers": tuple(json.loads(row["layers"]))}


def cache_add(store: BaseStore, entry: dict[str, Any], max_size: int) -> None:
    """Insert an entry, then evict the least recently used beyond ``max_size``."""
    with store.transaction() as conn:
        conn.execute(
            "INSERT INTO pattern_cache (query, embedder, embedding, answer, answer_embedding, "
            "confidence, layers, created_at, last_used_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (entry["query"], entry["embedder"], entry["embedding"], entry["answer"],
             entry["answer_embedding"], entry["confidence"], json.dumps(list(entry["layers"])),
             entry["at"], entry["at"]),
        )  # fmt: skip
        count = conn.execute("SELECT COUNT(*) FROM pattern_cache").fetchone()[0]
        if count > max_size:
            conn.execute(
                "DELETE FROM pattern_cache WHERE id IN (SELECT id FROM pattern_cache "
                "ORDER BY last_used_at, id LIMIT ?)",
                (count - max_size,),
            )
