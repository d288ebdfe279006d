"""Who may read the dashboard: the same rule as ``/mcp``.

Without a token (the server is bound to loopback) every request from this machine is let in,
provided its ``Host`` header names loopback too, so a web page elsewhere cannot reach it through
DNS rebinding. With a token a request needs either ``Authorization: Bearer TOKEN`` or the
cookie the login form sets: an HMAC of the token, so the cookie never holds the token itself
and changing the token logs every browser out. The cookie is ``HttpOnly`` and
``SameSite=Strict``.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import Final

COOKIE: Final = "noetic_dashboard"
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def cookie_value(token: str) -> str:
    return hmac.new(token.encode(), b"noetic dashboard session", hashlib.sha256).hexdigest()


def token_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def allowed(
    token: str | None, *, authorization: str | None, cookie: str | None, host_header: str | None
) -> bool:
    """Whether a request may read the dashboard (module docstring)."""
    if token is None:
        return _loopback_host(host_header)
    if authorization is not None and token_matches(authorization, f"Bearer {token}"):
        return True
    return cookie is not None and hmac.compare_digest(cookie, cookie_value(token))


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
