"""Calibration reports over the store: metrics against outcomes, beliefs, drift, and the
self-consistency summary of completed tasks. Shared by the CLI and the MCP server."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict

from noetic.calibration.beliefs import Belief, update_belief
from noetic.calibration.drift import ALPHA, DriftReport, detect_drift
from noetic.calibration.metrics import CalibrationMetrics, calibration_metrics
from noetic.calibration.outcomes import Filters, outcome_points, phase_points, preflight_points
from noetic.calibration.per_phase import (
    Group,
    Grouping,
    PhasePoint,
    PhaseStats,
    ReviewComparison,
    Summary,
    by_phase,
    groups,
    review_comparisons,
    summary,
)
from noetic.calibration.rates import Interval
from noetic.calibration.recalibrating import Settings, decision_points, read_settings
from noetic.calibration.recalibration import recalibrate, release_gate
from noetic.frozen import Frozen
from noetic.store import outcome_rows
from noetic.store.base import BaseStore as Store
from noetic.vectors import VECTOR_NAMES, oriented

Prediction = Literal["preflight", "check", "postflight", "adversarial_review"]


class AgentMap(Frozen):
    """One agent's recalibration map (:mod:`.recalibration`) over its PREFLIGHT statements:
    whether it is in force and why, its held-out Brier score before and after (each with its
    95% interval) and its curve, stated → calibrated, for drawing."""

    agent: str
    outcomes: int
    in_force: bool
    method: str
    reason: str
    fitted_on: int
    held_out: int
    brier_before: Interval | None
    brier_after: Interval | None
    improvement: Interval | None
    curve: list[tuple[float, float]]


class GateReport(Frozen):
    """The release gate over the filtered outcomes (:func:`.recalibration.release_gate`), at the
    configured ``[gate] max_failure_rate`` (``configured``) or, when none is, at 0.10 to show
    what it would be. ``threshold`` is on the stated value; ``calibrated_threshold`` the same
    threshold on the calibrated value."""

    configured: bool
    max_failure_rate: float
    confidence: float
    threshold: float | None
    calibrated_threshold: float | None
    released: int
    held: int
    failures_among_released: Interval
    reason: str


class CalibrationReport(BaseModel):
    """Calibration against outcomes. ``prediction`` is the phase whose statements ``summary``
    and ``metrics`` score; ``stated`` says whether they were ``p_success``, the vectors'
    ``confidence`` or a ``mixed`` set (``summary.stated_from`` counts each). ``by_phase`` has
    every phase; ``reviews`` sets standard beside adversarial POSTFLIGHT reviews per agent;
    ``groups`` repeats ``by_phase`` per value of ``by`` (empty for ``by="phase"``)."""

    model_config = ConfigDict(frozen=True)

    filters: Filters
    prediction: Prediction
    stated: str | None
    tasks: int
    outcomes: int
    summary: Summary
    by_phase: dict[str, PhaseStats]
    reviews: list[ReviewComparison]
    by: Grouping
    groups: list[Group]
    metrics: CalibrationMetrics
    recalibration: list[AgentMap] = []
    gate: GateReport | None = None


class BeliefsReport(Frozen):
    """Beliefs about the bias of the vectors' confidence (``stated``), overall and per vector."""

    stated: str = "confidence"
    ai_id: str | None
    tasks: int
    beliefs: list[Belief]


def calibration_report(
    store: Store,
    filters: Filters,
    *,
    prediction: Prediction = "preflight",
    bins: int = 10,
    by: Grouping = "phase",
) -> CalibrationReport:
    """The report over the filtered outcomes (:class:`CalibrationReport`)."""
    points = phase_points(store, filters)
    phases = by_phase(points)
    scored = [p for p in points if p.phase == prediction]
    metrics = calibration_metrics(
        [p.stated for p in scored], [p.observed for p in scored], bins=bins
    )
    # Brier and AUROC are defined from the first outcome: one figure for each, in the phase
    # table and in the metrics alike.
    scoring = phases[prediction]
    metrics = metrics.model_copy(update={"brier": scoring.brier, "auroc": scoring.auroc})
    total = outcome_rows.count_outcomes(
        store, ai_id=filters.ai_id, profile=filters.profile, domain=filters.domain
    )
    settings = read_settings(store.home)
    return CalibrationReport(
        recalibration=agent_maps(points),
        gate=gate_report(points, settings),
        filters=filters,
        prediction=prediction,
        stated=phases[prediction].stated,
        tasks=len({p.cascade_id for p in points}),
        outcomes=total,
        summary=summary(phases[prediction], total),
        by_phase=phases,
        reviews=review_comparisons(points),
        by=by,
        groups=groups(points, by),
        metrics=metrics,
    )


CURVE: Final = tuple(i / 20 for i in range(21))


def agent_maps(points: Sequence[PhasePoint]) -> list[AgentMap]:
    """Each agent's map over its own PREFLIGHT statements, oldest first."""
    out = []
    for agent in sorted({p.agent for p in points}):
        mine = [p for p in points if p.agent == agent and p.phase == "preflight"]
        fitted = recalibrate([p.stated for p in mine], [p.observed for p in mine])

        def interval(t: tuple[float, float, float] | None) -> Interval | None:
            return None if t is None else Interval(value=t[0], low=t[1], high=t[2])

        out.append(
            AgentMap(
                agent=agent,
                outcomes=fitted.outcomes,
                in_force=fitted.in_force,
                method=fitted.method,
                reason=fitted.reason,
                fitted_on=fitted.fitted_on,
                held_out=fitted.held_out,
                brier_before=interval(fitted.brier_before),
                brier_after=interval(fitted.brier_after),
                improvement=interval(fitted.improvement),
                curve=[(x, round(fitted(x), 4)) for x in CURVE],
            )
        )
    return out


def gate_report(points: Sequence[PhasePoint], settings: Settings) -> GateReport:
    """The release gate over ``points`` (each task's last CHECK statement, else its PREFLIGHT),
    at the configured rate or 0.10."""
    rate = settings.max_failure_rate or 0.10
    tasks = {p.cascade_id for p in points if p.phase == "preflight"}
    pairs = decision_points(list(points), tasks)
    gate = release_gate([p for p, _ in pairs], [y for _, y in pairs], rate, settings.confidence)
    pre = [p for p in points if p.phase == "preflight"]
    fitted = recalibrate([p.stated for p in pre], [p.observed for p in pre])
    return GateReport(
        configured=settings.max_failure_rate is not None,
        max_failure_rate=rate,
        confidence=settings.confidence,
        threshold=gate.threshold,
        calibrated_threshold=None if gate.threshold is None else round(fitted(gate.threshold), 4),
        released=gate.released,
        held=gate.held,
        failures_among_released=Interval(value=gate.failure_rate, low=gate.low, high=gate.high),
        reason=gate.reason,
    )


def query_bayesian_beliefs(store: Store, ai_id: str | None = None) -> BeliefsReport:
    """Beliefs about the bias of ``overall`` confidence and of each vector, from outcomes."""
    points = outcome_points(store, Filters(ai_id=ai_id))
    overall = [
        p.predicted_preflight - p.observed for p in points if p.predicted_preflight is not None
    ]
    beliefs = [update_belief("overall", overall)] + [
        update_belief(
            name,
            [oriented(name, p.vectors[name]) - p.observed for p in points if name in p.vectors],
        )
        for name in VECTOR_NAMES
    ]
    return BeliefsReport(ai_id=ai_id, tasks=len(points), beliefs=beliefs)


def check_drift_monitor(
    store: Store,
    ai_id: str | None = None,
    *,
    window: int = 20,
    alpha: float = ALPHA,
    shift: float | None = None,
) -> DriftReport:
    """The sequential drift test over the AI's outcomes, oldest first (:mod:`.drift`), on what
    each task stated at PREFLIGHT as the per-phase report scores it."""
    points = preflight_points(store, Filters(ai_id=ai_id))
    return detect_drift(
        [p.stated for p in points],
        [p.observed for p in points],
        window=window,
        alpha=alpha,
        shift=shift,
        bases=[p.basis for p in points],
    )


class BasicCalibrationReport(Frozen):
    """Self-consistency calibration (POSTFLIGHT against PREFLIGHT) over completed tasks."""

    ai_id: str | None
    completed_tasks: int
    classifications: dict[str, int]
    mean_confidence_change: float | None
    mean_learning: float | None


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
