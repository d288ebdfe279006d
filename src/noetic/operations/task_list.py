"""Browse the store by task: the tasks list (filters, search, paging) across every session.

The sessions list (:mod:`noetic.operations.browse`) answers "what did each agent do"; this one
answers "which tasks went how", without opening each session. It takes the same URL parameters
as the sessions list, applied to tasks: ``status`` and ``profile`` are the task's own, ``agent``
and ``project`` its session's, ``engine`` an engine that wrote an event about the task,
``outcome`` the task's own outcome and ``since``/``until`` the day the task was opened.

Like the sessions list it is built for large stores: one query finds the page's ids (filters,
search and the sort in SQL, the count one ``COUNT``), a second set of queries reads the figures
of those ids only.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from noetic.operations.browse import (
    Choices,
    SessionFilters,
    created_between,
    equal_to,
    filter_choices,
    like_pattern,
)
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
    where, args = _conditions(filters)
    conn = store.conn
    # every task has its session (a foreign key): the join is made only for a session's filter,
    # so an unfiltered page walks the tasks' index alone
    by_session = any(v is not None for v in (filters.agent, filters.project, filters.q))
    joined = "FROM cascades c" + (" JOIN sessions s ON s.id = c.session_id" if by_session else "")
    total = conn.execute(f"SELECT COUNT(*) {joined}{where}", args).fetchone()[0]
    offset = (filters.page - 1) * filters.per_page
    # the sort carries only (created_at, id); the page's rows are read by id afterwards
    ids = [
        r[0]
        for r in conn.execute(
            f"SELECT c.id {joined}{where} ORDER BY c.created_at DESC, c.id DESC LIMIT ? OFFSET ?",
            [*args, filters.per_page, offset],
        )
    ]
    seen = filter_choices(store)
    # a task's status is whatever closed it (completed, abandoned, or end_task's own word)
    statuses = sorted(
        {*TASK_STATUSES, *(r[0] for r in conn.execute("SELECT DISTINCT status FROM cascades"))}
    )
    return TasksPage(
        filters=filters,
        rows=_rows(store, ids),
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


def _conditions(f: TaskFilters) -> tuple[str, list[Any]]:
    parts: list[str] = []
    args: list[Any] = []
    equal_to(
        parts,
        args,
        {"s.ai_id": f.agent, "c.profile": f.profile, "s.project": f.project, "c.status": f.status},
    )
    if f.engine is not None:
        # events are indexed by session: the task's session narrows them before its id does
        parts.append(
            "EXISTS (SELECT 1 FROM events e WHERE e.session_id = c.session_id"
            " AND e.cascade_id = c.id AND e.engine = ?)"
        )
        args.append(f.engine)
    if f.outcome == "none":
        parts.append("c.id NOT IN (SELECT cascade_id FROM outcomes WHERE cascade_id IS NOT NULL)")
    elif f.outcome is not None:
        op = ">=" if f.outcome == "success" else "<"
        parts.append(f"c.id IN (SELECT cascade_id FROM outcomes WHERE score {op} 0.5)")
    created_between(parts, args, "c.created_at", f)
    if f.q:
        like = like_pattern(f.q)
        parts.append(
            "(c.task LIKE ? ESCAPE '\\' OR c.id LIKE ? ESCAPE '\\' OR s.id LIKE ? ESCAPE '\\'"
            " OR s.ai_id LIKE ? ESCAPE '\\' OR s.project LIKE ? ESCAPE '\\')"
        )
        args += [like] * 5
    return (" WHERE " + " AND ".join(parts)) if parts else "", args


def _rows(store: BaseStore, ids: list[str]) -> list[TaskListRow]:
    if not ids:
        return []
    marks = ",".join("?" * len(ids))
    conn = store.conn
    by_id = {
        r["id"]: r
        for r in conn.execute(
            "SELECT c.id, c.task, c.session_id, c.profile, c.status, c.created_at, c.ended_at, "
            "s.ai_id, s.ai_model, s.project "
            f"FROM cascades c JOIN sessions s ON s.id = c.session_id WHERE c.id IN ({marks})",
            ids,
        )
    }
    counts = dict(
        conn.execute(
            f"SELECT cascade_id, COUNT(*) FROM assessments WHERE cascade_id IN ({marks}) "
            f"GROUP BY cascade_id",
            ids,
        ).fetchall()
    )
    confidence = {
        r["cascade_id"]: r["confidence"]
        for r in conn.execute(
            f"SELECT a.cascade_id, a.confidence FROM assessments a JOIN ("
            f"SELECT cascade_id, MAX(seq) seq FROM assessments WHERE cascade_id IN ({marks}) "
            f"GROUP BY cascade_id) m ON a.cascade_id = m.cascade_id AND a.seq = m.seq",
            ids,
        )
    }
    outcome = dict(
        conn.execute(
            f"SELECT cascade_id, AVG(score) FROM outcomes WHERE cascade_id IN ({marks}) "
            f"GROUP BY cascade_id",
            ids,
        ).fetchall()
    )
    sessions = sorted({r["session_id"] for r in by_id.values()})
    engines: dict[str, list[str]] = {}
    for r in conn.execute(
        f"SELECT DISTINCT cascade_id, engine FROM events WHERE session_id IN "
        f"({','.join('?' * len(sessions))}) AND cascade_id IN ({marks}) "
        f"AND engine IS NOT NULL ORDER BY engine",
        [*sessions, *ids],
    ):
        engines.setdefault(r["cascade_id"], []).append(r["engine"])
    out = []
    for i in ids:
        r = by_id[i]
        out.append(
            TaskListRow(
                id=r["id"],
                task=r["task"],
                session_id=r["session_id"],
                agent=r["ai_id"],
                model=r["ai_model"],
                profile=r["profile"],
                project=r["project"],
                status=r["status"],
                created_at=r["created_at"],
                ended_at=r["ended_at"],
                assessments=counts.get(i, 0),
                confidence=confidence.get(i),
                outcome=outcome.get(i),
                engines=engines.get(i, []),
            )
        )
    return out
