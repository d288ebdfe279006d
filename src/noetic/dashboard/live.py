"""``GET /live``: server-sent events telling a page that the store changed.

The stream polls the store's cursor (:mod:`noetic.operations.live`) a few times a second and
sends one ``change`` event whenever it moved, with the new cursor as the event id. The browser's
``EventSource`` sends that id back when it reconnects (``Last-Event-ID``), and the page's script
closes the stream while the tab is hidden and reopens it from the cursor it last saw, so a
change made meanwhile arrives at once, as one event. A stream ends after a few minutes (the
browser reconnects) so a server can always stop, and as soon as its request would no longer be
let in: the login it came with ended (logout, a revoked token) or its bearer token was revoked.
A cursor that is not one (or beyond any database id) is a 400.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Final

import anyio
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse

from noetic.errors import InvalidValueError
from noetic.operations.live import Cursor, cursor, new_kinds
from noetic.store.base import BaseStore

POLL_S: Final = 0.2
PING_S: Final = 15.0
LIFETIME_S: Final = 300.0


def live_endpoint(store_for: Callable[[], BaseStore]) -> Callable[[Request], Any]:
    async def live(request: Request) -> Response:
        query = request.query_params
        given = request.headers.get("last-event-id") or query.get("after")
        try:
            if set(query) - {"after"} or len(query.getlist("after")) > 1:
                raise InvalidValueError(
                    "/live takes one parameter, after (a cursor), once", field="after"
                )
            start = Cursor.parse(given) if given else None
        except InvalidValueError as exc:
            return Response(str(exc), status_code=400, media_type="text/plain")
        still = request.scope.get("noetic.still_admitted") or (lambda: True)
        return StreamingResponse(
            _changes(store_for, start, still),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    return live


async def _changes(
    store_for: Callable[[], BaseStore], seen: Cursor | None, still: Callable[[], bool]
) -> AsyncIterator[str]:
    """The stream's events; it ends as soon as its request would no longer be let in (its
    login session ended, its token was revoked), checked at every poll."""
    yield "retry: 1000\n\n"
    ends = time.monotonic() + LIFETIME_S
    pinged = time.monotonic()
    while time.monotonic() < ends:
        now = await anyio.to_thread.run_sync(_cursor, store_for, still)
        if now is None:
            return
        if seen is None:
            seen = now
            yield f"id: {now}\nevent: ready\ndata: {{}}\n\n"
        elif now != seen:
            kinds = await anyio.to_thread.run_sync(_kinds, store_for, seen.events)
            data = json.dumps({"cursor": str(now), "kinds": kinds})
            seen = now
            yield f"id: {now}\nevent: change\ndata: {data}\n\n"
        elif time.monotonic() - pinged > PING_S:
            pinged = time.monotonic()
            yield ": ping\n\n"
        await anyio.sleep(POLL_S)


def _cursor(store_for: Callable[[], BaseStore], still: Callable[[], bool]) -> Cursor | None:
    return cursor(store_for()) if still() else None


def _kinds(store_for: Callable[[], BaseStore], after: int) -> list[str]:
    return new_kinds(store_for(), after)
