"""Which access token the current write is made under, for the ``written_by`` column.

``noetic serve`` sets it for the length of a request made with a store token
(:func:`writing_as`); the store's inserts read it (:func:`stamped`), so no write's signature
carries it. Outside such a request it is unset and the column stays empty. A context variable
follows the request into the worker thread its tool runs on (anyio copies the context).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final

WRITER: ContextVar[str | None] = ContextVar("noetic_writer", default=None)
STAMPED: Final = frozenset({"assessments", "outcomes", "events"})
"""The tables whose new rows record the token that wrote them."""


@contextmanager
def writing_as(name: str | None) -> Iterator[None]:
    """Writes inside the block record ``name`` (None: nothing)."""
    reset = WRITER.set(name)
    try:
        yield
    finally:
        WRITER.reset(reset)


def stamped(table: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with ``written_by`` set when a token is writing and ``table`` records it (a row
    that names its writer already, as an import's does, keeps its own)."""
    name = WRITER.get()
    if name is None or table not in STAMPED or "written_by" in row:
        return row
    return {**row, "written_by": name}
