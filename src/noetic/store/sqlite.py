"""The SQLite store: Noetic's default source of truth, one file under the store's directory.

One :class:`Store` has one connection per thread that uses it: the thread that opened it uses
the first, and any other (an MCP server's worker threads) opens its own on first use, since a
SQLite connection must not run two threads' statements at once (a read on one thread would see
another's open transaction, and interleaved statements fail with "no more rows available").
Writes from all of them still take turns (:meth:`Store.transaction`).

The database runs in WAL mode with a busy timeout, so several processes can write to one store
at once: each logical write is one ``BEGIN IMMEDIATE`` transaction, which also queues the files
of the sessions it touches for :mod:`noetic.store.mirror` (``docs/storage.md``, "Guarantees").

What a store holds and how it is read is :class:`noetic.store.base.BaseStore`; this module is
the SQLite dialect: opening (read-only when it must), the transaction, and the inserts.
"""

from __future__ import annotations

import _thread
import os
import sqlite3
import sys
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from pathlib import Path

from noetic.errors import COMMITTED, StoredIncomplete, StoreError, committed
from noetic.store import derived_files
from noetic.store.base import BaseStore
from noetic.store.migrations import migrate, pending
from noetic.store.mirror import Mirror
from noetic.store.rows import now
from noetic.store.writer import insert_sql

TYPE_CHECKING = False
if TYPE_CHECKING:
    from threading import Thread
    from typing import Any, Final

__all__ = ["BUSY_TIMEOUT_MS", "Store", "now"]

BUSY_TIMEOUT_MS: Final = 30_000


class Store(BaseStore):
    """SQLite plus the JSON and reflex-log files derived from it, under one home directory."""

    def __init__(
        self,
        home: Path | str,
        *,
        write_files: bool = True,
        background: bool = False,
        recovering: bool = False,
    ) -> None:
        """Open (creating if needed) the store under ``home``.

        ``background``: a long-lived process (the MCP server) writes the session files on a
        thread a moment after each write; otherwise they are written at :meth:`flush_files`
        and :meth:`close` (and at exit, for a store nobody closed). A store that cannot be
        written opens read-only, and a lost database is refused unless ``recovering`` (``noetic
        rebuild --from-files``), as ``docs/storage.md`` says."""
        self.home = Path(home)
        self.write_files = write_files
        self.background = background
        self.mirror = Mirror(self)
        self.read_only = False
        self.full = False  # opened read-only because the disk is full
        self.db_path = self.home / "noetic.db"
        self._writing = _thread.RLock()
        self._depth = 0  # transactions open on the writing thread: 1, or more when joined
        self._writer = 0  # that thread
        self._spoiled: BaseException | None = None  # what failed inside the open one
        # _thread's lock, ident and local are threading's own: without loading threading
        self._owner = _thread.get_ident()
        self._local = _thread._local()
        self._shut = False  # closed by _disconnect: see _left
        self._others: list[tuple[weakref.ref[Thread], sqlite3.Connection]] = []
        self._grown = OrderedDict()
        if not recovering:
            derived_files.refuse_lost_database(self.home, self.db_path, "missing or empty")
        creating = not self.db_path.exists()
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {self.home}: {exc}") from exc
        try:
            try:
                self._main = _connect(self.db_path)
            except sqlite3.OperationalError as exc:
                full = _disk_full(exc, self.home)
                if not full and not _cannot_write(exc, self.db_path):
                    raise
                self._main = _connect_read_only(self.db_path)
                self.read_only = True
                self.full = full
            behind = self.conn.execute("SELECT 1 FROM file_backlog LIMIT 1").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the store database {self.db_path}: {exc}", fix=_open_fix(exc)
            ) from exc
        if not recovering and self._no_sessions():
            try:
                derived_files.refuse_lost_database(self.home, self.db_path, "empty")
            except StoreError:
                self.conn.close()
                raise
        if creating and not self.read_only:
            derived_files.ignore_itself(self.home)
        self._opened()
        if behind and write_files and background and not self.read_only:
            self.mirror.wake()  # a process that died left files behind: bring them up to date

    @property
    def conn(self) -> sqlite3.Connection:
        """This thread's connection (see the module's docstring)."""
        if _thread.get_ident() == self._owner and not self._shut:
            return self._main
        mine: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if self._shut:
            return self._left(mine)
        if mine is None:
            mine = self._another()
            self._local.conn = mine
        return mine

    def _left(self, mine: sqlite3.Connection | None) -> sqlite3.Connection:
        """A thread's use of a store another thread closed: a transaction it has open ends on
        its connection; otherwise the connection closes here, on its own thread, and the
        use fails with an error that says so."""
        if _thread.get_ident() == self._owner:
            mine = self._main
        with suppress(sqlite3.ProgrammingError):  # closed already: nothing open on it
            if mine is not None and mine.in_transaction:
                return mine
        if mine is not None:
            self._local.conn = None
            with suppress(sqlite3.Error):
                mine.close()
        raise StoreError(f"the store at {self.home} is closed", fix="open it again")

    def _another(self) -> sqlite3.Connection:
        """A connection for the calling thread; those of threads that have ended are closed."""
        import threading  # a thread other than the opener's: threading is loaded already

        opened = _connect_read_only(self.db_path) if self.read_only else _connect(self.db_path)
        with self._writing:
            ended = [c for t, c in self._others if (thread := t()) is None or not thread.is_alive()]
            self._others = [(t, c) for t, c in self._others if c not in ended]
            self._others.append((weakref.ref(threading.current_thread()), opened))
        for conn in ended:
            with suppress(sqlite3.Error):
                conn.close()
        return opened

    def _disconnect(self) -> None:
        """Close the connections no other thread can be using. A connection closed while
        another thread runs a statement on it crashes the interpreter, so that of a thread
        still alive (the MCP server's embedding thread, a worker) is closed by the thread
        itself on its next use (:meth:`_left`), or as the thread ends."""
        me = _thread.get_ident()
        alive = set(sys._current_frames()) - {me}  # the live threads, without threading
        with self._writing:  # a transaction open on another thread ends first
            self._shut = True
            others, self._others = self._others, []
        for thread, conn in others:
            if (t := thread()) is None or t.ident not in alive:
                with suppress(sqlite3.Error):
                    conn.close()
        if self._owner not in alive:
            self._main.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One logical write: ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error.

        Threads sharing this store (an MCP server's worker threads) take turns: one
        transaction at a time on the connection. A transaction opened inside another on the
        same thread (a write inside :meth:`unit`) joins it: it commits with the outer one, and
        its failure rolls the outer one back, even when a caller caught it (an event
        subscriber's), so a write is stored whole or not at all."""
        if self.read_only:
            raise self._read_only()
        with self._writing:
            if self._depth:
                yield from self._joined()
                return
            self._depth, self._spoiled, self._writer = 1, None, _thread.get_ident()
            self._marked = set()  # the files it marks behind (BaseStore._queue): each once
            try:
                self._begin()
                try:
                    yield self.conn
                    if self._spoiled is not None:
                        raise self._spoiled
                    # a request id, in the write it names (none is current while the module
                    # that starts requests was never loaded: a hook's write imports nothing)
                    requests = sys.modules.get("noetic.store.requests")
                    if requests is not None:
                        requests.record(self, self.conn)
                except BaseException:
                    if self.conn.in_transaction:  # SQLite may have rolled it back itself
                        self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
                committed()
            except sqlite3.OperationalError as exc:
                if self.conn.in_transaction:  # a COMMIT that failed leaves it open
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                if _disk_full(exc, self.home):
                    raise self._full(exc) from exc
                # SQLite may open a database it cannot write without saying so; the first
                # write finds out.
                if not getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
                    raise
                self.read_only = True
                raise self._read_only() from exc
            finally:
                self._depth, self._spoiled, self._marked = 0, None, None

    def _joined(self) -> Iterator[sqlite3.Connection]:
        """The body of a transaction inside this thread's open one (see :meth:`transaction`):
        nothing more runs once part of it has failed (SQLite may have rolled the whole
        transaction back, and a statement now would commit on its own)."""
        if self._spoiled is not None or not self.conn.in_transaction:
            raise self._spoiled or StoreError("the write this one joins has already failed")
        self._depth += 1
        try:
            yield self.conn
        except BaseException as exc:
            if self._spoiled is None:
                self._spoiled = exc
            raise
        finally:
            self._depth -= 1

    def writing(self) -> bool:
        return self._depth > 0 and self._writer == _thread.get_ident()

    def unit(self) -> AbstractContextManager[Any]:
        """One transaction for every write inside (see :meth:`transaction`)."""
        return self.transaction()

    def _begin(self) -> None:
        """``BEGIN IMMEDIATE``, waiting out a read still open on this connection.

        A read in progress on another thread holds the snapshot it started with; when another
        process has written since, SQLite refuses the write lock at once (SQLITE_BUSY_SNAPSHOT)
        rather than waiting as it does for a lock (the busy timeout). So a refusal is retried,
        briefly, until the read ends — within the same busy timeout in all."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.001
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY")
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _full(self, exc: BaseException | None = None) -> StoreError:
        detail = f" ({exc})" if exc is not None else ""
        earlier = COMMITTED.get()
        if earlier:  # a command of several writes (a cascade run): what it stored stays
            return StoredIncomplete(
                f"the disk holding the store {self.home} is full{detail}: this write was not "
                f"stored, but the {earlier} write{'s' if earlier != 1 else ''} this command "
                "made before it were, and stay",
                fix="free some space on it; see what is stored (`noetic state`, `noetic "
                "sessions show`) before running the command again, which would repeat them",
            )
        return StoreError(
            f"the disk holding the store {self.home} is full{detail}: nothing was stored",
            fix="free some space on it, then run the command again",
        )

    def _read_only(self) -> StoreError:
        if self.full:
            return self._full()
        return StoreError(
            f"the store {self.home} is read-only: this command writes to it",
            fix="run it where the store's directory is writable; reading commands "
            "(state, sessions list, calibration report) work as they are",
        )

    def insert(self, c: sqlite3.Connection, table: str, row: dict[str, Any]) -> int | None:
        return c.execute(*insert_sql(table, row)).lastrowid

    def _reader(self) -> Store:
        return Store(self.home, write_files=False)


def _connect(path: Path) -> sqlite3.Connection:
    """The store's connection, its database made or migrated. Two processes opening a new store
    at once can meet SQLITE_BUSY where no busy handler waits (switching the journal to WAL):
    that is tried again until the busy timeout has passed, as a waiting write would be."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return _connect_once(path)
        except sqlite3.OperationalError as exc:
            busy = getattr(exc, "sqlite_errorname", "") in ("SQLITE_BUSY", "SQLITE_LOCKED")
            if not busy or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _connect_once(path: Path) -> sqlite3.Connection:
    # A store may be opened on one thread and used from others (an MCP server's worker
    # threads); transactions take turns (see Store.transaction).
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
    )
    try:
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def _disk_full(exc: sqlite3.OperationalError, home: Path) -> bool:
    """Whether SQLite failed for want of space: SQLITE_FULL, or an I/O error (SQLite reports
    a WAL or shared-memory file it cannot grow as one) on a file system with no room left."""
    name = getattr(exc, "sqlite_errorname", "")
    if name == "SQLITE_FULL":
        return True
    if not name.startswith("SQLITE_IOERR"):
        return False
    import shutil  # loaded on a failure only

    try:
        return shutil.disk_usage(home).free < _ROOM_BYTES
    except OSError:
        return False


_ROOM_BYTES: Final = 256 * 1024
"""Less free space than this, with an I/O error, is taken for a full disk (a write needs a few
pages of WAL and the 32 KiB shared-memory index)."""


def _cannot_write(exc: sqlite3.OperationalError, path: Path) -> bool:
    """Whether opening failed because the database or its directory cannot be written."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith("SQLITE_READONLY"):
        return True
    return name.startswith("SQLITE_CANTOPEN") and path.exists() and os.access(path, os.R_OK)


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """The database opened for reading only: ``mode=ro``, or, when SQLite cannot even create
    its shared-memory file beside a WAL database, ``immutable=1``."""
    for query in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?{query}",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        try:
            needed = pending(conn)
        except sqlite3.OperationalError:
            conn.close()
            continue
        if needed:
            conn.close()
            raise StoreError(
                f"the store database {path} is read-only and needs migrations this Noetic "
                f"would apply: {', '.join(needed)}",
                fix="open it once with write access",
            )
        return conn
    raise StoreError(f"cannot open the store database {path} even for reading")


def _open_fix(exc: sqlite3.DatabaseError) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return (
            "the file is damaged: `noetic rebuild --from-files` moves it aside and restores "
            "the sessions from their JSON files"
        )
    return "check that the file and its directory can be read"
