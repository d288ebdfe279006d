"""Copying a SQLite store into a PostgreSQL one (``noetic migrate --to postgresql://…``).

Every table the migrations made is copied row for row, ids and all, parents before children
(the order comes from SQLite's foreign keys), in one PostgreSQL transaction: the copy lands whole
or not at all. A row already there under the same key is left as it is, so running the copy
again adds only what is new. Then each table is verified: its row count and a checksum of every
row (SHA-256 over the rows in key order, each value tagged with its type) must be the same on
both sides; a table that differs is reported by name and the command fails.

The target must hold this store and nothing else: a PostgreSQL store that already has other
rows (another machine's copy) fails the check, because integer ids from two SQLite files
collide. Several stores go into one by ``noetic sessions export`` and ``import``, which gives the
imported rows new ids.

Not copied: ``schema_migrations`` (the target records its own), ``file_backlog`` (which local
files lag: the target writes none).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, Final

from pydantic import BaseModel

from noetic.errors import StoreError
from noetic.store.base import BaseStore

SKIPPED: Final = frozenset({"schema_migrations", "file_backlog", "sqlite_sequence"})
BATCH: Final = 1000


class TableCopy(BaseModel):
    table: str
    source_rows: int
    copied: int
    target_rows: int
    source_checksum: str
    target_checksum: str

    @property
    def verified(self) -> bool:
        return (self.source_rows, self.source_checksum) == (
            self.target_rows,
            self.target_checksum,
        )


class CopyReport(BaseModel):
    target: str
    tables: list[TableCopy]

    @property
    def verified(self) -> bool:
        return all(t.verified for t in self.tables)

    @property
    def copied(self) -> int:
        return sum(t.copied for t in self.tables)


def tables_in_order(conn: sqlite3.Connection) -> list[str]:
    """The store's tables, each after the tables its foreign keys name."""
    names = sorted(
        r[0]
        for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        if r[0] not in SKIPPED
    )
    parents = {
        name: {r[2] for r in conn.execute(f"PRAGMA foreign_key_list({name})")} - {name}
        for name in names
    }
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= set(ordered)]
        if not ready:
            raise StoreError(f"the store's tables refer to each other in a cycle: {parents}")
        ordered += ready
    return ordered


def _columns(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[str]]:
    """(columns, primary-key columns in key order) of a SQLite table."""
    info = conn.execute(f"PRAGMA table_info({table})").fetchall()
    columns = [r[1] for r in info]
    key = [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5] > 0]
    return columns, key or columns


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _rows(store: BaseStore, table: str, columns: list[str], key: list[str]) -> Iterator[Any]:
    """Every row in key order, a batch at a time, so memory stays flat."""
    sql = f"SELECT {_quoted(columns)} FROM {table} ORDER BY {_quoted(key)}"
    offset = 0
    while True:
        batch = store.conn.execute(f"{sql} LIMIT ? OFFSET ?", (BATCH, offset)).fetchall()
        yield from batch
        if len(batch) < BATCH:
            return
        offset += BATCH


def _tagged(value: Any) -> str:
    if value is None:
        return "n"
    if isinstance(value, bool):
        return f"i{int(value)}"
    if isinstance(value, int):
        return f"i{value}"
    if isinstance(value, float):
        return f"f{value.hex()}"
    if isinstance(value, bytes | memoryview):
        return f"b{bytes(value).hex()}"
    return f"t{value}"


def checksum(store: BaseStore, table: str, columns: list[str], key: list[str]) -> tuple[int, str]:
    """(rows, SHA-256 over them) of one table, the same on either backend for the same rows."""
    digest = hashlib.sha256()
    count = 0
    for row in _rows(store, table, columns, key):
        digest.update("\x1f".join(_tagged(v) for v in row).encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
        count += 1
    return count, digest.hexdigest()


def copy_store(source: BaseStore, target: BaseStore, *, target_name: str) -> CopyReport:
    """Copy every table of the SQLite store ``source`` into ``target`` and verify each."""
    if source.dialect != "sqlite" or target.dialect != "postgresql":
        raise StoreError("noetic migrate copies a SQLite store into a PostgreSQL one")
    sqlite_conn: sqlite3.Connection = source.conn
    plan = [(t, *_columns(sqlite_conn, t)) for t in tables_in_order(sqlite_conn)]
    copied: dict[str, int] = {}
    with target.transaction() as c:
        for table, columns, key in plan:
            insert = (
                f"INSERT INTO {table} ({_quoted(columns)}) VALUES "
                f"({', '.join('?' for _ in columns)}) ON CONFLICT DO NOTHING"
            )
            copied[table] = 0
            batch: list[Any] = []
            for row in _rows(source, table, columns, key):
                batch.append(tuple(row))
                if len(batch) >= BATCH:
                    copied[table] += c.executemany(insert, batch).rowcount
                    batch = []
            if batch:
                copied[table] += c.executemany(insert, batch).rowcount
            if "id" in columns and key == ["id"]:
                _advance_identity(c, table)
    tables = []
    for table, columns, key in plan:
        source_rows, source_sum = checksum(source, table, columns, key)
        target_rows, target_sum = checksum(target, table, columns, key)
        tables.append(
            TableCopy(
                table=table,
                source_rows=source_rows,
                copied=max(copied[table], 0),
                target_rows=target_rows,
                source_checksum=source_sum,
                target_checksum=target_sum,
            )
        )
    return CopyReport(target=target_name, tables=tables)


def _advance_identity(c: Any, table: str) -> None:
    """An identity column's next value past the ids copied in, so new rows do not collide."""
    found = c.execute("SELECT pg_get_serial_sequence(?, 'id')", (table,)).fetchone()
    if found is None or found[0] is None:
        return  # a text id
    c.execute(
        f"SELECT setval(?, (SELECT COALESCE(max(id), 0) + 1 FROM {table}), false)", (found[0],)
    )
