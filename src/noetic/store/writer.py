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

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


WRITER: ContextVar[str | None] = ContextVar("noetic_writer", default=None)
STAMPED: Final = frozenset(
    {
        "sessions",
        "cascades",
        "assessments",
        "investigations",
        "goals",
        "events",
        "outcomes",
        "profile_adjustments",
        "llm_calls",
        "observer_runs",
        "observations",
        "nova_runs",
        "nova_turns",
        "checkpoints",
        "eval_runs",
        "eval_tasks",
    }
)
"""The tables whose new rows record the token that wrote them: every table holding a record a
request (an MCP tool, a hook, the dashboard) can create. The rest (caches, indexes, the agent's
working memory, request ids, tokens) are unstamped on purpose: ``docs/teams.md``, "What is
stamped"."""


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
    that names its writer already keeps its own; an import writes as nobody, so its rows keep
    exactly the writers its document gives)."""
    name = WRITER.get()
    if name is None or table not in STAMPED or row.get("written_by") is not None:
        return row
    return {**row, "written_by": name}


def insert_sql(table: str, row: dict[str, Any], tail: str = "") -> tuple[str, list[Any]]:
    """The ``INSERT`` of ``row`` (:func:`stamped`) into ``table``, with ``tail`` after its
    values, and the values."""
    row = stamped(table, row)
    cols = ", ".join(f'"{k}"' for k in row)
    marks = ", ".join("?" for _ in row)
    return f"INSERT INTO {table} ({cols}) VALUES ({marks}){tail}", list(row.values())
