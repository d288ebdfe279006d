"""Calibration against outcomes: recording outcomes, the metrics over them, the Bayesian
beliefs, the guardian that tunes profiles from them, and the drift monitor.

An *outcome* is a verified result of one task (a cascade): a test run, a human verdict, a
checked answer, scored in [0, 1]. A task may get several; the newest per source counts, and the
task's observed score is the mean over sources. All are kept. Next to each outcome Noetic keeps
what the agent predicted: its overall confidence at PREFLIGHT and at its last CHECK, and its
PREFLIGHT vectors.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal

from pydantic import BaseModel, ConfigDict

from noetic.assessment import Phase
from noetic.beliefs import Belief, DriftReport, Proposal, drift, guardian_proposal, update_belief
from noetic.calibration_metrics import CalibrationMetrics, calibration_metrics
from noetic.errors import NotFoundError, ValidationError, WorkflowError
from noetic.profiles import ProfileRegistry
from noetic.store import Store
from noetic.store.outcomes import (
    Adjustment,
    OutcomeRecord,
    add_adjustment,
    add_outcome,
    adjustments,
    effective_profile,
    outcomes,
    undo_adjustment,
)
from noetic.vectors import VECTOR_NAMES, oriented

Prediction = Literal["preflight", "check"]


class OutcomePoint(BaseModel):
    """One task's prediction against its observed outcome."""

    model_config = ConfigDict(frozen=True)

    cascade_id: str
    at: str
    predicted_preflight: float | None
    predicted_check: float | None
    vectors: dict[str, float]
    observed: float


class Filters(BaseModel):
    model_config = ConfigDict(frozen=True)

    ai_id: str | None = None
    profile: str | None = None
    domain: str | None = None
    since_days: float | None = None


class CalibrationReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    filters: Filters
    prediction: Prediction
    tasks: int
    outcomes: int
    metrics: CalibrationMetrics


class BeliefsReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    ai_id: str | None
    tasks: int
    beliefs: list[Belief]


class GuardianReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    profile: str
    tasks_considered: int
    belief: Belief
    proposal: Proposal | None
    applied: Adjustment | None
    note: str


def record_outcome(
    store: Store, target: str, *, score: float, source: str, evidence: str = ""
) -> OutcomeRecord:
    """Record an outcome for a cascade, or for a session's latest task."""
    if isinstance(score, bool) or not 0.0 <= float(score) <= 1.0:
        raise ValidationError(
            f"outcome score must be in [0, 1], got {score!r}", field="score", value=score
        )
    cascade = _resolve_task(store, target)
    session = store.get_session(cascade.session_id)
    history = store.assessments(cascade_id=cascade.id)
    pre = next((a for a in history if a.assessment.phase == Phase.PREFLIGHT), None)
    if pre is None:
        raise WorkflowError(
            f"task {cascade.id} has no PREFLIGHT, so there is no prediction to score",
            fix="record outcomes for tasks that began with a PREFLIGHT",
        )
    checks = [a for a in history if a.assessment.phase == Phase.CHECK]
    record = add_outcome(
        store,
        session_id=session.id,
        cascade_id=cascade.id,
        ai_id=session.ai_id,
        profile=cascade.profile,
        domain=session.domain,
        source=source,
        score=float(score),
        evidence=evidence,
        predicted_preflight=pre.decision.confidence,
        predicted_check=checks[-1].decision.confidence if checks else None,
        predicted_vectors=pre.assessment.vectors,
    )
    registry = ProfileRegistry(store.home / "profiles")
    if effective_profile(store, registry, cascade.profile).guardian.auto_apply:
        guardian(store, registry, cascade.profile, ai_id=session.ai_id)
    return record


def _resolve_task(store: Store, target: str):
    if target.startswith("c_"):
        return store.get_cascade(target)
    session = store.get_session(target)
    cascades = store.cascades(session.id)
    if not cascades:
        raise NotFoundError(f"session {session.id} has no task to record an outcome for")
    return cascades[-1]


def outcome_points(
    store: Store, filters: Filters, *, after: str | None = None
) -> list[OutcomePoint]:
    """One point per task: newest outcome per source, averaged over sources; oldest first."""
    since = None
    if filters.since_days is not None:
        since = (datetime.now(UTC) - timedelta(days=filters.since_days)).isoformat()
    if after is not None:
        since = max(since or after, after)
    rows = outcomes(
        store, ai_id=filters.ai_id, profile=filters.profile, domain=filters.domain, since=since
    )
    newest: dict[str, dict[str, OutcomeRecord]] = {}
    for row in rows:
        newest.setdefault(row.cascade_id, {})[row.source] = row  # later rows replace earlier
    points = []
    for cascade_id, by_source in newest.items():
        latest = max(by_source.values(), key=lambda r: (r.at, r.id))
        points.append(
            OutcomePoint(
                cascade_id=cascade_id,
                at=latest.at,
                predicted_preflight=latest.predicted_preflight,
                predicted_check=latest.predicted_check,
                vectors=latest.predicted_vectors,
                observed=sum(r.score for r in by_source.values()) / len(by_source),
            )
        )
    return sorted(points, key=lambda p: p.at)


def _predicted(point: OutcomePoint, at: Prediction) -> float | None:
    if at == "check" and point.predicted_check is not None:
        return point.predicted_check
    return point.predicted_preflight


def calibration_report(
    store: Store, filters: Filters, *, prediction: Prediction = "preflight", bins: int = 10
) -> CalibrationReport:
    points = [p for p in outcome_points(store, filters) if _predicted(p, prediction) is not None]
    metrics = calibration_metrics(
        [_predicted(p, prediction) for p in points],  # type: ignore[misc]
        [p.observed for p in points],
        bins=bins,
    )
    total = len(
        outcomes(store, ai_id=filters.ai_id, profile=filters.profile, domain=filters.domain)
    )
    return CalibrationReport(
        filters=filters, prediction=prediction, tasks=len(points), outcomes=total, metrics=metrics
    )


def query_bayesian_beliefs(store: Store, ai_id: str | None = None) -> BeliefsReport:
    """Beliefs about the bias of ``overall`` confidence and of each vector, from outcomes."""
    points = outcome_points(store, Filters(ai_id=ai_id))
    beliefs = [
        update_belief(
            "overall",
            [
                p.predicted_preflight - p.observed
                for p in points
                if p.predicted_preflight is not None
            ],
        )
    ]
    for name in VECTOR_NAMES:
        biases = [oriented(name, p.vectors[name]) - p.observed for p in points if name in p.vectors]
        beliefs.append(update_belief(name, biases))
    return BeliefsReport(ai_id=ai_id, tasks=len(points), beliefs=beliefs)


def check_drift_monitor(store: Store, ai_id: str | None = None, *, window: int = 20) -> DriftReport:
    points = [
        p for p in outcome_points(store, Filters(ai_id=ai_id)) if p.predicted_preflight is not None
    ]
    return drift(
        [p.predicted_preflight for p in points],  # type: ignore[misc]
        [p.observed for p in points],
        window=window,
    )


def guardian(
    store: Store,
    registry: ProfileRegistry,
    profile_name: str,
    *,
    ai_id: str | None = None,
    apply: bool = False,
) -> GuardianReport:
    """Propose a profile correction from credible bias, and make it only with ``apply`` or when
    the profile says ``guardian: {auto_apply: true}``.

    Only outcomes recorded after the profile's last applied adjustment count, so a correction
    is judged on the confidences it produced, not on the ones it corrected."""
    profile = effective_profile(store, registry, profile_name)
    apply = apply or profile.guardian.auto_apply
    applied_before = [a for a in adjustments(store, profile=profile_name) if a.undone_at is None]
    after = applied_before[-1].at if applied_before else None
    points = [
        p
        for p in outcome_points(store, Filters(ai_id=ai_id, profile=profile_name), after=after)
        if p.predicted_preflight is not None
    ]
    biases = [p.predicted_preflight - p.observed for p in points]  # type: ignore[operator]
    belief = update_belief("overall", biases)
    proposal = None
    if points:
        proposal = guardian_proposal(
            profile_name,
            profile.tuning.confidence_weight,
            belief,
            sum(p.predicted_preflight for p in points) / len(points),  # type: ignore[misc]
            sum(p.observed for p in points) / len(points),
        )
    applied = None
    if proposal is not None and apply:
        applied = add_adjustment(
            store,
            profile=profile_name,
            field=proposal.field,
            old=proposal.old,
            new=proposal.new,
            reason=proposal.reason,
            evidence={"belief": belief.model_dump(), "tasks": [p.cascade_id for p in points]},
        )
    if proposal is None:
        note = (
            "no credible bias: nothing to change"
            if points
            else _no_outcomes(store, profile_name, ai_id, after)
        )
    elif applied is None:
        note = "proposal only: run with --apply to change the profile"
    else:
        note = f"applied as adjustment {applied.id}; undo with --undo {applied.id}"
    return GuardianReport(
        profile=profile_name,
        tasks_considered=len(points),
        belief=belief,
        proposal=proposal,
        applied=applied,
        note=note,
    )


def _no_outcomes(store: Store, profile: str, ai_id: str | None, after: str | None) -> str:
    """Why nothing can be judged: no outcomes at all, or none since the last correction."""
    if after is None:
        return "no outcomes yet"
    before = sum(
        p.predicted_preflight is not None
        for p in outcome_points(store, Filters(ai_id=ai_id, profile=profile))
    )
    return f"no outcomes since the last correction ({before} before it)"


def undo(store: Store, adjustment_id: int) -> Adjustment:
    return undo_adjustment(store, adjustment_id)
