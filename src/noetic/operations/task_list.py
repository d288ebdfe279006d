"""Browse the store by task: the tasks list (filters, search, paging) across every session.

The sessions list (:mod:`noetic.operations.session_list`) answers "what did each agent do"; this one
answers "which tasks went how", without opening each session. It takes the same URL parameters
as the sessions list, applied to tasks: ``status`` and ``profile`` are the task's own, ``agent``
and ``project`` its session's, ``engine`` an engine that wrote an event about the task,
``outcome`` the task's own outcome and ``since``/``until`` the day the task was opened. Like
the sessions list it is built for large stores, a page reading the figures of its own ids only.
"""

from __future__ import annotations

from typing import Final

from noetic.operations.session_list import ListPage, SessionFilters, filter_choices, list_query
from noetic.store import listing
from noetic.store.base import BaseStore

TASK_STATUSES: Final = ("open", "completed", "abandoned")


class TaskFilters(SessionFilters):
    """What the tasks list shows; every field is a URL query parameter of the same name, as on
    the sessions list (so a filtered view moves between the two by its query string)."""


TasksPage = ListPage[TaskFilters, listing.TaskFigures]


def list_tasks(store: BaseStore, filters: TaskFilters) -> TasksPage:
    """One page of tasks, newest first, each with its session's agent, its latest confidence,
    its outcome and the engines that reported on it."""
    total, found = listing.task_page(store, list_query(filters))
    seen = filter_choices(store)
    # a task's status is whatever closed it (completed, abandoned, or end_task's own word)
    statuses = sorted({*TASK_STATUSES, *listing.task_statuses(store)})
    return TasksPage.of(filters, total, found, seen.model_copy(update={"statuses": statuses}))
