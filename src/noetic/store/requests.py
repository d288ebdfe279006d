"""Idempotency keys: a write retried with the same request id is applied once (the promise is
``docs/storage.md``'s, "A retried write is applied once").

The write operations apply a request id through :mod:`noetic.operations.once` (the only caller
of this module outside the store). :func:`start` looks it up: a request already applied is
answered from what was recorded (:class:`Replay`), nothing written again. A new one is
remembered for this call (a context variable, so concurrent MCP calls on one store never see
each other's); the first write transaction that commits then records it in ``requests``, in the
same transaction as the write. :func:`finish` keeps the response the caller was given
(compressed when long, :func:`packed`), so the retry receives the same document.

The same id with other arguments or another operation is refused. Two calls with one id at once:
the record is one ``INSERT … ON CONFLICT DO NOTHING``, so the second finds the first's record
and is rolled back, saying so. On PostgreSQL the record is sent with the write's first batch
(:func:`claim`) and checked before it commits (:func:`confirm`), so it adds no round trip. A
command that writes in several transactions is recorded by its first; a process killed between
them leaves the request recorded as applied without a response, and the retry says exactly that.
"""

from __future__ import annotations

import json
from contextvars import ContextVar

from noetic.errors import StoreError, UsageError
from noetic.plain import Value
from noetic.untrusted import check_identifier

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.store.base import BaseStore


class Replay(Value):
    """A request applied before: when, and the response it was given (None when the process
    ended before it could be kept)."""

    request_id: str
    operation: str
    created_at: str
    response: Any = None

    def note(self) -> str:
        kept = "" if self.response is not None else " (its response was not kept)"
        return (
            f"request {self.request_id} ({self.operation}) was already applied at "
            f"{self.created_at}: nothing was written again{kept}"
        )


class _Pending:
    """The request this call is applying (a plain class: a dataclass is compiled as its module
    loads)."""

    def __init__(self, key: str, operation: str, fingerprint: str, store: BaseStore) -> None:
        self.key, self.operation, self.fingerprint, self.store = key, operation, fingerprint, store
        self.recorded = False


_CURRENT: ContextVar[_Pending | None] = ContextVar("noetic_request", default=None)


def fingerprint(operation: str, arguments: dict[str, Any]) -> str:
    """What identifies a request's content: the operation and its arguments, hashed."""
    import hashlib  # OpenSSL's: loaded for a request id only

    text = json.dumps([operation, arguments], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


_PACKED = "z:"  # no JSON document starts so


def packed(response: Any) -> str:
    """``response`` as kept: its JSON, or, when that is long, the JSON compressed (zlib, then
    base64 behind ``z:``). An answer repeats what its write stored (a task's text, its
    assessment), and it is written in the same transaction, so keeping it small keeps a write
    that fits on a nearly full disk fitting."""
    text = json.dumps(response, ensure_ascii=False, default=str)
    if len(text) < 2048:
        return text
    import base64
    import zlib

    raw = zlib.compress(text.encode("utf-8", "surrogatepass"))
    squeezed = _PACKED + base64.b64encode(raw).decode("ascii")
    return squeezed if len(squeezed) < len(text) else text


def unpacked(kept: str) -> Any:
    """The response :func:`packed` kept."""
    if not kept.startswith(_PACKED):
        return json.loads(kept)
    import base64
    import zlib

    data = zlib.decompress(base64.b64decode(kept[len(_PACKED) :]))
    return json.loads(data.decode("utf-8", "surrogatepass"))


def start(
    store: BaseStore, request_id: str | None, operation: str, arguments: dict[str, Any]
) -> Replay | None:
    """The earlier answer to ``request_id``, or None: a new request, which the next write
    records. Without a request id, None and nothing remembered."""
    _CURRENT.set(None)
    replay = lookup(store, request_id, operation, arguments)
    if replay is None and request_id is not None:
        _CURRENT.set(_Pending(request_id, operation, fingerprint(operation, arguments), store))
    return replay


def lookup(
    store: BaseStore, request_id: str | None, operation: str, arguments: dict[str, Any]
) -> Replay | None:
    """The earlier answer to ``request_id``, or None (a new request, or no id): nothing is
    remembered for the next write. The same id with other arguments is refused."""
    if request_id is None:
        return None
    check_identifier(request_id, "request_id")
    digest = fingerprint(operation, arguments)
    row = store.conn.execute(
        "SELECT operation, fingerprint, response, created_at FROM requests WHERE id = ?",
        (request_id,),
    ).fetchone()
    if row is not None:
        if row["operation"] != operation or row["fingerprint"] != digest:
            raise UsageError(
                f"request id {request_id!r} was already used for another request "
                f"({row['operation']} at {row['created_at']}): one id names one request",
                fix="give a new request id to a new request; repeat the same arguments to retry",
            )
        response = unpacked(row["response"]) if row["response"] is not None else None
        return Replay(
            request_id=request_id,
            operation=operation,
            created_at=row["created_at"],
            response=response,
        )
    return None


def record(store: BaseStore, c: Any) -> None:
    """Inside a write transaction, before it commits: record the current request, once."""
    claimed = claim(store, c)
    if claimed is not None:
        confirm(claimed)


def claim(store: BaseStore, c: Any) -> tuple[_Pending, Any] | None:
    """Insert the current request's record (None when there is none to record); a backend
    that sends its statements in batches sends this one with the write's first, and
    :func:`confirm` reads its result before the write commits."""
    pending = _CURRENT.get()
    if pending is None or pending.recorded or pending.store.home != store.home:
        return None
    from noetic.store.rows import now
    from noetic.store.writer import insert_sql

    row = {
        "id": pending.key,
        "operation": pending.operation,
        "fingerprint": pending.fingerprint,
        "response": None,
        "created_at": now(),
    }
    # one statement: a request another call recorded first (committed, or committing: the
    # insert waits for it) inserts nothing, and this write is rolled back
    tail = " ON CONFLICT (id) DO NOTHING RETURNING id"
    return pending, c.execute(*insert_sql("requests", row, tail))


def confirm(claimed: tuple[_Pending, Any]) -> None:
    """Raise, so the write rolls back, if another call recorded the request first."""
    pending, result = claimed
    if not result.fetchall():
        raise StoreError(
            f"request {pending.key} was applied meanwhile by another call: this one was "
            "rolled back, nothing of it was written",
            fix="retry with the same request id to get that call's response",
        )
    pending.recorded = True


def finish(response: Any) -> None:
    """Keep ``response`` (JSON-ready) as the answer of the current request, if a write recorded
    it (or, inside a write still open on this thread, a :meth:`~BaseStore.unit`, records it
    with that write, so the write, its request and its answer are stored together); then
    forget the request. Outside such a write, a response that cannot be kept (a full disk) is
    not an error: the write happened, and a retry is told it did."""
    pending = _CURRENT.get()
    try:
        if pending is None or response is None:
            return
        joined = pending.store.writing()
        if not (pending.recorded or joined):
            return
        text = packed(response)
        try:
            with pending.store.transaction() as c:
                record(pending.store, c)
                c.execute("UPDATE requests SET response = ? WHERE id = ?", (text, pending.key))
        except Exception:
            if joined:  # the write it belongs to fails with it
                raise
            # the write is applied; only its copy of the answer is lost
    finally:
        _CURRENT.set(None)
