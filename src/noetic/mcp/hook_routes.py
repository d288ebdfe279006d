"""Claude Code's hooks over HTTP, on ``noetic serve``'s app: ``POST /hooks/{event}``.

A hook of type ``http`` posts the same JSON a command hook reads on stdin; the answer is the
JSON the command would print, with status 200 (an empty body when the command prints
nothing). As for the command, a hook that fails answers 200 with an empty body and the error
goes to ``<store>/hooks.log``: Noetic never stands in the agent's way. What is no hook at all
is refused, so a mistake in ``settings.json`` shows in Claude Code instead of passing for a
hook that ran: an unknown event answers 404, a body that is not a JSON object 400, each with
``{"error": {"message", "fix"}}``. Every hook acts on the
one store this server opened (as every MCP client over HTTP does). Off loopback the server's
bearer token guards these routes like ``/mcp``. ``GET /hooks`` lists the events, for ``noetic
doctor`` to see that the server answers.

The work runs in a worker thread (the store is SQLite), so a slow hook never holds the MCP
endpoint's event loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def hook_routes(home: Path) -> list[Route]:
    from noetic.hosts.hooks import EVENTS

    async def listing(request: Request) -> Response:
        return JSONResponse({"events": list(EVENTS), "store": str(home)})

    async def answer(request: Request) -> Response:
        from anyio import to_thread

        from noetic.errors import InvalidValueError

        event = request.path_params["event"]
        if event not in EVENTS:  # a typo in settings.json must not pass for a hook that ran
            return _refused(
                404, f"unknown hook event {event!r}", f"post to /hooks/EVENT, EVENT one of: "
                f"{', '.join(EVENTS)}"
            )  # fmt: skip
        try:
            payload = _payload(await _body(request))
        except InvalidValueError as exc:
            return _refused(400, exc.message, "post the JSON object Claude Code sends the hook")
        reply = await to_thread.run_sync(_run, event, payload, home)
        if reply is None:
            return Response(status_code=200)
        return Response(
            json.dumps(reply, ensure_ascii=False), status_code=200, media_type="application/json"
        )

    return [
        Route("/hooks", listing, methods=["GET"]),
        Route("/hooks/{event}", answer, methods=["POST"]),
    ]


async def _body(request: Request) -> bytes:
    """The request's body, at most the stdin limit (one byte more marks it too big)."""
    from noetic.limits import STDIN_BYTES

    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > STDIN_BYTES.maximum:
            break
    return bytes(data)


def _refused(status: int, message: str, fix: str) -> Response:
    return JSONResponse({"error": {"message": message, "fix": fix}}, status_code=status)


def _run(event: str, payload: dict[str, Any], home: Path) -> dict[str, Any] | None:
    """What ``noetic hook EVENT`` does with ``payload`` on stdin, against the server's store."""
    from noetic.hosts.hooks import log_failure, run_hook

    try:
        return run_hook(event, payload, store=home)
    except Exception as exc:  # a hook must never fail the agent: log, answer nothing
        log_failure(event, payload, home, exc)
        return None


def _payload(body: bytes) -> dict[str, Any]:
    from noetic.errors import InvalidValueError
    from noetic.limits import STDIN_BYTES
    from noetic.untrusted import decode_utf8, load_json

    text = decode_utf8(body, "the hook's request body", STDIN_BYTES)
    if not text.strip():
        return {}
    data = load_json(text, "the hook's request body")
    if not isinstance(data, dict):
        raise InvalidValueError("the hook's request body is not a JSON object", field="body")
    return data


def mount_hooks(app: Any, home: Path) -> None:
    """Add the hook routes to the Starlette ``app`` (before any catch-all mount)."""
    app.router.routes.extend(hook_routes(home))
