"""The stores a command opens, closed (their files written) when the command ends.

Opening a store is the operations layer's (:mod:`noetic.operations.stores`); a command adds
only the closing, because its process is the store's life: the root command and the fast path
call :func:`close_stores` on the way out.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore as Store

_OPENED: list[Store] = []


def open_store(store: Path | None, *, create: bool = False) -> Store:
    """The store the command uses (:func:`noetic.operations.stores.open_store`), closed when
    the command ends."""
    from noetic.operations.stores import open_store as opened_store

    opened = opened_store(store, create=create)
    _OPENED.append(opened)
    return opened


def close_stores() -> None:
    """Close every store a command opened: the root command calls this when it ends."""
    while _OPENED:
        _OPENED.pop().close()


def open_tracker(store: Path | None, *, create: bool = False) -> Tracker:
    """The tracker over :func:`open_store`'s store."""
    from noetic.operations.stores import tracker_over

    return tracker_over(open_store(store, create=create))
