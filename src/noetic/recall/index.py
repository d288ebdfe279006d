"""The recall index: every embedded task's vector and scoring columns as arrays, memory-mapped
from files kept in step with SQLite.

SQLite (``recall_vectors``) is the source of truth; the index mirrors it in
``<store>/recall/<embedder>/``: ``vectors.<token>.f32``, ``meta.<token>.bin`` (one :data:`META`
record a task) and ``state.json`` (rows, last ``seq``, generation, code tables). Each use compares
SQLite's ``(generation, last seq)`` with the index's: new rows are appended under a file lock
(readers never lock: they map the rows ``state.json`` counts); a deleted row bumps the generation
and the files are rebuilt under a new token (``docs/recall.md``). A long-lived process keeps one
index per store and embedder (:func:`index_for`); if the files cannot be written, the index lives
in memory.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from noetic.embeddings import Embedder
from noetic.errors import NoeticError
from noetic.recall.verification import VERDICTS, outcome_verdicts
from noetic.store import reads
from noetic.store.base import BaseStore as Store
from noetic.store.derived_files import atomic_write_json, file_lock, safe_name
from noetic.store.summaries import pending, pending_count, save_vectors, vector_state, vectors_since
from noetic.vectors import VECTOR_NAMES

_N = len(VECTOR_NAMES)
META = np.dtype(
    [("seq", "<i8"), ("ended", "<f8"), ("learning", "<f4"), ("calibration", "<i4"),
     ("project", "<i4"), ("ai", "<i4"), ("pre", "<f4", (_N,)), ("delta", "<f4", (_N,))]
)  # fmt: skip
FORMAT = 1


class RecallIndex:
    def __init__(self, store: Store, embedder: str, dimension: int) -> None:
        self.store = store
        self.embedder = embedder
        self.dimension = dimension
        self.folder = store.home / "recall" / safe_name(embedder)
        self.in_memory = False
        self._scopes: dict[tuple[Any, ...], Scope] = {}
        self._pending: tuple[tuple[Any, ...], int] | None = None
        self._verdicts: tuple[tuple[Any, ...], Any] | None = None
        self._lock = threading.Lock()
        self._reset(-1)

    @property
    def rows(self) -> int:
        return len(self.meta)

    # keeping in step -----------------------------------------------------------------------

    def refresh(self) -> int:
        """Catch up with SQLite; returns how many rows were added (or the new total on a
        rebuild)."""
        with self._lock:
            generation, last = vector_state(self.store, self.embedder)
            if generation == self.generation and last == self.seq:
                return 0
            if generation != self.generation and not self.in_memory:
                self._map_files(generation)
            if generation != self.generation:
                self._reset(generation)
            if last == self.seq:
                return 0
            before = self.rows
            self._append(vectors_since(self.store, self.embedder, self.seq))
            return self.rows - before

    def _reset(self, generation: int) -> None:
        self.generation, self.seq, self.token = generation, 0, os.urandom(4).hex()
        self.codes: dict[str, list[Any]] = {"projects": [], "ais": [], "calibrations": []}
        self.vectors: Any = np.zeros((0, self.dimension), np.float32)
        self.meta: Any = np.zeros(0, META)
        self._scopes.clear()

    def _state(self) -> dict[str, Any] | None:
        try:
            state = json.loads((self.folder / "state.json").read_text())
        except (OSError, ValueError):
            return None
        if not isinstance(state, dict) or state.get("format") != FORMAT:
            return None
        return state

    def _map_files(self, generation: int) -> None:
        """Map what another process already wrote for this generation, if it is sound."""
        state = self._state()
        if not state or state.get("generation") != generation:
            return
        if state.get("dimension") != self.dimension or state.get("embedder") != self.embedder:
            return
        try:
            n = int(state["rows"])
            vectors = _map(self.folder / f"vectors.{state['token']}.f32", n * self.dimension * 4)
            meta = _map(self.folder / f"meta.{state['token']}.bin", n * META.itemsize)
        except (OSError, KeyError, ValueError, TypeError):
            return  # missing or short files: rebuilt from SQLite
        self.generation, self.seq, self.token = generation, int(state["seq"]), state["token"]
        self.codes = {k: list(state[k]) for k in ("projects", "ais", "calibrations")}
        self.vectors = np.frombuffer(vectors, np.float32).reshape(n, self.dimension)
        self.meta = np.frombuffer(meta, META)
        self._scopes.clear()

    def _code(self, table: str, value: Any) -> int:
        codes = self.codes[table]
        if value not in codes:
            codes.append(value)
        return codes.index(value)

    def _append(self, rows: list[Any]) -> None:
        if not rows:
            return
        meta = np.zeros(len(rows), META)
        meta["seq"] = [r["seq"] for r in rows]
        meta["ended"] = [r["ended"] for r in rows]
        meta["learning"] = [r["learning"] for r in rows]
        meta["calibration"] = [self._code("calibrations", r["calibration"]) for r in rows]
        meta["project"] = [self._code("projects", r["project"]) for r in rows]
        meta["ai"] = [self._code("ais", r["ai_id"]) for r in rows]
        meta["pre"] = np.frombuffer(b"".join(r["pre_vec"] for r in rows), "<f4").reshape(-1, _N)
        meta["delta"] = np.frombuffer(b"".join(r["delta_vec"] for r in rows), "<f4").reshape(-1, _N)
        vectors = np.frombuffer(b"".join(r["vector"] for r in rows), "<f4").reshape(
            -1, self.dimension
        )
        self._scopes.clear()
        if not self.in_memory:
            try:
                self._write(vectors, meta)
                return
            except OSError:
                self.in_memory = True  # a read-only store: keep the arrays in memory
        self.vectors = np.concatenate([self.vectors, vectors])
        self.meta = np.concatenate([self.meta, meta])
        self.seq = int(meta["seq"][-1])

    def _write(self, vectors: Any, meta: Any) -> None:
        """Append to the files (or start them) under the lock, then map them again."""
        with file_lock(self.folder / "lock"):
            state = self._state()
            ours = self.token
            if state and state.get("token") != ours and state.get("generation") == self.generation:
                # another process caught up first: start from what it wrote, if it is sound
                self._map_files(self.generation)
                if self.token != ours:
                    if self.seq >= int(meta["seq"][-1]):
                        return
                    keep = meta["seq"] > self.seq
                    vectors, meta = vectors[keep], meta[keep]
            fresh = not (state and state.get("token") == self.token)
            n = self.rows
            mode = "wb" if fresh else "r+b"
            vpath = self.folder / f"vectors.{self.token}.f32"
            mpath = self.folder / f"meta.{self.token}.bin"
            parts = ((vpath, self.vectors, vectors, self.dimension * 4),
                     (mpath, self.meta, meta, META.itemsize))  # fmt: skip
            for path, old, new, row in parts:
                with open(path, mode) as fh:
                    if fresh:
                        fh.write(np.ascontiguousarray(old).tobytes())
                    else:  # drop whatever a killed writer left past the counted rows
                        fh.truncate(n * row)
                        fh.seek(0, os.SEEK_END)
                    fh.write(np.ascontiguousarray(new).tobytes())
            total = n + len(meta)
            atomic_write_json(self.folder / "state.json", {
                "format": FORMAT, "embedder": self.embedder, "dimension": self.dimension,
                "generation": self.generation, "seq": int(meta["seq"][-1]), "rows": total,
                "token": self.token, **self.codes,
            })  # fmt: skip
            for stale in self.folder.glob("*.*"):
                if stale.suffix in (".f32", ".bin") and f".{self.token}." not in stale.name:
                    stale.unlink(missing_ok=True)
            self._map_files(self.generation)

    # what a query needs, cached until the index changes --------------------------------------

    def pending(self) -> int:
        """Finished tasks without vectors for this embedder. Counted again only when a summary
        was written since (a new summary always gets a larger rowid) or the index changed."""
        newest = reads.newest_summary(self.store)
        key = (newest, self.generation, self.seq)
        if self._pending is None or self._pending[0] != key:
            self._pending = (key, pending_count(self.store, self.embedder))
        return self._pending[1]

    def verdicts(self, tolerance: float) -> Any:
        """Each row's verdict as an index into :data:`VERDICTS` (0: unverified), read from the
        outcomes again only when one was recorded since or the index changed."""
        key = (reads.last_outcome(self.store), self.generation, self.seq, tolerance)
        if self._verdicts is None or self._verdicts[0] != key:
            codes = np.zeros(self.rows, np.int8)
            found = outcome_verdicts(self.store, tolerance)
            ids = list(found)
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows = reads.vector_seqs(self.store, self.embedder, self.seq, chunk)
                if rows:
                    at = np.searchsorted(self.meta["seq"], [r[0] for r in rows])
                    codes[at] = [VERDICTS.index(found[r[1]]) for r in rows]
            self._verdicts = (key, codes)
        return self._verdicts[1]

    def scope(self, *, ai_id: str | None, project: str | None, all_projects: bool) -> Scope:
        """The rows in scope, their vectors (a contiguous copy, so a query reads only the
        scope's rows and copies nothing) and calibration codes; cached until the index
        changes, for the :data:`SCOPES` scopes used last."""
        key = (ai_id, project, all_projects)
        with self._lock:
            found = self._scopes.pop(key, None)
            if found is None:
                found = self._scope(ai_id, project, all_projects)
            self._scopes[key] = found  # the most recently used last
            while len(self._scopes) > SCOPES:
                self._scopes.pop(next(iter(self._scopes)))
            return found

    def _scope(self, ai_id: str | None, project: str | None, all_projects: bool) -> Scope:
        mask = np.ones(self.rows, bool)
        if ai_id is not None:
            mask &= self.meta["ai"] == _index(self.codes["ais"], ai_id)
        if not all_projects:
            mask &= self.meta["project"] == _index(self.codes["projects"], project)
        pos = None if mask.all() else np.flatnonzero(mask)
        meta = self.meta if pos is None else self.meta[pos]
        calibration = np.ascontiguousarray(meta["calibration"])
        return Scope(
            positions=pos,
            vectors=self.vectors if pos is None else self.vectors[pos],
            calibration=calibration,
            ended=np.ascontiguousarray(meta["ended"]),
        )


SCOPES = 8
"""Scopes (project, AI) whose rows a long-lived process keeps at hand; a scope's vectors are
at most the index's, and the scopes of different projects do not overlap."""


@dataclass(frozen=True)
class Scope:
    positions: Any  # row positions, or None for every row
    vectors: Any  # the rows' vectors, contiguous
    calibration: Any  # calibration code of each row in scope
    ended: Any  # when each row's task ended

    @property
    def rows(self) -> int:
        return len(self.calibration)


def _index(codes: list[Any], value: Any) -> int:
    return codes.index(value) if value in codes else -2


def _map(path: Path, size: int) -> Any:
    """The first ``size`` bytes of ``path``, mapped read-only and prefaulted in one call."""
    if size == 0:
        return b""
    with open(path, "rb") as fh:
        if os.fstat(fh.fileno()).st_size < size:
            raise ValueError(f"{path} is shorter than its state says")
        flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
        return mmap.mmap(fh.fileno(), size, flags=flags, prot=mmap.PROT_READ)


_INDEXES: weakref.WeakKeyDictionary[Store, dict[str, RecallIndex]] = weakref.WeakKeyDictionary()
_GUARD = threading.Lock()


def index_for(store: Store, embedder: Embedder) -> RecallIndex:
    """The store's index for ``embedder``, one per process, brought up to date."""
    with _GUARD:
        per_store = _INDEXES.setdefault(store, {})
        index = per_store.get(embedder.name)
        if index is None:
            index = per_store[embedder.name] = RecallIndex(store, embedder.name, embedder.dimension)
    index.refresh()
    return index


def embed_pending(
    store: Store,
    embedder: Embedder,
    *,
    limit: int | None = None,
    batch: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> int:
    """Embed finished tasks that have no vectors for ``embedder`` yet, newest first, in
    batches; ``progress(done, total)`` after each. Returns how many were embedded."""
    rows = pending(store, embedder.name, limit)
    for start in range(0, len(rows), batch):
        chunk = rows[start : start + batch]
        vectors = embedder.embed([r["task"] for r in chunk])
        save_vectors(store, embedder.name, chunk, [v.tobytes() for v in vectors])
        if progress is not None:
            progress(start + len(chunk), len(rows))
    return len(rows)


# What changes when a summary is written, read in constant time: SQLite's rowid (a replaced row
# gets a new one); PostgreSQL has none, and counting the rows would read them all at every
# recall, so its table statistics' count of rows ever written (they reach the view within
# seconds; a task written since is embedded by the indexer that follows a POSTFLIGHT anyway).
def index_new_tasks(store: Store, *, limit: int = 32) -> int:
    """Best effort, right after a task is written: embed it (and any few others still
    pending) with the configured embedder. Without an embedder installed nothing happens; the
    tasks stay pending for ``noetic reindex``."""
    from noetic.embeddings import recall_embedder

    failures = (NoeticError, ImportError, OSError, *reads.database_errors(store))
    with contextlib.suppress(*failures):
        return embed_pending(store, recall_embedder(), limit=limit)
    return 0


class BackgroundEmbedder:
    """Embedding for a long-lived process (the MCP server) on a thread of its own, so neither
    a POSTFLIGHT nor a recall waits for the embedder.

    Woken at start (tasks that an older store, another process or a changed embedder left
    pending: all of them, newest first, in batches, with ``progress(done, total)``) and by
    every task that finishes (:meth:`on_event`). After each round it brings the process's
    index up to date, so a recall finds the embedder loaded and the index mapped. If there is
    no embedder or the store fails, the tasks stay pending (``error`` says why): a recall
    embeds a few and ``noetic reindex`` the rest."""

    def __init__(
        self,
        store: Store,
        *,
        batch: int = 64,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        self.store = store
        self.batch = batch
        self.progress = progress
        self.embedded = 0
        self.error: str | None = None
        self._asked = self._done = 0
        self._changed = threading.Condition()
        self._stop = False
        self._thread: threading.Thread | None = None

    def on_event(self, event: Any) -> None:
        """An event-bus subscriber: a task that finished with a POSTFLIGHT wakes the thread."""
        if event.kind == "run_finished" and event.data.get("status") == "completed":
            self.wake()

    def wake(self) -> None:
        with self._changed:
            self._asked += 1
            if self._thread is None:
                self._stop = False
                self._thread = threading.Thread(
                    target=self._run, name="noetic-embedding", daemon=True
                )
                self._thread.start()
            self._changed.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until every round asked for so far is done; False on timeout."""
        with self._changed:
            asked = self._asked
            return self._changed.wait_for(lambda: self._done >= asked, timeout)

    def stop(self) -> None:
        """Stop the thread after the batch it is embedding, if any."""
        with self._changed:
            thread, self._thread = self._thread, None
            self._stop = True
            self._changed.notify_all()
        if thread is not None:
            thread.join()

    def _run(self) -> None:
        from noetic.embeddings import recall_embedder

        # Writes go through the store the tools share, taking turns with their transactions: a
        # second connection committing in this process would leave the shared one's readers on
        # an old snapshot, and a tool's next write would fail with "database is locked" at once.
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._stop or self._done < self._asked)
                if self._stop:
                    return
                asked = self._asked
            try:
                embedder = recall_embedder()
                # the write whose event woke this round (a POSTFLIGHT's, emitted inside it)
                # ends before the pending tasks are read: a turn at writing waits for it
                with self.store.unit():
                    pass
                self.embedded += embed_pending(
                    self.store, embedder, batch=self.batch, progress=self.progress
                )
                index_for(self.store, embedder)
                self.error = None
            except Exception as exc:  # the tasks stay pending; recall and reindex catch up
                from noetic.errors import error_name

                self.error = f"{error_name(exc)}: {exc}"
            with self._changed:
                self._done = asked
                self._changed.notify_all()


__all__ = [
    "BackgroundEmbedder",
    "RecallIndex",
    "embed_pending",
    "index_for",
    "index_new_tasks",
    "pending_count",
]
