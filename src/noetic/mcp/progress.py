"""Progress notifications for the long tools (``create_cascade``, ``observe``, ``nova_process``;
docs/mcp.md, "Progress"): one per phase a run enters and one when it ends.

The run's events arrive on the server's event bus, which every client's runs share; a
:class:`Progress` only reports the events emitted inside its own call (a context variable that
the run's tasks and threads inherit marks them). The bus is synchronous and may be called from
another thread; each notification is scheduled on the server's loop in order, and
:meth:`Progress.sent` waits for them before the tool returns, so none arrives after the result.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any, TypeVar

from noetic.events import Event, EventKind

T = TypeVar("T")

_CURRENT: ContextVar[Progress | None] = ContextVar("noetic_mcp_progress", default=None)


class Progress:
    """An ``on_event`` callback turning a run's events into progress notifications."""

    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._thread = threading.get_ident()
        self._count = 0
        self._pending: list[asyncio.Future[Any]] = []

    def __call__(self, event: Event) -> None:
        if _CURRENT.get() is not self:
            return
        message = _message(event)
        if message is None:
            return
        self._count += 1
        if threading.get_ident() == self._thread:
            self._send(self._count, message)
        else:
            self._loop.call_soon_threadsafe(self._send, self._count, message)

    def task(self, result: Any, tally: Any) -> None:
        """An ``on_task`` callback for ``evaluate``: each problem judged, out of the total."""
        message = f"eval: {result.task_id} {result.state} ({tally.passed}/{tally.done} passed)"
        report = self._ctx.report_progress(tally.done + tally.errors, tally.total, message)
        self._pending.append(asyncio.ensure_future(report))

    def _send(self, count: int, message: str) -> None:
        self._pending.append(asyncio.ensure_future(self._ctx.report_progress(count, None, message)))

    async def sent(self) -> None:
        """Wait until every notification scheduled so far has gone out."""
        while self._pending:
            batch, self._pending = self._pending, []
            await asyncio.gather(*batch, return_exceptions=True)


async def reporting(ctx: Any, run: Callable[[Progress], Awaitable[T]]) -> T:
    """``await run(progress)``, reporting its events to the client that called (when it gave a
    progress token), every notification sent before this returns."""
    progress = Progress(ctx)
    token = _CURRENT.set(progress)  # what runs inside is this call's: only its events count
    try:
        return await run(progress)
    finally:
        _CURRENT.reset(token)
        await progress.sent()


def _message(event: Event) -> str | None:
    data = event.data
    if event.kind == EventKind.PHASE_ENTERED:
        stage = f"stage {data['stage']}" if data.get("stage") is not None else None
        where = " ".join(str(part) for part in (data.get("phase"), stage, data.get("role")) if part)
        return f"{event.engine or 'run'}: {where}"
    if event.kind == EventKind.RUN_FINISHED:
        return f"{event.engine or 'run'}: finished ({data.get('status')})"
    return None
