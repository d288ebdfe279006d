"""Who may read the dashboard: the same rule as ``/mcp``, decided on each request.

While no token is required, every request from this machine is let in provided its ``Host``
header names loopback too (no DNS rebinding). Once a token exists, a request needs
``Authorization: Bearer TOKEN`` or the login cookie: a random login session id the server holds
in memory, never a token nor anything derived from the store, so a copy of the database cannot
forge one; logging out, revoking the token or stopping the server ends it, and the page's
``/live`` stream with it (``docs/dashboard.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from noetic.operations.access_tokens import Access, Identity

COOKIE: Final = "noetic_dashboard"
LOOPBACK_HOSTS: Final = frozenset({"127.0.0.1", "localhost", "[::1]", "::1"})


def admitted(
    access: Access, *, authorization: str | None, cookie: str | None, host_header: str | None
) -> Identity | None:
    """Who a request may read the dashboard as (module docstring): its login cookie's or
    bearer token's identity, :data:`~noetic.operations.access_tokens.ANYONE` while no token is
    required, else None. A login cookie is checked first, so a logged-in browser costs the
    lookups it always did."""
    if cookie is not None:
        who = access.cookie(cookie)
        if who is not None:
            return who
    who = access.admit(authorization)
    if who is not None and who.open and not _loopback_host(host_header):
        return None
    return who


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
