"""The sessions list: filters, search and paging over every session in the store.

Nothing here writes. The list is built for stores of tens of thousands of sessions: one query
finds the page's ids (filters, search and the sort are SQL, the count is one ``COUNT``), a
second gathers the figures of those ids only, so a page costs the same on page 1 and 200.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Final, Generic, Self, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator

from noetic.errors import InvalidValueError
from noetic.frozen import Frozen
from noetic.store import listing, reads
from noetic.store.base import BaseStore

PAGE_SIZE: Final = 50
MAX_PAGE_SIZE: Final = 500
OUTCOMES: Final = ("success", "failure", "none")
ENGINES: Final = ("cascade", "observer", "nova", "agent")  # what events name as their engine
STATUSES: Final = ("active", "ended")
_NAME: Final = re.compile(r"^[\w.:@/+-]{1,200}$")


class SessionFilters(Frozen):
    """What the list shows; every field is a URL query parameter of the same name."""

    agent: str | None = None
    profile: str | None = None
    project: str | None = None
    engine: str | None = None
    status: str | None = None
    outcome: str | None = None
    since: date | None = None
    until: date | None = None
    q: str | None = Field(None, max_length=200)
    page: int = Field(1, ge=1, le=1_000_000)
    per_page: int = Field(PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE)

    @field_validator("agent", "profile", "project", "engine", "status", mode="before")
    @classmethod
    def _name(cls, value: Any, info: Any) -> str | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str) or not _NAME.match(value):
            raise InvalidValueError(
                f"{info.field_name} {value!r} is not a name", field=info.field_name, value=value
            )
        return value

    @field_validator("outcome", mode="before")
    @classmethod
    def _outcome(cls, value: Any) -> str | None:
        if value is None or value == "":
            return None
        if value not in OUTCOMES:
            raise InvalidValueError(
                f"outcome must be one of {', '.join(OUTCOMES)}, got {value!r}",
                field="outcome",
                value=value,
            )
        return str(value)

    @field_validator("q", "since", "until", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return None if value == "" else value

    def query(self, **changes: Any) -> dict[str, str]:
        """The filters as URL parameters (defaults left out), with ``changes`` applied."""
        data = {**self.model_dump(mode="json"), **changes}
        defaults = SessionFilters().model_dump(mode="json")
        return {k: str(v) for k, v in data.items() if v is not None and v != defaults.get(k)}


class Choices(Frozen):
    """The values each filter can take in this store (for the filter form's menus)."""

    agents: list[str]
    profiles: list[str]
    projects: list[str]
    engines: list[str]
    statuses: list[str]


Filters = TypeVar("Filters", bound=SessionFilters)
Row = TypeVar("Row", bound=listing.RowHead)


class ListPage(BaseModel, Generic[Filters, Row]):
    """One page of a list: its filters and rows, how many rows match in how many pages, and
    the values each filter can take."""

    model_config = ConfigDict(frozen=True)

    filters: Filters
    rows: list[Row]
    total: int
    pages: int
    choices: Choices

    @classmethod
    def of(cls, filters: Filters, total: int, rows: list[Row], choices: Choices) -> Self:
        return cls(
            filters=filters,
            rows=rows,
            total=total,
            pages=max(1, -(-total // filters.per_page)),
            choices=choices,
        )


SessionsPage = ListPage[SessionFilters, listing.SessionFigures]


def list_sessions(store: BaseStore, filters: SessionFilters) -> SessionsPage:
    """One page of sessions, newest first, with each one's tasks, confidence and outcome."""
    total, found = listing.session_page(store, list_query(filters))
    return SessionsPage.of(filters, total, found, filter_choices(store))


def list_query(f: SessionFilters) -> listing.ListQuery:
    """The filters as the store's list reads take them (the page as a limit and offset)."""
    return listing.ListQuery(
        **f.model_dump(exclude={"page", "per_page"}),
        limit=f.per_page,
        offset=(f.page - 1) * f.per_page,
    )


def task_counts(store: BaseStore, session_ids: list[str]) -> dict[str, int]:
    """How many tasks each session has (0 for none), in one query."""
    return listing.task_counts(store, session_ids)


_CHOICES: dict[tuple[str, str | None, int], Choices] = {}


def filter_choices(store: BaseStore) -> Choices:
    """The filter menus' values. Reading them scans the sessions, so they are kept per store
    until a session is added (a session's agent, profile and project never change)."""
    key = (f"{type(store).__name__}:{store.home}", *reads.session_counts(store))
    if key in _CHOICES:
        return _CHOICES[key]
    choices = Choices(
        agents=reads.distinct(store, "sessions", "ai_id"),
        profiles=reads.distinct(store, "sessions", "profile"),
        projects=reads.distinct(store, "sessions", "project"),
        engines=list(ENGINES),
        statuses=list(STATUSES),
    )
    if len(_CHOICES) > 16:
        _CHOICES.clear()
    _CHOICES[key] = choices
    return choices
