"""What ``noetic doctor`` reads of a SQLite store, opened as the store opens it when it
cannot write, so the doctor sees whatever ``noetic state`` sees and writes nothing."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import NamedTuple

from noetic.errors import StoreError


class SqliteHealth(NamedTuple):
    integrity: str  # SQLite's quick check: "ok", or what it found
    pending: list[str]  # the migrations the database still needs
    applied: set[str]  # the migrations it has (a newer Noetic's among them)
    how: str  # "" or why it was opened immutable (a read-only mount), for the report


def _open_read_only(db: Path) -> tuple[sqlite3.Connection, str]:
    """``mode=ro``, else ``immutable=1`` where SQLite cannot make its shared-memory file."""
    uri = db.resolve().as_uri()
    conn = sqlite3.connect(f"{uri}?mode=ro", uri=True)
    try:
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchone()
        return conn, ""
    except sqlite3.OperationalError:
        conn.close()
        conn = sqlite3.connect(f"{uri}?immutable=1", uri=True)
        return conn, "; read-only here: reading commands work, writing ones are refused"


def sqlite_health(db: Path) -> SqliteHealth:
    """The database's integrity and schema; :class:`StoreError` when it cannot be read."""
    from noetic.store.migrations import applied_in, pending

    try:
        conn, how = _open_read_only(db)
        try:
            integrity = conn.execute("PRAGMA quick_check").fetchone()[0]
            todo = pending(conn)
            applied = applied_in(conn)
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(str(exc)) from exc
    return SqliteHealth(str(integrity), todo, applied, how)
