"""Persistence: SQLite as the source of truth, with JSON session files and reflex logs.

:class:`Store` loads (with SQLite and the records) on first use, so finding where the store
lives (:func:`resolve_home`) costs only :mod:`noetic.store.location`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from noetic.store.location import STORE_DIRNAME, StoreLocation, locate_store, require_store

if TYPE_CHECKING:
    from noetic.store.sqlite import Store


def resolve_home(explicit: str | Path | None = None, *, cwd: Path | None = None) -> Path:
    """Where the store lives (see :mod:`noetic.store.location` for the rules)."""
    return locate_store(explicit, cwd=cwd).home


__all__ = [
    "STORE_DIRNAME",
    "Store",
    "StoreLocation",
    "locate_store",
    "require_store",
    "resolve_home",
]


def __getattr__(name: str) -> Any:
    if name == "Store":
        from noetic.store.sqlite import Store

        globals()["Store"] = Store
        return Store
    raise AttributeError(f"module 'noetic.store' has no attribute {name!r}")
