"""Who may read the dashboard: the same rule as ``/mcp``, decided on each request.

While no token is required (the server is bound to loopback, started without ``--token``, and
the store has no live token) every request from this machine is let in, provided its ``Host``
header names loopback too, so a web page elsewhere cannot reach it through DNS rebinding. From
the request after the first ``noetic token create`` on, a request needs either
``Authorization: Bearer TOKEN`` (the admin token or a live store token, read-only ones
included: the dashboard only reads) or the cookie the login form sets: a random login session
id the server holds in memory (:meth:`noetic.operations.access_tokens.Access.login`), never a token
and nothing derived from the store, so a copy of the database cannot forge one; each login
gets a new one, and logging out, revoking the token or stopping the server ends it (and the
page's ``/live`` stream with it: :func:`admitted` is asked again while a stream is open). The
cookie is ``HttpOnly`` and ``SameSite=Strict``.
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
