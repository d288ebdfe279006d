"""Read-side summaries shared by the CLI and the MCP server."""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, ConfigDict

from noetic.store import Store
from noetic.store.records import SessionRecord


class TaskSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    cascade_id: str
    task: str
    status: str
    assessments: int
    investigations: int
    last_action: str | None
    last_confidence: float | None
    calibration: str | None


class SessionSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    session: SessionRecord
    tasks: list[TaskSummary]


class BasicCalibrationReport(BaseModel):
    """Self-consistency calibration (POSTFLIGHT against PREFLIGHT) over completed tasks."""

    model_config = ConfigDict(frozen=True)

    ai_id: str | None
    completed_tasks: int
    classifications: dict[str, int]
    mean_confidence_change: float | None
    mean_learning: float | None


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


def basic_calibration_report(store: Store, ai_id: str | None = None) -> BasicCalibrationReport:
    sessions = {s.id: s for s in store.list_sessions(limit=1_000_000, ai_id=ai_id)}
    results = [
        c.result["calibration"]
        for sid in sessions
        for c in store.cascades(sid)
        if c.status == "completed" and "calibration" in c.result
    ]
    n = len(results)
    return BasicCalibrationReport(
        ai_id=ai_id,
        completed_tasks=n,
        classifications=dict(Counter(r["classification"] for r in results)),
        mean_confidence_change=(
            round(sum(r["confidence_change"] for r in results) / n, 6) if n else None
        ),
        mean_learning=round(sum(r["learning_magnitude"] for r in results) / n, 6) if n else None,
    )
