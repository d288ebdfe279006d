"""Copying a SQLite store into another store (``noetic migrate --to …``): a PostgreSQL one, or
another SQLite store, as ``docs/storage.md`` ("Moving a store") describes.

Every table the migrations made is copied row for row, parents before children (the order comes
from SQLite's foreign keys, and every ``session_id`` and ``cascade_id`` column counts as one), in
one transaction of the target, then verified: its row count and a checksum of every row (SHA-256
over the rows in key order, each value tagged with its type) must be the same on both sides, or
the transaction is rolled back. A target holding other rows is refused before anything is
written unless ``merge``: then a row whose key is taken there gets a new one, every row referring
to it is rewritten, and a table keyed by a name keeps the target's row (``kept``).

Not copied: ``schema_migrations`` (the target records its own), ``file_backlog`` (which local
files lag: the target writes none).
"""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
from collections.abc import Iterable, Iterator
from typing import Any, Final

from pydantic import BaseModel

from noetic.errors import StoreError, UsageError
from noetic.store.base import BaseStore
from noetic.store.rows import new_id

SKIPPED: Final = frozenset({"schema_migrations", "file_backlog", "sqlite_sequence"})
BATCH: Final = 1000


class TableCopy(BaseModel):
    table: str
    source_rows: int
    copied: int
    target_rows: int
    source_checksum: str
    target_checksum: str
    verified: bool
    rekeyed: int = 0  # rows merged in under a new key (their key was another row's there)
    kept: int = 0  # name-keyed rows the target already had otherwise: its own was kept


class CopyReport(BaseModel):
    target: str
    tables: list[TableCopy]
    merged: bool = False

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
    parents = {name: {parent for _, parent, _ in references(conn, name)} - {name} for name in names}
    ordered: list[str] = []
    while len(ordered) < len(names):
        ready = [n for n in names if n not in ordered and parents[n] <= set(ordered)]
        if not ready:
            raise StoreError(f"the store's tables refer to each other in a cycle: {parents}")
        ordered += ready
    return ordered


IMPLIED: Final = {"session_id": ("sessions", "id"), "cascade_id": ("cascades", "id")}
"""Columns that name a session or a task wherever they are, foreign key declared or not."""


def references(conn: sqlite3.Connection, table: str) -> list[tuple[str, str, str]]:
    """(column, parent table, parent column) for each column of ``table`` naming a row of
    another table (or of itself): its foreign keys, and the :data:`IMPLIED` ones."""
    found = {r[3]: (r[2], r[4] or "id") for r in conn.execute(f"PRAGMA foreign_key_list({table})")}
    columns = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
    for column, parent in IMPLIED.items():
        if column in columns and column not in found and table != parent[0]:
            found[column] = parent
    return [(column, parent, key) for column, (parent, key) in sorted(found.items())]


def _columns(conn: sqlite3.Connection, table: str) -> tuple[list[str], list[str]]:
    """(columns, primary-key columns in key order) of a SQLite table."""
    info = conn.execute(f"PRAGMA table_info({table})").fetchall()
    columns = [r[1] for r in info]
    key = [r[1] for r in sorted(info, key=lambda r: r[5]) if r[5] > 0]
    return columns, key or columns


def _quoted(names: Iterable[str]) -> str:
    return ", ".join(f'"{n}"' for n in names)


def _rows(conn: Any, table: str, columns: list[str], key: list[str]) -> Iterator[Any]:
    """Every row of ``table`` on ``conn`` (a connection or a transaction's), in key order, a
    batch at a time, so memory stays flat."""
    sql = f"SELECT {_quoted(columns)} FROM {table} ORDER BY {_quoted(key)}"
    offset = 0
    while True:
        batch = conn.execute(f"{sql} LIMIT ? OFFSET ?", (BATCH, offset)).fetchall()
        yield from batch
        if len(batch) < BATCH:
            return
        offset += BATCH


def _tagged(value: Any) -> str:
    if value is None:
        return "n"
    if isinstance(value, int):  # a bool too
        return f"i{int(value)}"
    if isinstance(value, float):
        return f"f{value.hex()}"
    if isinstance(value, bytes | memoryview):
        return f"b{bytes(value).hex()}"
    return f"t{value}"


def _tag(values: Iterable[Any]) -> str:
    return "\x1f".join(_tagged(v) for v in values)


def _digest(tags: Iterable[str]) -> str:
    """SHA-256 over row tags in sorted order: the same whatever order a backend's collation
    returns the rows in."""
    digest = hashlib.sha256()
    for tag in sorted(tags):
        digest.update(tag.encode("utf-8", "surrogatepass"))
        digest.update(b"\x1e")
    return digest.hexdigest()


def checksum(conn: Any, table: str, columns: list[str], key: list[str]) -> tuple[int, str]:
    """(rows, SHA-256 over them) of one table, the same on either backend for the same rows."""
    tags = [_tag(row) for row in _rows(conn, table, columns, key)]
    return len(tags), _digest(tags)


Plan = list[tuple[str, list[str], list[str]]]


def copy_store(
    source: BaseStore, target: BaseStore, *, target_name: str, merge: bool = False
) -> CopyReport:
    """Copy every table of the SQLite store ``source`` into ``target`` and verify each, in one
    transaction of the target (see the module's docstring; ``merge``: beside other rows)."""
    if source.dialect != "sqlite":
        raise StoreError("noetic migrate copies a SQLite store into another store")
    sqlite_conn: sqlite3.Connection = source.conn
    plan: Plan = [(t, *_columns(sqlite_conn, t)) for t in tables_in_order(sqlite_conn)]
    others = _others(source, target, plan)
    if others and not merge:
        held = ", ".join(f"{t} {n}" for t, n in others.items())
        raise UsageError(
            f"{target_name} already holds rows that are not this store's ({held}): nothing "
            "was written; a copy into it would leave a database mixing both",
            fix="pass --merge to bring this store's history in beside them (each row whose "
            "id is taken there gets a new one), or migrate into an empty database",
        )
    with target.transaction() as c:
        tables = _merge(source, target, c, plan) if others else _copy(source, target, c, plan)
        if target.queues_files:  # a SQLite target writes the sessions' files from the rows
            for (session_id,) in c.execute("SELECT id FROM sessions").fetchall():
                target._queue(c, session_id, all_reflex=True)
        bad = [t for t in tables if not t.verified]
        if bad:  # rolled back: the target stays as it was
            raise StoreError(
                f"the copy in {target_name} does not match this store, so it was rolled "
                "back: " + "; ".join(f"{t.table}: {t.source_rows} rows here, {t.target_rows} "
                                     "there" + ("" if t.source_rows != t.target_rows
                                                else ", contents differ") for t in bad),
                fix="check that nothing else writes to the target meanwhile, then run it again",
            )  # fmt: skip
    return CopyReport(target=target_name, tables=tables, merged=bool(others))


def _others(source: BaseStore, target: BaseStore, plan: Plan) -> dict[str, int]:
    """Per table, how many rows of the target are not rows of this store as they are here
    (none when the target is empty or an earlier copy of this store)."""
    found: dict[str, int] = {}
    for table, columns, key in plan:
        if target.conn.execute(f"SELECT 1 FROM {table} LIMIT 1").fetchone() is None:
            continue
        ours = {_tag(row) for row in _rows(source.conn, table, columns, key)}
        theirs = sum(_tag(row) not in ours for row in _rows(target.conn, table, columns, key))
        if theirs:
            found[table] = theirs
    return found


def _copy(source: BaseStore, target: BaseStore, c: Any, plan: Plan) -> list[TableCopy]:
    """Every row, ids and all, into a target holding none but this store's rows; verified."""
    tables = []
    for table, columns, key in plan:
        insert = _insert(table, columns) + " ON CONFLICT DO NOTHING"
        rows = (tuple(row) for row in _rows(source.conn, table, columns, key))
        copied = _insert_all(c, insert, rows)
        _advance_identity(target, c, table, columns, key)
        source_rows, source_sum = checksum(source.conn, table, columns, key)
        target_rows, target_sum = checksum(c, table, columns, key)
        tables.append(
            TableCopy(
                table=table, source_rows=source_rows, copied=max(copied, 0),
                target_rows=target_rows, source_checksum=source_sum,
                target_checksum=target_sum,
                verified=(source_rows, source_sum) == (target_rows, target_sum),
            )
        )  # fmt: skip
    return tables


def _merge(source: BaseStore, target: BaseStore, c: Any, plan: Plan) -> list[TableCopy]:
    """This store's rows beside the target's, re-keyed where a key is taken (module
    docstring), parents first; each table verified by reading the rows back."""
    moved: dict[str, dict[Any, Any]] = {}  # table -> this store's key -> the key there
    tables = []
    for table, columns, key in plan:
        refs = [(col, parent) for col, parent, _ in references(source.conn, table)]
        tables.append(_merge_table(source, c, table, columns, key, refs, moved))
        _advance_identity(target, c, table, columns, key)
    return tables


def _merge_table(
    source: BaseStore,
    c: Any,
    table: str,
    columns: list[str],
    key: list[str],
    refs: list[tuple[str, str]],
    moved: dict[str, dict[Any, Any]],
) -> TableCopy:
    at = {col: i for i, col in enumerate(columns)}
    keyed = [at[k] for k in key]
    mine_ids = [r[0] for r in source.conn.execute(f'SELECT "{key[0]}" FROM {table}')]
    # a key that can be re-keyed: an id, or an integer sequence (recall_vectors' seq); a name
    # (a token's, an embedder's) cannot
    single = len(key) == 1 and (key == ["id"] or all(isinstance(i, int) for i in mine_ids))
    body = [i for i in range(len(columns)) if i not in keyed]
    there = {tuple(row[i] for i in keyed): _tag(row) for row in _rows(c, table, columns, key)}
    bodies = {_tag(row[i] for i in body): row[keyed[0]] for row in _rows(c, table, columns, key)}
    own = moved.setdefault(table, {})
    ids = [k[0] for k in there if isinstance(k[0], int)]
    ids += mine_ids if single else []
    next_id = max([i for i in ids if isinstance(i, int)], default=0) + 1

    def mapped(row: Any, *, itself: bool) -> list[Any]:
        values = list(row)
        for col, parent in refs:
            if parent != table or itself:
                values[at[col]] = moved.get(parent, {}).get(values[at[col]], values[at[col]])
        return values

    rows = list(_rows(source.conn, table, columns, key))
    decided: list[tuple[Any, Any, bool]] = []  # (this store's key, key there, to insert)
    taken = set(there)
    kept = rekeyed = 0
    for row in rows:  # first the keys (a row may name a parent of its own table)
        values = mapped(row, itself=False)
        mine = tuple(values[i] for i in keyed)
        if there.get(mine) == _tag(values):
            decided.append((mine, mine, False))  # already there, as it is
        elif single and _tag(values[i] for i in body) in bodies:
            decided.append((mine, (bodies[_tag(values[i] for i in body)],), False))
        elif mine not in taken:
            decided.append((mine, mine, True))
            taken.add(mine)
        elif single:
            old = mine[0]
            if isinstance(old, int):
                new: Any = next_id
                next_id += 1
            else:
                new = new_id(str(old).split("_", 1)[0] if "_" in str(old) else "m")
            decided.append((mine, (new,), True))
            taken.add((new,))
            rekeyed += 1
        else:
            decided.append((mine, mine, False))  # a name both have: the target's stays
            kept += 1
        if single:
            own[mine[0]] = decided[-1][1][0]
    expected: dict[tuple[Any, ...], str] = {}
    added: list[tuple[Any, ...]] = []
    for row, (_, there_key, add) in zip(rows, decided, strict=True):
        values = mapped(row, itself=True)
        for i, v in zip(keyed, there_key, strict=True):
            values[i] = v
        if not add and there.get(tuple(there_key)) != _tag(values):
            continue  # a kept row, or one found under another key: nothing to check of ours
        expected[tuple(there_key)] = _tag(values)
        if add:
            added.append(tuple(values))
    copied = len(added)
    _insert_all(c, _insert(table, columns), added)
    found = {tuple(r[i] for i in keyed): _tag(r) for r in _rows(c, table, columns, key)}
    got = [found.get(k, "") for k in expected]
    return TableCopy(
        table=table, source_rows=len(rows), copied=copied, target_rows=len(found),
        source_checksum=_digest(expected.values()), target_checksum=_digest(got),
        rekeyed=rekeyed, kept=kept, verified=got == list(expected.values()),
    )  # fmt: skip


def _insert(table: str, columns: list[str]) -> str:
    return f"INSERT INTO {table} ({_quoted(columns)}) VALUES ({', '.join('?' for _ in columns)})"


def _insert_all(c: Any, insert: str, rows: Iterable[tuple[Any, ...]]) -> int:
    """Run ``insert`` for each of ``rows``, a batch at a time; how many rows it inserted."""
    inserted, left = 0, iter(rows)
    while batch := list(itertools.islice(left, BATCH)):
        inserted += c.executemany(insert, batch).rowcount
    return inserted


def _advance_identity(
    target: BaseStore, c: Any, table: str, columns: list[str], key: list[str]
) -> None:
    """On PostgreSQL, an identity column's next value past the ids copied in, so new rows do
    not collide."""
    if target.dialect != "postgresql" or "id" not in columns or key != ["id"]:
        return
    found = c.execute("SELECT pg_get_serial_sequence(?, 'id')", (table,)).fetchone()
    if found is None or found[0] is None:
        return  # a text id
    c.execute(
        f"SELECT setval(?, (SELECT COALESCE(max(id), 0) + 1 FROM {table}), false)", (found[0],)
    )
