"""The ``tokens`` table (migration m018): who may use ``noetic serve``, kept as SHA-256 hashes.

Plain SQL both backends run (the PostgreSQL store translates the ``?`` marks). The rules (what a
name may be, how a token is made and checked) are :mod:`noetic.operations.access_tokens`'.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from noetic.store.rows import now

if TYPE_CHECKING:
    from noetic.store.base import BaseStore

_COLUMNS = "name, read_only, created_at, revoked_at"


def insert_token(store: BaseStore, name: str, digest: str, *, read_only: bool) -> dict[str, Any]:
    """Add a token row; returns it (without the hash). The caller has checked the name is new."""
    row = {"name": name, "hash": digest, "read_only": int(read_only), "created_at": now()}
    with store.transaction() as c:
        store.insert(c, "tokens", row)
    return {"name": name, "read_only": read_only, "created_at": row["created_at"],
            "revoked_at": None}  # fmt: skip


def token_rows(store: BaseStore, name: str | None = None) -> list[dict[str, Any]]:
    """Every token (or the one called ``name``), oldest first, without hashes."""
    where, args = (" WHERE name = ?", (name,)) if name is not None else ("", ())
    rows = store.conn.execute(
        f"SELECT {_COLUMNS} FROM tokens{where} ORDER BY created_at, name", args
    ).fetchall()
    return [_row(r) for r in rows]


def token_by_hash(store: BaseStore, digest: str) -> dict[str, Any] | None:
    """The token whose hash is ``digest`` (revoked or not), else None."""
    row = store.conn.execute(f"SELECT {_COLUMNS} FROM tokens WHERE hash = ?", (digest,)).fetchone()
    return None if row is None else _row(row)


def revoke_token(store: BaseStore, name: str) -> bool:
    """Mark ``name`` revoked now; False when it was revoked already."""
    sql = "UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL"
    return bool(store.write(sql, (now(), name)))


def any_live_token(store: BaseStore) -> bool:
    """Whether any token is not revoked (what a server asks on each request without a live
    token of its own: it stops at the first such row)."""
    row = store.conn.execute("SELECT 1 FROM tokens WHERE revoked_at IS NULL LIMIT 1").fetchone()
    return row is not None


def _row(row: Any) -> dict[str, Any]:
    return {**dict(row), "read_only": bool(row["read_only"])}  # the columns of _COLUMNS
