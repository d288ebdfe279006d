"""Claude Code's hooks over HTTP, on ``noetic serve``'s app: ``POST /hooks/{event}``, and ``GET
/hooks`` listing the events (docs/claude-code.md, "Hook kinds: command or http").

Each answers as ``noetic hook EVENT`` would, for the one store this server opened and the one
project it was started for (:func:`server_project`), behind the ``Host``/``Origin`` check
``/mcp`` applies. What is no hook at all is refused, so a mistake in ``settings.json`` shows in
Claude Code instead of passing for a hook that ran: an unknown event answers 404, a body that is
not a JSON object 400 (PreToolUse: ``deny``), each with ``{"error": {"message", "fix"}}``. The
work runs in a worker thread (the store is SQLite), so a slow hook never holds the MCP
endpoint's event loop.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from noetic.errors import InvalidValueError


def server_project(home: Path, cwd: Path | None = None) -> Path:
    """The project a server for the store ``home`` answers hooks for: the folder holding the
    store when it is a project's ``.noetic``, else the git repository around ``cwd`` (where
    the server was started), else ``cwd``."""
    from noetic.store.location import STORE_DIRNAME, find_git_root

    if home.name == STORE_DIRNAME:
        return home.resolve().parent
    folder = (cwd or Path.cwd()).resolve()
    return find_git_root(folder) or folder


def _security(host: str) -> Any:
    """The ``Host``/``Origin`` check ``/mcp`` applies for a server bound to ``host``."""
    from mcp.server.transport_security import (
        TransportSecurityMiddleware,
        TransportSecuritySettings,
    )

    from noetic.operations.access_tokens import LOOPBACK

    if host not in LOOPBACK:
        return TransportSecurityMiddleware(None)
    return TransportSecurityMiddleware(
        TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    )


def hook_routes(home: Path, *, host: str = "127.0.0.1", project: Path | None = None) -> list[Route]:
    from noetic.hosts.hooks.answer import EVENTS

    root = project if project is not None else server_project(home)
    security = _security(host)

    async def listing(request: Request) -> Response:
        refused = await security.validate_request(request, is_post=False)
        if refused is not None:
            return refused  # type: ignore[no-any-return]
        return JSONResponse({"events": list(EVENTS), "store": str(home), "project": str(root)})

    async def answer(request: Request) -> Response:
        from anyio import to_thread

        # Host and Origin only: a browser sends Origin with every cross-site POST, whatever
        # its content type, and Claude Code's own content type is not this check's business
        refused = await security.validate_request(request, is_post=False)
        if refused is not None:
            return refused  # type: ignore[no-any-return]
        event = request.path_params["event"]
        if event not in EVENTS:  # a typo in settings.json must not pass for a hook that ran
            return _refused(
                404, f"unknown hook event {event!r}", f"post to /hooks/EVENT, EVENT one of: "
                f"{', '.join(EVENTS)}"
            )  # fmt: skip
        try:
            payload = _payload(await _body(request))
        except InvalidValueError as exc:
            if event == "pre-tool-use":  # an error must not open the gate
                from noetic.hosts.hooks.pretool import failed
                from noetic.hosts.hooks.shared import log_failure

                log_failure(event, {}, home, exc, root)
                return _json(failed(exc))
            return _refused(400, exc.message, "post the JSON object Claude Code sends the hook")
        reply = await to_thread.run_sync(_run, event, payload, home, root)
        return Response(status_code=200) if reply is None else _json(reply)

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


def _json(reply: dict[str, Any]) -> Response:
    return Response(
        json.dumps(reply, ensure_ascii=False), status_code=200, media_type="application/json"
    )


def _run(event: str, payload: dict[str, Any], home: Path, project: Path) -> dict[str, Any] | None:
    """What ``noetic hook EVENT`` does with ``payload`` on stdin, against the server's store
    and project. A PreToolUse hook that fails is denied (an error must not open the gate); any
    other failing hook answers nothing."""
    from noetic.hosts.hooks.answer import run_hook
    from noetic.hosts.hooks.shared import log_failure

    try:
        return run_hook(event, payload, store=home, project=project)
    except Exception as exc:  # a hook must never fail the agent: log, answer nothing
        log_failure(event, payload, home, exc, project)
        if event == "pre-tool-use":
            from noetic.hosts.hooks.pretool import failed

            return failed(exc)
        return None


def _payload(body: bytes) -> dict[str, Any]:
    from noetic.limits import STDIN_BYTES
    from noetic.untrusted import decode_utf8, load_json

    text = decode_utf8(body, "the hook's request body", STDIN_BYTES)
    if not text.strip():
        return {}
    data = load_json(text, "the hook's request body")
    if not isinstance(data, dict):
        raise InvalidValueError("the hook's request body is not a JSON object", field="body")
    return data
