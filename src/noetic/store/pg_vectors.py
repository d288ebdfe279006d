"""pgvector on a PostgreSQL store: recall's similarity search in the server, through an HNSW
index (cosine), when the server has the ``vector`` extension.

``recall_vectors`` stays the source of truth (its float32 blobs are what every backend reads);
this module keeps a derived table per embedder, ``recall_hnsw_<embedder>`` (``seq``, ``ai_id``,
``project``, ``embedding vector(DIM)``, an HNSW index with ``vector_cosine_ops``), in step with
the recall index's rows: rows past its last ``seq`` are copied in, and a new generation (a
rewritten summary) empties it first. A query asks the server for the ``k`` nearest rows in the
recall's scope (``ORDER BY embedding <=> query LIMIT k``, the scope as ``WHERE``), with
``hnsw.ef_search`` at least ``k`` and pgvector's iterative scan, so a filtered scope still gets
``k`` rows when it has them.

Without the extension (or on a read-only store, which may not create the table) :func:`nearest`
returns ``None`` and recall searches exactly, as on SQLite. Nothing here is imported on a
SQLite store.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import numpy as np
import psycopg

from noetic.store.derived_files import safe_name

_UNSET = object()
_SCHEMAS: dict[str, str | None] = {}  # per store URL: the extension's schema, or None
_SYNCED: dict[tuple[str, str], tuple[int, int]] = {}  # (url, table): (generation, seq)
_LOCK = threading.Lock()
_ADVISORY = 0x6E6F65  # one syncing process at a time per table ("noe")


def available(store: Any) -> str | None:
    """The schema holding pgvector's types on the store's server (created there if the server
    has the extension and we may), or ``None``: then recall searches exactly."""
    found = _SCHEMAS.get(store.url, _UNSET)
    if found is not _UNSET:
        return found  # type: ignore[return-value]
    schema: str | None = None
    with contextlib.suppress(psycopg.Error), store._connection() as conn:
        has = conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'").fetchone()
        if has is not None:
            if not store.read_only:
                with contextlib.suppress(psycopg.Error):
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            row = conn.execute(
                "SELECT extnamespace::regnamespace::text AS s, extversion AS v FROM pg_extension "
                "WHERE extname = 'vector'"
            ).fetchone()
            schema = row["s"] if row is not None and recent_enough(row["v"]) else None
    _SCHEMAS[store.url] = schema
    return schema


def recent_enough(version: str) -> bool:
    """pgvector 0.8 or later: the iterative index scan a filtered scope needs to get its ``k``
    rows (an older one returns fewer); with an older one recall searches exactly."""
    try:
        major, minor = (int(part) for part in version.split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (0, 8)


def table_name(embedder: str) -> str:
    return "recall_hnsw_" + safe_name(embedder).lower().replace("-", "_").replace(".", "_")


def _literal(rows: Any) -> list[str]:
    """pgvector's text form of each row (``[0.25, -0.5, …]``), exact for float32."""
    return [str(row) for row in np.asarray(rows, np.float32).tolist()]


def sync(store: Any, idx: Any, schema: str) -> str:
    """Bring the embedder's HNSW table in step with the recall index ``idx``; its name."""
    table = table_name(idx.embedder)
    key = (store.url, table)
    if _SYNCED.get(key) == (idx.generation, idx.seq):
        return table
    vec = f"{schema}.vector"
    with _LOCK, store._connection() as conn, conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(%s, hashtext(%s))", (_ADVISORY, table))
        conn.execute(
            f"CREATE TABLE IF NOT EXISTS {table} (seq BIGINT PRIMARY KEY, generation BIGINT "
            f"NOT NULL, ai_id TEXT NOT NULL, project TEXT, embedding {vec}({idx.dimension}) "
            "NOT NULL)"
        )
        row = conn.execute(f"SELECT min(generation) AS g, max(seq) AS s FROM {table}").fetchone()
        have_gen, have_seq = row["g"], row["s"] or 0
        if have_gen is not None and have_gen != idx.generation:
            conn.execute(f"TRUNCATE {table}")
            have_seq = 0
        meta = idx.meta
        start = int(np.searchsorted(meta["seq"], have_seq, side="right"))
        if start < idx.rows:
            ais, projects = idx.codes["ais"], idx.codes["projects"]
            part = meta[start:]
            texts = _literal(idx.vectors[start:])
            with conn.cursor().copy(
                f"COPY {table} (seq, generation, ai_id, project, embedding) FROM STDIN"
            ) as copy:
                for i, m in enumerate(part):
                    copy.write_row((int(m["seq"]), idx.generation, ais[int(m["ai"])],
                                    projects[int(m["project"])], texts[i]))  # fmt: skip
        # built once over the rows copied (much faster than growing it row by row), then kept
        conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
        conn.execute(
            f"CREATE INDEX IF NOT EXISTS {table}_hnsw ON {table} USING hnsw "
            f"(embedding {schema}.vector_cosine_ops)"
        )
    _SYNCED[key] = (idx.generation, idx.seq)
    return table


def nearest(
    store: Any,
    idx: Any,
    query: Any,
    *,
    positions: Any,
    ai_id: str | None,
    project: str | None,
    all_projects: bool,
    k: int,
) -> Any | None:
    """Cosine similarities over the scope's rows (``positions`` into ``idx``, or every row):
    the ``k`` nearest from the HNSW index, ``-2`` for the rows it did not return (they are
    beyond the shortlist). ``None`` when the server has no pgvector: search exactly."""
    schema = None if store.read_only else available(store)
    if schema is None or idx.rows == 0:
        return None
    table = sync(store, idx, schema)
    target = _literal([query])[0]
    where: list[str] = []
    scope: list[Any] = []
    if ai_id is not None:
        where.append("ai_id = %s")
        scope.append(ai_id)
    if not all_projects:
        where.append("project IS NULL" if project is None else "project = %s")
        if project is not None:
            scope.append(project)
    clause = ("WHERE " + " AND ".join(where)) if where else ""
    with store._connection() as conn, conn.transaction():
        conn.execute(f"SET LOCAL hnsw.ef_search = {max(40, min(int(k), 1000))}")
        conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
        rows = conn.execute(
            f"SELECT seq, 1 - (embedding OPERATOR({schema}.<=>) %s::{schema}.vector) AS sim "
            f"FROM {table} {clause} ORDER BY embedding OPERATOR({schema}.<=>) "
            f"%s::{schema}.vector LIMIT %s",
            [target, *scope, target, k],
        ).fetchall()
    seqs = idx.meta["seq"] if positions is None else idx.meta["seq"][positions]
    if not rows:  # a scope with rows always has a nearest one: the table lags; search exactly
        return None
    out = np.full(len(seqs), -2.0, np.float32)
    found = np.array([r["seq"] for r in rows], np.int64)
    at = np.searchsorted(seqs, found)
    ok = (at < len(seqs)) & (seqs[np.minimum(at, len(seqs) - 1)] == found)
    out[at[ok]] = np.array([r["sim"] for r in rows], np.float32)[ok]
    return out


def forget(store: Any) -> None:
    """Drop what this process remembers of ``store``'s server (a test's fresh schema)."""
    with _LOCK:
        _SCHEMAS.pop(store.url, None)
        for key in [k for k in _SYNCED if k[0] == store.url]:
            _SYNCED.pop(key)
