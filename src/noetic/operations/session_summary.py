"""Read-side summaries shared by the CLI and the MCP server."""

from __future__ import annotations

from noetic.frozen import Frozen
from noetic.store.base import BaseStore as Store
from noetic.store.records import SessionRecord


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


def session_summary(store: Store, session_id: str) -> SessionSummary:
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
