"""Per-person access tokens for ``noetic serve``: create, list, revoke, and who a request is
(``docs/teams.md``).

A token is ``secrets.token_urlsafe(32)``; the store keeps only its SHA-256, which is enough for a
secret that cannot be guessed (no salt or slow hash is needed: there is no dictionary to try). A
revoked name is kept, and cannot be made again, so the rows it wrote (``written_by``) keep
naming one token. :class:`Access` is the server's side: the admin token ``noetic serve --token``
was given (compared in constant time), the store's tokens, each an :class:`Identity` (a
read-only one writes nothing), and the dashboard's login sessions, held in memory only.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from noetic.errors import InvalidValueError, NotFoundError

if TYPE_CHECKING:
    from noetic.store.base import BaseStore

LOOPBACK: Final = frozenset({"127.0.0.1", "localhost", "::1"})
"""The addresses a server may be bound to and stay unreachable from other machines."""
NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._@-]{0,63}")
MAX_LOGINS: Final = 10_000
"""Dashboard login sessions a server keeps at once; a login beyond it ends the oldest."""


@dataclass(frozen=True)
class Identity:
    """Who a request is: ``name`` None for the admin token (``--token``), else the store
    token's name; ``read_only`` tokens write nothing. ``open``: no token at all, on a server
    that requires none at the moment (:data:`ANYONE`)."""

    name: str | None
    read_only: bool = False
    open: bool = False

    @property
    def label(self) -> str:
        if self.open:
            return "a request without a token"
        return "the admin token" if self.name is None else f"token {self.name!r}"


ADMIN: Final = Identity(None)
ANYONE: Final = Identity(None, open=True)


def digest(token: str) -> str:
    """The stored form of a token: its SHA-256, in hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str) -> str:
    if not NAME.fullmatch(name):
        raise InvalidValueError(
            f"{name!r} is not a token name: use 1 to 64 letters, digits, '.', '_', '@' or '-', "
            "starting with a letter or digit",
            field="name",
            value=name,
            fix="e.g. noetic token create alice",
        )
    return name


def create_token(store: BaseStore, name: str, *, read_only: bool = False) -> dict[str, Any]:
    """A new token called ``name``; the result holds the token itself (``token``), which is
    shown this once and never stored."""
    from noetic.store.access_tokens import insert_token, token_rows

    check_name(name)
    existing = token_rows(store, name)
    if existing:
        state = "was revoked; a revoked name is kept" if existing[0]["revoked_at"] else "exists"
        raise InvalidValueError(
            f"a token called {name!r} {state}",
            field="name",
            value=name,
            fix="choose another name" + ("" if existing[0]["revoked_at"] else
                                         f", or revoke it first: noetic token revoke {name}"),
        )  # fmt: skip
    token = secrets.token_urlsafe(32)
    row = insert_token(store, name, digest(token), read_only=read_only)
    return {**row, "token": token}


def list_tokens(store: BaseStore) -> list[dict[str, Any]]:
    """Every token, oldest first: name, read-only, created, revoked (never a token or hash)."""
    from noetic.store.access_tokens import token_rows

    return token_rows(store)


def revoke_token(store: BaseStore, name: str) -> dict[str, Any]:
    """Revoke ``name``: the server refuses it from its next request on. Revoking a revoked
    token is an error that says when it was revoked."""
    from noetic.store.access_tokens import revoke_token as revoke
    from noetic.store.access_tokens import token_rows

    check_name(name)
    if not token_rows(store, name):
        raise NotFoundError(f"no token called {name!r}", fix="see them with: noetic token list")
    if not revoke(store, name):
        when = token_rows(store, name)[0]["revoked_at"]
        raise InvalidValueError(f"the token {name!r} was revoked already, at {when}",
                                field="name", value=name)  # fmt: skip
    return token_rows(store, name)[0]


class Access:
    """Who may use a server over the store at ``home``: the admin token (if given) and the
    store's unrevoked tokens. Whether a request must carry one is decided per request
    (:meth:`admit`, the rule in ``docs/teams.md``), at a cost of at most one query beyond the
    token's own lookup. Lookups share one read connection, opened on first use, behind a lock
    (the event loop and the dashboard's worker threads both ask)."""

    def __init__(self, home: Path, admin: str | None, *, loopback: bool = True) -> None:
        self.home = home
        self.admin = admin
        self.loopback = loopback
        self._store: BaseStore | None = None
        self._lock = threading.Lock()
        self._logins: dict[str, Identity] = {}  # SHA-256 of a login session id: who it is

    @property
    def required(self) -> bool:
        """Whether a request made now must carry a token (one query unless it always must)."""
        return self.admin is not None or not self.loopback or self._any_live()

    def admit(self, header: str | None) -> Identity | None:
        """Who a request with this ``Authorization`` header is: its token's identity,
        :data:`ANYONE` when no token is required now, else None (refuse it). A header with a
        live token costs its one lookup; any other request costs one query more (is there a
        live token at all?), and none when a token is always required."""
        who = self.bearer(header)
        if who is not None or self.admin is not None or not self.loopback:
            return who
        return None if self._any_live() else ANYONE

    def _any_live(self) -> bool:
        from noetic.store.access_tokens import any_live_token

        with self._lock:
            return any_live_token(self._reader())

    def _reader(self) -> BaseStore:
        if self._store is None:
            from noetic.store import open_store

            self._store = open_store(self.home, create=True, write_files=False)
        return self._store

    def token(self, given: str) -> Identity | None:
        """The identity a bearer token (without ``Bearer ``) stands for, else None."""
        if self.admin is not None and hmac.compare_digest(given.encode(), self.admin.encode()):
            return ADMIN
        from noetic.store.access_tokens import token_by_hash

        with self._lock:
            row = token_by_hash(self._reader(), digest(given))
        if row is None or row["revoked_at"] is not None:
            return None
        return Identity(row["name"], row["read_only"])

    def bearer(self, header: str | None) -> Identity | None:
        """The identity an ``Authorization`` header stands for, else None."""
        if not header or not header.startswith("Bearer "):
            return None
        return self.token(header[len("Bearer ") :])

    def login(self, who: Identity) -> str:
        """A new login session for ``who`` (the dashboard's cookie): a random id this server
        holds in memory, so it is new on every login, a copy of the database cannot forge one,
        and it ends at :meth:`logout`, when its token is revoked, or when the server stops."""
        session = secrets.token_urlsafe(32)
        with self._lock:
            self._logins[_login_key(session)] = who
            while len(self._logins) > MAX_LOGINS:  # the oldest first (dicts keep their order)
                del self._logins[next(iter(self._logins))]
        return session

    def cookie(self, value: str) -> Identity | None:
        """The identity a login session id stands for, else None: an id this server never
        gave, one logged out, or one whose store token has been revoked since (which ends it)."""
        key = _login_key(value)
        with self._lock:
            who = self._logins.get(key)
        if who is None or who.name is None:
            return who
        from noetic.store.access_tokens import token_rows

        with self._lock:
            rows = token_rows(self._reader(), who.name)
            if rows and rows[0]["revoked_at"] is None:
                return who
            self._logins.pop(key, None)
        return None

    def logout(self, value: str) -> None:
        """End the login session ``value`` (nothing if it is not one)."""
        with self._lock:
            self._logins.pop(_login_key(value), None)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None


def _login_key(value: str) -> str:
    """How a login session id is held: its SHA-256 (a cookie may hold any characters)."""
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
