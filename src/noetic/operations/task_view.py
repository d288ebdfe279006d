"""One task as the dashboard shows it: its assessments in order (PREFLIGHT, each CHECK,
POSTFLIGHT), the decision Noetic derived from each with its reason, the investigation rounds and
the tools they used, the outcomes recorded against it and the model calls it made.
"""

from __future__ import annotations

import json
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from noetic.errors import NotFoundError
from noetic.frozen import Frozen
from noetic.operations.run_view import instant
from noetic.store import views
from noetic.store.base import BaseStore
from noetic.vectors import VECTOR_NAMES

LEVELS: Final = ((0.90, "excellent"), (0.80, "good"), (0.70, "acceptable"))
BELOW: Final = "needs attention"


def level(oriented_score: float) -> str:
    """The seed's display level (:data:`LEVELS`, else :data:`BELOW`) of a score already oriented
    (higher is better), so density and uncertainty are judged the right way round."""
    return next((name for floor, name in LEVELS if oriented_score >= floor), BELOW)


class AssessmentPoint(Frozen):
    seq: int
    phase: str
    at: str
    vectors: dict[str, float]
    confidence: float
    p_success: float | None
    action: str
    rule: str
    reason: str
    threshold: float | None
    gaps: list[str]
    # what the statement was taken to mean when a recalibration map was in force:
    # {value, stated, stated_from, outcomes, method, scope}; None when none was
    calibrated: dict[str, Any] | None = None
    rationales: dict[str, str]
    evidence: dict[str, str]
    note: str


class InvestigationRow(Frozen):
    round: int | None
    tool: str | None
    purpose: str | None
    target_vector: str | None
    success: bool | None
    note: str
    information_gained: str | None
    at: str


class OutcomeRow(Frozen):
    source: str
    score: float
    evidence: str
    at: str
    predicted_preflight: float | None
    predicted_check: float | None


class ModelCall(Frozen):
    at: str
    provider: str
    model: str
    engine: str | None
    attempt: int
    outcome: str
    tokens_in: int
    tokens_out: int
    tokens_cached: int
    latency_ms: float
    cost_usd: float | None
    error_class: str | None


class CallTotals(Frozen):
    calls: int
    tokens_in: int
    tokens_out: int
    latency_ms: float
    cost_usd: float | None
    unpriced: int


class TaskView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    session_id: str
    agent: str
    task: str
    status: str
    profile: str
    provider: str | None
    created_at: str
    ended_at: str | None
    result: dict[str, Any]
    assessments: list[AssessmentPoint]
    investigations: list[InvestigationRow]
    outcomes: list[OutcomeRow]
    calls: list[ModelCall]
    totals: CallTotals
    engines: list[str]
    host_events: list[str] = []
    """What the host reported on this task that is no outcome (Claude Code's PermissionDenied,
    StopFailure), one line each, oldest first."""

    def key_points(self) -> list[AssessmentPoint]:
        """PREFLIGHT, the last CHECK and POSTFLIGHT: the columns of the vector grid."""
        return _key_points(self.assessments)

    def stated_before(self, outcome: OutcomeRow) -> list[AssessmentPoint]:
        """What the task stated before ``outcome`` was recorded, at the phases calibration
        scores: the first PREFLIGHT, the last CHECK and the last POSTFLIGHT written before it
        (each quoted as its P(success) where it gave one, else its confidence)."""
        when = instant(outcome.at)
        return _key_points([a for a in self.assessments if instant(a.at) <= when])

    def vector_path(self, name: str) -> list[float]:
        """One vector's value at each assessment that scored it, in order."""
        return [a.vectors[name] for a in self.assessments if name in a.vectors]


def _key_points(assessments: list[AssessmentPoint]) -> list[AssessmentPoint]:
    """The first PREFLIGHT, the last CHECK and the last POSTFLIGHT among ``assessments``."""
    pre = next((a for a in assessments if a.phase == "preflight"), None)
    check = next((a for a in reversed(assessments) if a.phase == "check"), None)
    post = next((a for a in reversed(assessments) if a.phase == "postflight"), None)
    return [a for a in (pre, check, post) if a is not None]


def task_view(store: BaseStore, task_id: str) -> TaskView:
    """Everything recorded about one task (a cascade), oldest first."""
    c = views.task_with_agent(store, task_id)
    if c is None:
        raise NotFoundError(f"unknown task {task_id!r}")
    assessments = [_point(r) for r in views.task_rows(store, "assessments", task_id)]
    # the rows' columns carry the fields' names (and more, which are left out)
    investigations = [
        InvestigationRow.model_validate({**r, "at": r["created_at"]})
        for r in views.task_rows(store, "investigations", task_id)
    ]
    outcomes = [OutcomeRow.model_validate(r) for r in views.task_rows(store, "outcomes", task_id)]
    calls = [ModelCall.model_validate(r) for r in views.task_rows(store, "llm_calls", task_id)]
    from noetic.events import EventKind
    from noetic.operations.run_view import describe

    host_events = [
        f"{e.at}: {describe(e.kind, e.data)[0]}"
        for e in store.events(
            session_id=c["session_id"], cascade_id=task_id, kind=EventKind.HOST_EVENT.value
        )
    ]
    return TaskView(
        **{**c, "result": json.loads(c["result"])},  # the task's columns, and more left out
        agent=c["ai_id"],
        assessments=assessments,
        investigations=investigations,
        outcomes=outcomes,
        calls=calls,
        totals=_totals(calls),
        engines=views.task_engines(store, c["session_id"], task_id),
        host_events=host_events,
    )


def _point(r: Any) -> AssessmentPoint:
    """A row as a point, unvalidated: the store validated it when it was written, and a task
    may hold a thousand of them."""
    keys = r.keys()
    return AssessmentPoint.model_construct(
        **{k: r[k] for k in ("seq", "phase", "confidence", "action", "rule", "reason", "note")},
        **{k: json.loads(r[k]) for k in ("gaps", "rationales", "evidence")},
        at=r["created_at"],
        vectors={v: r[v] for v in VECTOR_NAMES if r[v] is not None},
        p_success=r["p_success"] if "p_success" in keys else None,
        threshold=r["threshold"],
        # the decision's calibrated value, when a map was in force (a store before m022: none)
        calibrated=json.loads(r["calibrated"])
        if "calibrated" in keys and r["calibrated"]
        else None,
    )


def _totals(calls: list[ModelCall]) -> CallTotals:
    priced = [c.cost_usd for c in calls if c.cost_usd is not None]
    return CallTotals(
        calls=len(calls),
        tokens_in=sum(c.tokens_in for c in calls),
        tokens_out=sum(c.tokens_out for c in calls),
        latency_ms=round(sum(c.latency_ms for c in calls), 3),
        cost_usd=round(sum(priced), 6) if priced else None,
        unpriced=len(calls) - len(priced),
    )
