"""Keeping the session JSON documents and reflex logs in step with SQLite, off the write path.

A write that changes a session adds a row to ``file_backlog`` in the same SQLite transaction:
the durable marker that the session's files are behind. :func:`drain` brings them up to date: it
reads the backlog, rewrites each marked session's JSON document once (from the rows added since
the last drain: :meth:`BaseStore.session_document`, :mod:`noetic.store.document`), appends each
marked assessment's line to its session's reflex log, and only then deletes the rows it served.
Drains happen when the store is closed (every CLI command), when the process exits, on
:meth:`BaseStore.flush_files`, and in a long-lived process (the MCP server) on a background
thread a moment after each write (:data:`DELAY`). What the files promise after a crash is
``docs/storage.md``'s ("Guarantees").
"""

from __future__ import annotations

import _thread
from collections import defaultdict
from pathlib import Path

from noetic.store import derived_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from contextlib import AbstractContextManager
    from typing import Any, Protocol

    from noetic.store.document import Grown
    from noetic.store.records import SessionRecord

    class Mirrored(Protocol):
        """What the drain and :func:`noetic.store.session_files.write` use of a store:
        :class:`noetic.store.base.BaseStore` is one, and imports these modules to keep its files;
        they do not import it back."""

        @property
        def home(self) -> Path: ...

        @property
        def conn(self) -> Any: ...

        def transaction(self) -> AbstractContextManager[Any]: ...

        def write_session_files_now(
            self,
            session_id: str,
            assessment_ids: set[int] | None = None,
            *,
            all_reflex: bool = False,
        ) -> int: ...

        def _reader(self) -> Mirrored: ...

        def close(self) -> None: ...

        def get_session(self, session_id: str) -> SessionRecord: ...

        def _session_document(
            self, session_id: str, *, fresh: bool, recorded: bool = False
        ) -> tuple[bytes, dict[int, dict[str, Any]], Grown]: ...

        def database_id(self) -> str | None: ...


DELAY = 1.0  # seconds: long enough that a burst of writes costs one rewrite


def drain(store: Mirrored) -> int:
    """Write the files the backlog asks for; returns how many backlog rows were served."""
    with derived_files.file_lock(store.home / ".files.lock"):
        rows = store.conn.execute(
            "SELECT id, session_id, assessment_id, all_reflex FROM file_backlog ORDER BY id"
        ).fetchall()
        if not rows:
            return 0
        wanted: dict[str, set[int]] = defaultdict(set)
        everything: set[str] = set()
        for row in rows:
            wanted[row["session_id"]]
            if row["assessment_id"] is not None:
                wanted[row["session_id"]].add(row["assessment_id"])
            if row["all_reflex"]:
                everything.add(row["session_id"])
        for session_id, assessment_ids in wanted.items():
            store.write_session_files_now(
                session_id, assessment_ids, all_reflex=session_id in everything
            )
        with store.transaction() as c:
            c.execute("DELETE FROM file_backlog WHERE id <= ?", (rows[-1]["id"],))
        return len(rows)


class Mirror:
    """A background drainer for one store, started by the first write that needs it."""

    def __init__(self, store: Mirrored, delay: float = DELAY) -> None:
        self.store = store
        self.delay = delay
        self._thread: threading.Thread | None = None
        self._started = False  # _wake and _stop are made with the first thread
        self._wake: threading.Event
        self._stop: threading.Event
        self._lock = _thread.allocate_lock()  # threading.Lock: threading loads with the thread

    def wake(self) -> None:
        with self._lock:
            if self._thread is None:
                import threading

                if not self._started:  # the events outlive a stopped thread, as its stop reads
                    self._wake, self._stop = threading.Event(), threading.Event()
                    self._started = True
                self._thread = threading.Thread(target=self._run, name="noetic-files", daemon=True)
                self._thread.start()
        self._wake.set()

    def stop(self) -> None:
        """Stop the thread (after the drain it is in, if any)."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._stop.set()
            self._wake.set()
            thread.join()
            self._stop.clear()

    def _run(self) -> None:
        reader = self.store._reader()
        try:
            while not self._stop.is_set():
                self._wake.wait()
                if self._stop.wait(self.delay):  # coalesce the writes of the next moment
                    break
                self._wake.clear()
                try:
                    drain(reader)
                except Exception:  # the backlog keeps the rows; the next drain retries
                    continue
        finally:
            reader.close()
