"""One session with its tasks, each with its confidence path and outcome: the read model of the
dashboard's session page (the list of sessions is :mod:`noetic.operations.session_list`); and
its summary, which the MCP server gives (:func:`session_summary`). Nothing here writes.
"""

from __future__ import annotations

from noetic.errors import NotFoundError
from noetic.frozen import Frozen
from noetic.operations.session_totals import SessionTotals, session_totals
from noetic.store import listing
from noetic.store.base import BaseStore
from noetic.store.records import SessionRecord


class TaskRow(Frozen):
    id: str
    task: str
    status: str
    profile: str
    created_at: str
    ended_at: str | None
    assessments: int
    confidences: list[float]
    outcome: float | None


class SessionView(listing.RowHead):
    domain: str | None
    ended_at: str | None
    tasks: list[TaskRow]
    events: int
    session_type: str | None = None
    totals: SessionTotals = SessionTotals()


def session_view(store: BaseStore, session_id: str) -> SessionView:
    """One session and its tasks, each with its confidence path and outcome."""
    row = listing.find_session(store, session_id)
    if row is None:
        raise NotFoundError(f"unknown session {session_id!r}")
    paths, outcomes, events = listing.session_tasks(store, session_id)
    tasks = [
        TaskRow(
            **{k: getattr(c, k) for k in ("id", "task", "status", "profile", "created_at")},
            ended_at=c.ended_at,
            assessments=len(paths.get(c.id, [])),
            confidences=paths.get(c.id, []),
            outcome=outcomes.get(c.id),
        )
        for c in store.cascades(session_id)
    ]
    return SessionView(
        **row.model_dump(),  # the session's fields, and more left out
        agent=row.ai_id,
        model=row.ai_model,
        tasks=tasks,
        events=events,
        totals=session_totals(store, [row.id])[row.id],
    )


class TaskSummary(Frozen):
    cascade_id: str
    task: str
    status: str
    assessments: int
    investigations: int
    last_action: str | None
    last_confidence: float | None
    calibration: str | None


class SessionSummary(Frozen):
    session: SessionRecord
    tasks: list[TaskSummary]


def session_summary(store: BaseStore, session_id: str) -> SessionSummary:
    session = store.get_session(session_id)
    assessments = store.assessments(session_id=session.id)
    investigations = store.investigations(session_id=session.id)
    tasks = []
    for cascade in store.cascades(session.id):
        mine = [a for a in assessments if a.cascade_id == cascade.id]
        last = mine[-1] if mine else None
        cal = cascade.result.get("calibration") or {}
        tasks.append(
            TaskSummary(
                cascade_id=cascade.id,
                task=cascade.task,
                status=cascade.status,
                assessments=len(mine),
                investigations=sum(1 for i in investigations if i.cascade_id == cascade.id),
                last_action=last.decision.action.value if last else None,
                last_confidence=last.decision.confidence if last else None,
                calibration=cal.get("classification"),
            )
        )
    return SessionSummary(session=session, tasks=tasks)
