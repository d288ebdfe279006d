"""Persistence: SQLite as the source of truth, with JSON session files and reflex logs.

:class:`Store` loads (with SQLite and the records) on first use, so finding where the store
lives (:func:`resolve_home`) costs only :mod:`noetic.store.location`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from noetic.store.location import (
    STORE_DIRNAME,
    StoreLocation,
    locate_store,
    require_store,
    store_url,
)

if TYPE_CHECKING:
    from noetic.store.base import BaseStore
    from noetic.store.sqlite import Store


def resolve_home(explicit: str | Path | None = None, *, cwd: Path | None = None) -> Path:
    """Where the store lives (see :mod:`noetic.store.location` for the rules)."""
    return locate_store(explicit, cwd=cwd).home


def open_store(home: str | Path, *, url: str | None = None, **options: Any) -> BaseStore:
    """The store for the directory ``home``: PostgreSQL when a URL is given or configured
    (:func:`noetic.store.location.store_url`), else SQLite in ``home`` (``options`` go to
    :class:`noetic.store.sqlite.Store`; a PostgreSQL store writes no session files)."""
    url = url or store_url(Path(home))
    if url is None:
        from noetic.store.sqlite import Store

        return Store(home, **options)
    try:
        from noetic.store.postgres import PostgresStore
    except ImportError as exc:
        from noetic.errors import StoreError

        raise StoreError(
            f"a PostgreSQL store needs psycopg, which is not installed ({exc})",
            fix="pip install 'noetic[postgres]'",
        ) from None
    from noetic.store.location import store_files, store_hnsw

    return PostgresStore(
        url, home=home, write_files=store_files(Path(home)), hnsw=store_hnsw(Path(home))
    )


__all__ = [
    "STORE_DIRNAME",
    "Store",
    "StoreLocation",
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
