"""Streamable HTTP for the MCP server, behind an optional bearer token."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.mcp.server import build_server
from noetic.operations.access_tokens import LOOPBACK, Access
from noetic.store.writer import writing_as


def check_token(token: str) -> None:
    """A bearer token: one or more visible ASCII characters, no spaces (a blank or padded token
    would be accepted by mistake, or could not be sent in a header at all)."""
    if not token.strip():
        raise InvalidValueError(
            "the bearer token is blank", field="token", fix="pass --token with a real secret"
        )
    for i, char in enumerate(token):
        if not "!" <= char <= "~":
            raise InvalidValueError(
                f"the bearer token has {'a space' if char.isspace() else repr(char)} at "
                f"character {i}; use visible ASCII characters only",
                field="token",
                fix="generate one with: python -c 'import secrets; print(secrets.token_urlsafe())'",
            )


class BearerAuth:
    """Plain ASGI middleware: an HTTP request must carry ``Authorization: Bearer TOKEN`` whenever
    the server requires one (:meth:`~noetic.operations.access_tokens.Access.admit`, asked on
    every request; docs/teams.md), except on the paths ``exempt`` names (the dashboard's, which
    also take a login cookie). The identity rides on with the request: in the ASGI scope
    (``noetic.identity``, which the MCP server reads for each tool call) and as the writer its
    writes record. A read-only token may not post hooks (403): each one writes."""

    def __init__(self, app: Any, access: Access, exempt: Callable[[str], bool]) -> None:
        self.app = app
        self._access = access
        self._exempt = exempt

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or self._exempt(scope["path"]):
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        who = self._access.admit(given.decode("latin-1"))
        if who is None:
            await _refuse(send, 401, "missing or wrong bearer token")
            return
        if who.read_only and scope["path"].startswith("/hooks/") and scope["method"] == "POST":
            await _refuse(send, 403, f"{who.label} is read-only and hooks write to the store")
            return
        if who.open:
            await self.app(scope, receive, send)
            return
        scope["noetic.identity"] = who
        with writing_as(who.name):
            await self.app(scope, receive, send)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"error": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="noetic"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def http_app(
    home: Path, *, host: str = "127.0.0.1", token: str | None = None, project: Path | None = None
) -> Any:
    """The ASGI app: the MCP endpoint at ``/mcp``, Claude Code's hooks at ``/hooks/{event}``
    (answering for ``project``, default :func:`noetic.mcp.hook_routes.server_project`) and the
    dashboard at ``/``, behind :class:`BearerAuth`."""
    from noetic.dashboard.mount import mount_dashboard, owns
    from noetic.mcp.hook_routes import hook_routes

    if token is not None:
        check_token(token)
    access = Access(home, token, loopback=host in LOOPBACK)
    app = build_server(home, per_connection=True).streamable_http_app(host=host)
    app.router.routes.extend(hook_routes(home, host=host, project=project))  # before any mount
    mount_dashboard(app, home, access=access)
    return BearerAuth(app, access, exempt=owns)
