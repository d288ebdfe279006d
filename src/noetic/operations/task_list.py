"""Browse the store by task: the tasks list (filters, search, paging) across every session.

The sessions list (:mod:`noetic.operations.session_list`) answers "what did each agent do"; this one
answers "which tasks went how", without opening each session. It takes the same URL parameters
as the sessions list, applied to tasks: ``status`` and ``profile`` are the task's own, ``agent``
and ``project`` its session's, ``engine`` an engine that wrote an event about the task,
``outcome`` the task's own outcome and ``since``/``until`` the day the task was opened.

Like the sessions list it is built for large stores: one query finds the page's ids (filters,
search and the sort in SQL, the count one ``COUNT``), a second set of queries reads the figures
of those ids only.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

from noetic.operations.session_list import Choices, SessionFilters, filter_choices, list_query
from noetic.store import listing
from noetic.store.base import BaseStore

TASK_STATUSES: Final = ("open", "completed", "abandoned")


class TaskFilters(SessionFilters):
    """What the tasks list shows; every field is a URL query parameter of the same name, as on
    the sessions list (so a filtered view moves between the two by its query string)."""


class TaskListRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    task: str
    session_id: str
    agent: str
    model: str | None
    profile: str
    project: str | None
    status: str
    created_at: str
    ended_at: str | None
    assessments: int
    confidence: float | None  # the latest assessment's
    outcome: float | None  # the mean of the task's outcomes
    engines: list[str]


class TasksPage(BaseModel):
    model_config = ConfigDict(frozen=True)

    filters: TaskFilters
    rows: list[TaskListRow]
    total: int
    pages: int
    choices: Choices


def list_tasks(store: BaseStore, filters: TaskFilters) -> TasksPage:
    """One page of tasks, newest first, each with its session's agent, its latest confidence,
    its outcome and the engines that reported on it."""
    total, found = listing.task_page(store, list_query(filters))
    seen = filter_choices(store)
    # a task's status is whatever closed it (completed, abandoned, or end_task's own word)
    statuses = sorted({*TASK_STATUSES, *listing.task_statuses(store)})
    return TasksPage(
        filters=filters,
        rows=[TaskListRow(**r._asdict()) for r in found],
        total=total,
        pages=max(1, -(-total // filters.per_page)),
        choices=Choices(
            agents=seen.agents,
            profiles=seen.profiles,
            projects=seen.projects,
            engines=seen.engines,
            statuses=statuses,
        ),
    )
