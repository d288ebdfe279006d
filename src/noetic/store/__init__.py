"""Persistence: SQLite as the source of truth, with JSON session files and reflex logs."""

from __future__ import annotations

from pathlib import Path

from noetic.store.location import STORE_DIRNAME, StoreLocation, locate_store, require_store
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
