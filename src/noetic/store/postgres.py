"""The PostgreSQL store: one database for a team's agents on many machines.

The same store as :mod:`noetic.store.sqlite` (everything it holds and reads is
:class:`~noetic.store.base.BaseStore`), over psycopg 3 with a connection pool. The SQL is the
store's own, written once for both databases (:mod:`noetic.store.pg_sql` adapts placeholders and
column types); there is no ORM between them, because the SQLite path must stay as fast as it is
and load nothing of this one, and because the statements are few and plain.

- Reads (``store.conn.execute``) borrow a pooled connection in autocommit mode, fetch every row
  and give it back; a read that finds its connection dropped (the pool discards it) is tried
  again on another, a few times. Connections are not probed before use: a probe would double
  every read's round trips, and a dead one is found by the first statement anyway.
- A logical write (:meth:`PostgresStore.transaction`) is one transaction on one connection. A
  connection found dead before the transaction begins is replaced and the begin retried; one
  lost after that (the server restarted, the backend terminated) rolls the whole write back, as
  PostgreSQL does, and raises :class:`StoreError` saying it was not applied. One lost while
  committing raises saying the write is either wholly applied or not at all.
- A session's sequence numbers are taken under a row lock on the session
  (``SELECT … FOR NO KEY UPDATE``), so concurrent writers on many machines number its
  assessments 1, 2, 3… with no gap and no repeat (``UNIQUE (session_id, seq)`` backs it).
- Events are append-only: triggers refuse ``UPDATE``, ``DELETE`` and ``TRUNCATE``.
- Session files: a team store writes none by default (the rows are the truth and
  ``noetic sessions export`` writes any session's document on demand). With ``write_files``
  (``files = true`` under ``[store]``) a process writes the JSON documents and reflex logs of
  the sessions it wrote to, under its local directory, when it flushes or closes.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from noetic.errors import StoreError
from noetic.store import requests
from noetic.store.base import BaseStore
from noetic.store.mirror import Mirror
from noetic.store.pg_migrations import LOCK_KEY, migrate
from noetic.store.pg_sql import statement
from noetic.store.writer import stamped

URL_SCHEMES: Final = ("postgresql://", "postgres://")
# Tables whose rows have an integer id that an insert returns.
_INTEGER_IDS: Final = frozenset(
    {
        "assessments",
        "investigations",
        "events",
        "llm_calls",
        "outcomes",
        "profile_adjustments",
        "observations",
        "pattern_cache",
        "checkpoints",
        "file_backlog",
    }
)
_APPEND_LOCKS: Final = {"events": 1, "recall_vectors": 2}
CONNECT_TIMEOUT_S: Final = 10.0
BEGIN_ATTEMPTS: Final = 5


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


def safe_url(url: str) -> str:
    """The URL without its password, for messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    netloc = f"{parts.username}:***@{host}" if parts.username else host
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


class Row:
    """A row read by name (``row["seq"]``) or position (``row[0]``), unpacked as a tuple, and
    turned into a dict by ``dict(row)``, as :class:`sqlite3.Row` is."""

    __slots__ = ("_index", "_values")

    def __init__(self, values: Sequence[Any], index: dict[str, int]) -> None:
        self._values = values
        self._index = index

    def __getitem__(self, key: str | int) -> Any:
        if isinstance(key, str):
            return self._values[self._index[key]]
        return self._values[key]

    def keys(self) -> list[str]:
        return list(self._index)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._index, self._values, strict=True))!r})"


def _row_factory(cursor: Any) -> Any:
    description = cursor.description
    if description is None:
        return tuple
    index = {column.name: i for i, column in enumerate(description)}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


class Result:
    """A statement's rows, fetched whole (the connection has gone back to the pool)."""

    __slots__ = ("_at", "_rows", "lastrowid", "rowcount")

    def __init__(self, rows: list[Any], rowcount: int, lastrowid: int | None = None) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount
        self.lastrowid = lastrowid

    def fetchone(self) -> Any:
        if self._at >= len(self._rows):
            return None
        self._at += 1
        return self._rows[self._at - 1]

    def fetchall(self) -> list[Any]:
        rest, self._at = self._rows[self._at :], len(self._rows)
        return rest

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())


def _params(params: Any) -> list[Any]:
    # SQLite stores a bool as 0/1 in an INTEGER column; PostgreSQL wants the integer
    return [int(p) if isinstance(p, bool) else p for p in params]


class Connection:
    """One psycopg connection with the store's SQL translated: what a transaction yields."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Any = ()) -> Result:
        cursor = self._conn.execute(statement(sql), _params(params))
        rows = cursor.fetchall() if cursor.description else []
        return Result(rows, cursor.rowcount)

    def executemany(self, sql: str, seq: Any) -> Result:
        with self._conn.cursor() as cursor:
            cursor.executemany(statement(sql), [_params(p) for p in seq])
            return Result([], cursor.rowcount)


class Reader:
    """``store.conn``: each read on a pooled connection, tried again on another if the
    connection was lost (reads change nothing, so trying again is safe)."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def execute(self, sql: str, params: Any = ()) -> Result:
        for attempt in range(BEGIN_ATTEMPTS):
            try:
                with self._store._connection() as conn:
                    return Connection(conn).execute(sql, params)
            except psycopg.OperationalError as exc:
                if attempt == BEGIN_ATTEMPTS - 1 or not _lost(exc):
                    raise self._store._unreachable(exc) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._store.pool.close()


def _lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection itself failed (not the statement)."""
    return isinstance(exc, psycopg.OperationalError) and not isinstance(
        exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable
    )


class PostgresStore(BaseStore):
    """A Noetic store in a PostgreSQL database, named by a ``postgresql://`` URL."""

    dialect = "postgresql"
    queues_files = False

    def __init__(
        self,
        url: str,
        *,
        home: Path | str | None = None,
        pool_size: int = 4,
        read_only: bool = False,
        migrate_schema: bool = True,
        write_files: bool = False,
        hnsw: bool = False,
    ) -> None:
        """Connect (waiting up to :data:`CONNECT_TIMEOUT_S`) and apply pending migrations.

        ``home``: the local directory for what is not shared (profiles, configuration);
        ``read_only``: every write raises :class:`StoreError`; ``write_files``: the session
        JSON documents and reflex logs of the sessions this store writes to go under ``home``
        (at :meth:`flush_files` and :meth:`close`), as a SQLite store's do; ``hnsw``: recall
        searches pgvector's HNSW index when the server has the extension
        (:mod:`noetic.store.pg_vectors`), instead of the exact in-process search."""
        if not is_url(url):
            raise StoreError(f"not a PostgreSQL URL: {safe_url(url)!r}")
        self.url = url
        self.where = safe_url(url)
        self.home = Path(home) if home is not None else Path.cwd() / ".noetic"
        self.write_files = write_files
        self.hnsw = hnsw
        self.background = False
        self._behind: dict[str, tuple[set[int], bool]] = {}
        self._behind_lock = threading.Lock()
        self.read_only = read_only
        self.mirror = Mirror(self)
        self._writing = threading.RLock()
        self._grown = OrderedDict()
        self.pool = ConnectionPool(
            url,
            min_size=1,
            max_size=max(1, pool_size),
            kwargs={"autocommit": True, "row_factory": _row_factory},
            timeout=CONNECT_TIMEOUT_S,
            name="noetic",
            open=False,
        )
        try:
            self.pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
        except PoolTimeout as exc:
            self.pool.close()
            raise self._unreachable(exc) from exc
        self.conn = Reader(self)
        if migrate_schema:
            try:
                with self._connection() as conn:
                    migrate(conn, self.where)
            except BaseException:
                self.pool.close()
                raise
        self._opened()

    def _queue(
        self,
        c: Any,
        session_id: str,
        *,
        assessment_id: int | None = None,
        all_reflex: bool = False,
    ) -> None:
        """The sessions this process wrote to, for its own files: other machines' writes are
        theirs to mirror, so nothing goes into the shared ``file_backlog``."""
        if not self.write_files:
            return
        with self._behind_lock:
            ids, whole = self._behind.get(session_id, (set(), False))
            if assessment_id is not None:
                ids.add(assessment_id)
            self._behind[session_id] = (ids, whole or all_reflex)

    def _files_changed(self) -> None:
        """Files are written at :meth:`flush_files` and :meth:`close` (and at exit)."""

    def flush_files(self) -> int:
        """Write the files of the sessions written to since the last flush; returns how many
        sessions."""
        with self._behind_lock:
            behind, self._behind = self._behind, {}
        if not behind:
            return 0
        from noetic.store import derived_files

        with derived_files.file_lock(self.home / ".files.lock"):
            for session_id, (ids, whole) in behind.items():
                self.write_session_files_now(session_id, ids, all_reflex=whole)
        return len(behind)

    def close(self) -> None:
        if getattr(self, "_closed", True):
            return
        try:
            if self.write_files and not self.read_only:
                self.flush_files()
        finally:
            self.write_files = False  # the shared backlog is not this store's to drain
            super().close()

    def _unreachable(self, exc: BaseException) -> StoreError:
        return StoreError(
            f"cannot reach the PostgreSQL store {self.where}: {str(exc).strip() or type(exc)}",
            fix="check that the server is up and the URL (--store, NOETIC_STORE_URL or "
            "[store] url) is right",
        )

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        try:
            cm = self.pool.connection()
            conn = cm.__enter__()
        except PoolTimeout as exc:
            raise self._unreachable(exc) from exc
        try:
            yield conn
        except BaseException as exc:
            cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        cm.__exit__(None, None, None)

    def _disconnect(self) -> None:
        self.pool.close()

    def _reader(self) -> PostgresStore:
        return self

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One logical write: ``BEGIN`` … ``COMMIT`` on one pooled connection, rolled back on
        any error (see the module's docstring for a lost connection)."""
        if self.read_only:
            raise StoreError(
                f"the PostgreSQL store {self.where} is open read-only: this command writes",
                fix="use a token that may write, or a command that only reads",
            )
        with self._begun() as conn:
            body_done = False
            try:
                try:
                    yield Connection(conn)
                    requests.record(self, Connection(conn))  # a request id, in its write
                    body_done = True
                except BaseException:
                    if not conn.broken:
                        conn.execute("ROLLBACK")
                    raise
                conn.execute("COMMIT")
            except psycopg.OperationalError as exc:
                if not conn.broken:
                    raise
                if body_done:
                    raise StoreError(
                        f"the connection to {self.where} was lost while committing: the write "
                        "is either wholly applied or not at all",
                        fix="check with a read before writing it again",
                    ) from exc
                raise StoreError(
                    f"the connection to {self.where} was lost during a write, which was rolled "
                    "back: nothing of it was applied",
                    fix="run the command again",
                ) from exc

    @contextmanager
    def _begun(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection inside ``BEGIN``. One that fails to begin (it died since the
        pool checked it) goes back to the pool, which discards it, and another is tried."""
        for attempt in range(BEGIN_ATTEMPTS):
            with self._connection() as conn:
                try:
                    conn.execute("BEGIN")
                except psycopg.OperationalError as exc:
                    if attempt == BEGIN_ATTEMPTS - 1 or not conn.broken:
                        raise self._unreachable(exc) from exc
                else:
                    yield conn
                    return
            time.sleep(0.05 * 2**attempt)

    def insert(self, c: Connection, table: str, row: dict[str, Any]) -> int | None:
        row = stamped(table, row)
        cols = ", ".join(f'"{k}"' for k in row)
        marks = ", ".join("?" for _ in row)
        sql = f"INSERT INTO {table} ({cols}) VALUES ({marks})"
        if table not in _INTEGER_IDS:
            c.execute(sql, list(row.values()))
            return None
        return int(c.execute(sql + " RETURNING id", list(row.values())).fetchone()[0])

    def _by_id_or_prefix(self, table: str, key: str) -> list[Any]:
        """Ids compare byte by byte (``COLLATE "C"``), so the range is the prefix's, on the
        primary key's index, as in SQLite."""
        exact = self.conn.execute(f"SELECT * FROM {table} WHERE id = ?", (key,)).fetchone()
        if exact is not None:
            return [exact]
        rows: list[Any] = self.conn.execute(
            f"SELECT * FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
            (key, key + "\U0010ffff"),
        ).fetchall()
        return rows

    def order_appends(self, c: Connection, table: str) -> None:
        """Appenders to one table take turns until they commit (a transaction-level advisory
        lock), so ids are taken in commit order: an identity value drawn by a transaction that
        commits later would otherwise land below ids a reader has already passed."""
        c.execute("SELECT pg_advisory_xact_lock(?, ?)", (LOCK_KEY, _APPEND_LOCKS[table]))

    def _lock_session(self, c: Connection, session_id: str) -> None:
        c.execute("SELECT 1 FROM sessions WHERE id = ? FOR NO KEY UPDATE", (session_id,))
