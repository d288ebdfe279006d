"""Persistence: SQLite as the source of truth, with JSON session files and reflex logs.

:class:`Store` loads (with SQLite and the records) on first use, so finding where the store
lives (:func:`resolve_home`) costs only :mod:`noetic.store.location`.
"""

from __future__ import annotations

from _thread import get_ident
from pathlib import Path

from noetic.store.location import (
    STORE_DIRNAME,
    StoreLocation,
    locate_store,
    require_store,
    store_url,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.store.base import BaseStore
    from noetic.store.sqlite import Store


def resolve_home(explicit: str | Path | None = None, *, cwd: Path | None = None) -> Path:
    """Where the store lives (see :mod:`noetic.store.location` for the rules)."""
    return locate_store(explicit, cwd=cwd).home


# the stores a command opened on its thread, while it runs (a server's worker threads open
# their own, which outlive any command run beside them)
_COMMAND: dict[int, list[BaseStore]] = {}


def open_store(
    where: str | Path | None = None,
    *,
    create: bool = False,
    url: str | None = None,
    write_files: bool = True,
    background: bool = False,
) -> BaseStore:
    """The store at ``where`` (a directory or a PostgreSQL URL; None: found by the rules of
    :mod:`noetic.store.location`), PostgreSQL when a URL is given or configured, else SQLite.
    ``url`` names the database instead of the configuration. Only callers that write pass
    ``create``; otherwise a missing store is an error that says
    where it looked, and nothing is created. ``write_files`` and ``background`` go to
    :class:`noetic.store.sqlite.Store` (a PostgreSQL store writes session files only when
    configured to). Within a command (:func:`command_stores`) the store is closed when the
    command ends; otherwise the caller closes it."""
    location = locate_store(where)
    home = location.home if create else require_store(location)
    url = url or location.url
    opened = _open_at(home, url, write_files=write_files, background=background)
    mine = _COMMAND.get(get_ident())
    if mine is not None:
        mine.append(opened)
    return opened


def _open_at(home: Path, url: str | None, *, write_files: bool, background: bool) -> BaseStore:
    if url is None:
        from noetic.store.sqlite import Store

        return Store(home, write_files=write_files, background=background)
    try:
        from noetic.store.postgres import PostgresStore
    except ImportError as exc:
        from noetic.errors import StoreError

        raise StoreError(
            f"a PostgreSQL store needs psycopg, which is not installed ({exc})",
            fix="pip install 'noetic[postgres]'",
        ) from None
    from noetic.store.location import store_files, store_hnsw

    return PostgresStore(url, home=home, write_files=store_files(home), hnsw=store_hnsw(home))


def command_stores() -> None:
    """From now until :func:`close_stores`, every store opened is the command's: the command
    line's root calls this as a command starts."""
    _COMMAND[get_ident()] = []


def close_stores(*, done: bool = True) -> None:
    """Close every store the command opened (their files written): the command line's root
    calls this when the command ends; a command that goes on (``done=False``) keeps the stores
    it opens later as its own."""
    key = get_ident()
    opened = (_COMMAND.pop(key, None) if done else _COMMAND.get(key)) or []
    while opened:
        opened.pop().close()


__all__ = [
    "STORE_DIRNAME",
    "Store",
    "StoreLocation",
    "close_stores",
    "command_stores",
    "locate_store",
    "open_store",
    "require_store",
    "resolve_home",
    "store_url",
]


def __getattr__(name: str) -> Any:
    if name == "Store":
        from noetic.store.sqlite import Store

        globals()["Store"] = Store
        return Store
    raise AttributeError(f"module 'noetic.store' has no attribute {name!r}")
