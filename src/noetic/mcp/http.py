"""Streamable HTTP for the MCP server, behind an optional bearer token."""

from __future__ import annotations

import hmac
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.mcp.server import build_server


def check_token(token: str) -> str:
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
    return token


class BearerAuth:
    """Plain ASGI middleware: every HTTP request must carry ``Authorization: Bearer TOKEN``,
    except on the paths ``exempt`` names (the dashboard's, which also take a login cookie)."""

    def __init__(self, app: Any, token: str, exempt: Callable[[str], bool] | None = None) -> None:
        self.app = app
        self._expected = f"Bearer {check_token(token)}".encode()
        self._exempt = exempt or (lambda path: False)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and not self._exempt(scope["path"]):
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps({"error": "missing or wrong bearer token"}).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer realm="noetic"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def http_app(home: Path, *, host: str = "127.0.0.1", token: str | None = None) -> Any:
    """The ASGI app: the MCP endpoint at ``/mcp``, Claude Code's hooks at ``/hooks/{event}``
    and the dashboard at ``/``, wrapped in bearer auth when a token is set (the dashboard's
    pages also accept its login cookie)."""
    from noetic.dashboard.mount import mount_dashboard, owns
    from noetic.mcp.hook_routes import mount_hooks

    if token is not None:
        check_token(token)
    app = build_server(home, per_connection=True).streamable_http_app(host=host)
    mount_hooks(app, home)
    mount_dashboard(app, home, token=token)
    return BearerAuth(app, token, exempt=owns) if token is not None else app
