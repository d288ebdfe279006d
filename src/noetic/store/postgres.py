"""The PostgreSQL store: one database for a team's agents on many machines.

The same store as :mod:`noetic.store.sqlite` (everything it holds and reads is
:class:`~noetic.store.base.BaseStore`), over psycopg 3 with a connection pool. The SQL is the
store's own, written once for both databases (:mod:`noetic.store.pg_sql` adapts placeholders and
column types); there is no ORM between them, because the SQLite path must stay as fast as it is
and load nothing of this one, and because the statements are few and plain. What it guarantees
(writes, lost connections, append-only events, session files) is ``docs/storage.md``'s.

- Reads (``store.conn.execute``) borrow a pooled connection in autocommit mode, fetch every row
  and give it back; a read that finds its connection dropped (the pool discards it) is tried
  again on another, a few times. Connections are not probed before use: a probe would double
  every read's round trips, and a dead one is found by the first statement anyway.
- A logical write is one transaction on one connection, in two round trips
  (:meth:`PostgresStore.transaction`).
- A session's sequence numbers are taken under a row lock on the session
  (``SELECT … FOR NO KEY UPDATE``), so concurrent writers on many machines number its
  assessments 1, 2, 3… with no gap and no repeat (``UNIQUE (session_id, seq)`` backs it): the
  insert that follows the lock, in the same batch, reads the highest number with a snapshot
  taken after the lock was granted (READ COMMITTED takes one per statement).
"""

from __future__ import annotations

import select
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from noetic.errors import StoreError
from noetic.store import requests
from noetic.store.base import BaseStore
from noetic.store.location import safe_url
from noetic.store.mirror import Mirror
from noetic.store.pg_migrations import LOCK_KEY, migrate
from noetic.store.pg_sql import statement
from noetic.store.writer import insert_sql

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
_ROWS: Final = frozenset({psycopg.pq.ExecStatus.TUPLES_OK, psycopg.pq.ExecStatus.SINGLE_TUPLE})


def is_url(target: object) -> bool:
    return isinstance(target, str) and target.startswith(URL_SCHEMES)


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
    """Rows as :class:`Row`; the name-to-position map is built once per shape of result (from
    libpq's field names, not psycopg's column descriptions, which cost more than the rows of a
    one-row write)."""
    result = cursor.pgresult
    if not _has_rows(cursor):
        return tuple
    index = _index(tuple(result.fname(i) for i in range(result.nfields)))

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


@lru_cache(maxsize=256)
def _index(names: tuple[bytes | None, ...]) -> dict[str, int]:
    return {(name or b"").decode("utf-8", "replace"): i for i, name in enumerate(names)}


def _has_rows(cursor: Any) -> bool:
    result = cursor.pgresult
    return result is not None and result.status in _ROWS


class Result:
    """A statement's rows, fetched whole (the connection has gone back to the pool)."""

    __slots__ = ("_at", "_rows", "rowcount")
    lastrowid = None  # an insert returns its id (RETURNING id)

    def __init__(self, rows: list[Any], rowcount: int) -> None:
        self._rows = rows
        self._at = 0
        self.rowcount = rowcount

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


def _fetched(cursor: psycopg.Cursor[Any]) -> Result:
    return Result(cursor.fetchall() if _has_rows(cursor) else [], cursor.rowcount)


def _params(params: Any) -> list[Any]:
    # SQLite stores a bool as 0/1 in an INTEGER column; PostgreSQL wants the integer
    return [int(p) if isinstance(p, bool) else p for p in params]


class Pipelined:
    """What a transaction yields: its statements are queued in psycopg's pipeline and sent
    together when a result is first needed (a row read, a row count) or when the write ends,
    so statements whose results nobody reads (the ``BEGIN``, a lock, an insert) cost no round
    trip of their own. An error in a queued statement is raised when its batch is sent, which
    is still inside the transaction; the server skips the rest of the batch."""

    def __init__(self, conn: psycopg.Connection[Any], pipeline: psycopg.Pipeline) -> None:
        self._conn = conn
        self._pipeline = pipeline
        self.unsent = False

    def execute(self, sql: str, params: Any = ()) -> Queued:
        cursor = self._conn.cursor()
        cursor.execute(statement(sql), _params(params))
        self.unsent = True
        return Queued(self, cursor)

    def executemany(self, sql: str, seq: Any) -> Result:
        cursor = self._conn.cursor()
        cursor.executemany(statement(sql), [_params(p) for p in seq])
        self.unsent = True
        self.send()
        return Result([], cursor.rowcount)

    def send(self) -> None:
        """Send what is queued and wait for every result (one round trip), if anything is."""
        if self.unsent:
            self.unsent = False
            self._pipeline.sync()


class Queued:
    """A queued statement's result, fetched (with every statement queued before it) on first
    use: its ``rowcount``, ``fetchone`` and ``fetchall`` are its :class:`Result`'s."""

    __slots__ = ("_cursor", "_link", "_result")
    lastrowid = None

    def __init__(self, link: Pipelined, cursor: psycopg.Cursor[Any]) -> None:
        self._link = link
        self._cursor = cursor
        self._result: Result | None = None

    def _rows(self) -> Result:
        if self._result is None:
            if self._cursor.pgresult is None:
                self._link.send()
            self._result = _fetched(self._cursor)
        return self._result

    def __getattr__(self, name: str) -> Any:
        return getattr(self._rows(), name)

    def __iter__(self) -> Iterator[Any]:
        return iter(self._rows())


class Reader:
    """``store.conn``: each read on a pooled connection, tried again on another if the
    connection was lost (reads change nothing, so trying again is safe)."""

    def __init__(self, store: PostgresStore) -> None:
        self._store = store

    def execute(self, sql: str, params: Any = ()) -> Result:
        for attempt in range(BEGIN_ATTEMPTS):
            try:
                with self._store._connection() as conn:
                    return _fetched(conn.execute(statement(sql), _params(params)))
            except psycopg.OperationalError as exc:
                if attempt == BEGIN_ATTEMPTS - 1 or not _lost(exc):
                    raise self._store._unreachable(exc) from exc
        raise AssertionError("unreachable")

    def close(self) -> None:
        self._store.pool.close()


def _ended(conn: psycopg.Connection[Any]) -> bool:
    """Whether the server has closed ``conn`` (read from its socket without waiting: an idle
    connection has nothing to read unless the server ended it or sent a notice)."""
    if conn.closed or conn.broken:
        return True
    try:
        if _readable(conn.fileno()):
            conn.pgconn.consume_input()
            conn.pgconn.is_busy()  # parses what was read: the server's last words, if any
    except (OSError, ValueError, psycopg.OperationalError):
        return True
    return conn in _ENDED or conn.pgconn.status != psycopg.pq.ConnStatus.OK


_ENDED: weakref.WeakSet[psycopg.Connection[Any]] = weakref.WeakSet()


def _configure(conn: psycopg.Connection[Any]) -> None:
    """Each new pooled connection notes when the server ends it: a ``FATAL`` message that
    arrives while the connection is idle (a restart, ``pg_terminate_backend``) reaches libpq's
    notice handler, a moment before the end of the stream does."""
    ref = weakref.ref(conn)

    def heard(diagnostic: psycopg.errors.Diagnostic) -> None:
        ended = ref()
        if ended is not None and diagnostic.severity_nonlocalized in ("FATAL", "PANIC"):
            _ENDED.add(ended)

    conn.add_notice_handler(heard)


def _readable(fd: int) -> bool:
    """Whether ``fd`` has something to read now (``poll`` where there is one: ``select``
    refuses descriptors above 1023, which a busy server process reaches)."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        return bool(poller.poll(0))
    waiting, _, _ = select.select([fd], [], [], 0)
    return bool(waiting)


def _usable(conn: psycopg.Connection[Any]) -> bool:
    """Whether ``conn`` can run another statement: open, out of pipeline mode (an error
    while a batch was in flight can leave it stuck there) and not broken."""
    return (
        not conn.closed
        and not conn.broken
        and conn.pgconn.status == psycopg.pq.ConnStatus.OK
        and conn.pgconn.pipeline_status == psycopg.pq.PipelineStatus.OFF
    )


def _lost(exc: BaseException) -> bool:
    """Whether ``exc`` says the connection itself failed (not the statement)."""
    return isinstance(exc, psycopg.OperationalError) and not isinstance(
        exc, psycopg.errors.QueryCanceled | psycopg.errors.LockNotAvailable
    )


def probe(url: str, timeout_s: int = 5) -> set[str]:
    """The migrations a PostgreSQL store has, read on one short connection that writes nothing
    (for ``noetic doctor``); a :class:`StoreError` naming the server when it cannot be read."""
    from noetic.store.pg_migrations import applied

    try:
        with psycopg.connect(url, connect_timeout=timeout_s, autocommit=True) as conn:
            return applied(conn)
    except psycopg.Error as exc:
        raise _unreachable(safe_url(url), " ".join(str(exc).split())) from None


def _unreachable(where: str, why: str) -> StoreError:
    return StoreError(
        f"cannot reach the PostgreSQL store {where}: {why}",
        fix="check that the server is up and the URL (--store, NOETIC_STORE_URL or "
        "[store] url) is right",
    )


class PostgresStore(BaseStore):
    """A Noetic store in a PostgreSQL database, named by a ``postgresql://`` URL."""

    dialect = "postgresql"
    queues_files = False

    @property
    def shown(self) -> str:
        return f"{self.where} (PostgreSQL)"

    def __init__(
        self,
        url: str,
        *,
        home: Path | str | None = None,
        pool_size: int = 4,
        read_only: bool = False,
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
        self.background = False  # files are written at flush_files and close (and at exit)
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
            configure=_configure,
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
        return _unreachable(self.where, str(exc).strip() or str(type(exc)))

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

    @contextmanager
    def transaction(self) -> Iterator[Pipelined]:
        """One logical write: ``BEGIN`` … ``COMMIT`` on one pooled connection, rolled back on
        any error (a lost connection: :meth:`_live_connection`, :meth:`_lost`).

        Two round trips for a write that reads back at most one result: the ``BEGIN`` and the
        body's statements go in one batch (sent when a result is first read, or at the end of
        the body), the ``COMMIT`` in the second. The ``COMMIT`` is sent only once every
        statement before it has succeeded, so a connection lost before that is known to have
        applied nothing."""
        if self.read_only:
            raise StoreError(
                f"the PostgreSQL store {self.where} is open read-only: this command writes",
                fix="use a token that may write, or a command that only reads",
            )
        with self._live_connection() as conn:
            committing = False
            try:
                with conn.pipeline() as pipeline:
                    link = Pipelined(conn, pipeline)
                    # whatever the server's default: each statement's own snapshot is what
                    # numbers a session's assessments after its lock (see the docstring)
                    link.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                    claimed = requests.claim(self, link)  # a request id, in its write's batch
                    yield link
                    if claimed is not None:
                        requests.confirm(claimed)
                    else:
                        requests.record(self, link)  # a request made during the body
                    link.send()
                    committing = True
                    link.execute("COMMIT")  # sent as the pipeline ends
            except BaseException as exc:
                if _usable(conn):
                    try:
                        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                            conn.execute("ROLLBACK")
                    except psycopg.OperationalError:
                        pass  # lost meanwhile: the server rolls it back
                    else:
                        raise
                conn.close()  # the pool replaces it
                if isinstance(exc, psycopg.OperationalError):
                    raise self._lost(exc, committing) from exc
                raise

    def _lost(self, exc: psycopg.OperationalError, committing: bool) -> StoreError:
        if committing:
            return StoreError(
                f"the connection to {self.where} was lost while committing: the write "
                "is either wholly applied or not at all",
                fix="check with a read before writing it again",
            )
        return StoreError(
            f"the connection to {self.where} was lost during a write, which was rolled "
            "back: nothing of it was applied",
            fix="run the command again",
        )

    @contextmanager
    def _live_connection(self) -> Iterator[psycopg.Connection[Any]]:
        """A pooled connection that has not been closed by the server while it waited in the
        pool. The check costs no round trip: a server that ended the connection (restarted,
        ``pg_terminate_backend``) has said so on the socket, which is read without waiting;
        a dead one is closed (the pool replaces it) and another taken."""
        for attempt in range(BEGIN_ATTEMPTS):
            with self._connection() as conn:
                if not _ended(conn):
                    yield conn
                    return
                conn.close()
                if attempt == BEGIN_ATTEMPTS - 1:
                    raise self._unreachable(psycopg.OperationalError("the connection was closed"))
            time.sleep(0.05 * 2**attempt)

    def insert(self, c: Pipelined, table: str, row: dict[str, Any]) -> int | None:
        if table not in _INTEGER_IDS:
            c.execute(*insert_sql(table, row))
            return None
        return int(c.execute(*insert_sql(table, row, " RETURNING id")).fetchone()[0])

    def order_appends(self, c: Pipelined, table: str) -> None:
        """Appenders to one table take turns until they commit (a transaction-level advisory
        lock), so ids are taken in commit order: an identity value drawn by a transaction that
        commits later would otherwise land below ids a reader has already passed."""
        c.execute("SELECT pg_advisory_xact_lock(?, ?)", (LOCK_KEY, _APPEND_LOCKS[table]))

    def _lock_session(self, c: Pipelined, session_id: str) -> None:
        c.execute("SELECT 1 FROM sessions WHERE id = ? FOR NO KEY UPDATE", (session_id,))
