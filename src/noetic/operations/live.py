"""Where the store stands, as one cursor a live page compares: the newest row of the event log,
of the outcomes and of the guardian's adjustments.

Every engine's events reach the event log from whichever process ran them (the CLI, the MCP
server, Python, another machine on a shared store); outcomes and profile corrections are
written without an event, so their newest ids are part of the cursor too. A reader that
remembers the cursor it last saw knows at once whether anything changed, with three indexed
lookups, however large the store.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from noetic.errors import InvalidValueError
from noetic.store import reads
from noetic.store.base import BaseStore

MAX_ID: Final = 2**63 - 1
"""The largest row id SQLite and PostgreSQL (bigint) hold."""
_CURSOR: Final = re.compile(r"[0-9]{1,19}(?:\.[0-9]{1,19}){0,2}")


class Cursor(NamedTuple):
    events: int
    outcomes: int
    adjustments: int

    def __str__(self) -> str:
        return f"{self.events}.{self.outcomes}.{self.adjustments}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """``"12.3.0"`` as written by ``str``; a bare number is an event id alone. Each number
        is ASCII digits no larger than a database id can be (:data:`MAX_ID`)."""
        text = text.strip()
        numbers = [int(p) for p in text.split(".")] if _CURSOR.fullmatch(text) else []
        if not numbers or any(n > MAX_ID for n in numbers):
            raise InvalidValueError(
                f"a live cursor is one to three whole numbers from 0 to {MAX_ID} joined by "
                f"dots, got {text[:40]!r}",
                field="after",
                value=text[:40],
            )
        return cls(*[*numbers, 0, 0][:3])


def cursor(store: BaseStore) -> Cursor:
    """The store's cursor now."""
    return Cursor(*reads.high_water(store))


def new_kinds(store: BaseStore, after: int, limit: int = 50) -> list[str]:
    """The kinds of the events written after event id ``after`` (at most ``limit``)."""
    return reads.event_kinds_after(store, after, limit)
