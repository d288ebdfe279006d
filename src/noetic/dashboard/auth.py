"""Who may read the dashboard: the same rule as ``/mcp``.

Without tokens (the server is bound to loopback, started without ``--token`` over a store with
no live tokens) every request from this machine is let in, provided its ``Host`` header names
loopback too, so a web page elsewhere cannot reach it through DNS rebinding. Otherwise a
request needs either ``Authorization: Bearer TOKEN`` (the admin token or a live store token,
read-only ones included: the dashboard only reads) or the cookie the login form sets: an HMAC
keyed by the admin token or by the store token's hash, so the cookie never holds a token and
changing the admin token, or revoking the store token, logs its browsers out
(:class:`noetic.operations.tokens.Access`). The cookie is ``HttpOnly`` and ``SameSite=Strict``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from noetic.operations.tokens import admin_cookie

if TYPE_CHECKING:
    from noetic.operations.tokens import Access

COOKIE: Final = "noetic_dashboard"
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def cookie_value(token: str) -> str:
    """The login cookie for the admin token ``token``."""
    return admin_cookie(token)


def allowed(
    access: Access, *, authorization: str | None, cookie: str | None, host_header: str | None
) -> bool:
    """Whether a request may read the dashboard (module docstring)."""
    if not access.required:
        return _loopback_host(host_header)
    if access.bearer(authorization) is not None:
        return True
    return cookie is not None and access.cookie(cookie) is not None


def _loopback_host(header: str | None) -> bool:
    if not header:
        return True  # HTTP/1.0 clients send none; a browser always does
    name = header.rsplit(":", 1)[0] if not header.endswith("]") else header
    return name.lower() in LOOPBACK_HOSTS


def safe_next(target: str | None) -> str:
    """Where to go after logging in: a path on this server, never another site."""
    if not target or not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target
