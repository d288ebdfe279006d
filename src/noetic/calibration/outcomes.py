"""Outcomes: the verified results of tasks, what the agent predicted beside them, and the
profile adjustments the guardian applied.

An *outcome* is a verified result of one task (a cascade): a test run, a human verdict, a
checked answer, scored in [0, 1]. A task may get several; the newest per source counts, and the
task's observed score is the mean over sources. All are kept. Next to each outcome Noetic keeps
what the agent predicted: its overall confidence at PREFLIGHT and at its last CHECK, and its
PREFLIGHT vectors.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from datetime import UTC, datetime, timedelta

from noetic.assessment import Phase
from noetic.errors import InvalidValueError, NotFoundError
from noetic.plain import Plain
from noetic.profiles import Profile, ProfileRegistry, with_overrides
from noetic.store import outcome_rows
from noetic.store.base import BaseStore as Store
from noetic.store.rows import now

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.calibration.per_phase import Basis, PhasePoint

SOURCES = ("test", "human", "check")


class OutcomeRecord(Plain):
    id: int
    at: str
    session_id: str
    cascade_id: str
    ai_id: str
    profile: str
    domain: str | None
    source: str
    score: float
    evidence: str
    predicted_preflight: float | None
    predicted_check: float | None
    predicted_vectors: dict[str, float]


class Adjustment(Plain):
    id: int
    at: str
    profile: str
    field: str
    old: float
    new: float
    reason: str
    evidence: dict[str, Any]
    undone_at: str | None


def add_outcome(store: Store, **row: Any) -> OutcomeRecord:
    if row["source"] not in SOURCES:
        raise InvalidValueError(
            f"unknown outcome source {row['source']!r}",
            field="source",
            value=row["source"],
            fix=f"one of: {', '.join(SOURCES)}",
        )
    data = {**row, "at": now(), "predicted_vectors": json.dumps(row["predicted_vectors"])}
    return _outcome(outcome_rows.insert_outcome(store, data))


def list_outcomes(
    store: Store,
    *,
    ai_id: str | None = None,
    profile: str | None = None,
    domain: str | None = None,
    since: str | None = None,
) -> list[OutcomeRecord]:
    """Every outcome matching the filters, oldest first."""
    rows = outcome_rows.outcomes(store, ai_id=ai_id, profile=profile, domain=domain, since=since)
    return [_outcome(r) for r in rows]


def _outcome(row: dict[str, Any]) -> OutcomeRecord:
    return OutcomeRecord.from_row(row, predicted_vectors=json.loads(row["predicted_vectors"]))


def add_adjustment(
    store: Store,
    *,
    profile: str,
    field: str,
    old: float,
    new: float,
    reason: str,
    evidence: dict[str, Any],
) -> Adjustment:
    row = {"at": now(), "profile": profile, "field": field, "old": old, "new": new,
           "reason": reason, "evidence": json.dumps(evidence)}  # fmt: skip
    adjustment_id = outcome_rows.insert_adjustment(store, row)
    return adjustments(store, adjustment_id=adjustment_id)[0]


def undo_adjustment(store: Store, adjustment_id: int) -> Adjustment:
    changed = outcome_rows.undo_adjustment(store, adjustment_id)
    found = adjustments(store, adjustment_id=adjustment_id)
    if not found:
        raise NotFoundError(f"unknown adjustment {adjustment_id}")
    if not changed:
        raise InvalidValueError(f"adjustment {adjustment_id} was already undone", field="id")
    return found[0]


def adjustments(
    store: Store, *, profile: str | None = None, adjustment_id: int | None = None
) -> list[Adjustment]:
    rows = outcome_rows.adjustments(store, profile=profile, adjustment_id=adjustment_id)
    return [Adjustment.from_row(r, evidence=json.loads(r["evidence"])) for r in rows]


def active_overrides(store: Store, profile: str) -> dict[str, float]:
    """The newest applied, not undone, value per field for a profile."""
    return {a.field: a.new for a in adjustments(store, profile=profile) if a.undone_at is None}


def effective_profile(store: Store, registry: ProfileRegistry, name: str) -> Profile:
    """The profile as sessions use it: its file plus the guardian's active adjustments."""
    return with_overrides(registry.get(name), active_overrides(store, name))


class OutcomePoint(Plain):
    """One task's prediction against its observed outcome."""

    cascade_id: str
    at: str
    predicted_preflight: float | None
    predicted_check: float | None
    vectors: dict[str, float]
    observed: float


class Filters(Plain):
    ai_id: str | None = None
    profile: str | None = None
    domain: str | None = None
    since_days: float | None = None

    def _check(self) -> None:
        """A window is a positive, finite number of days (at most a century)."""
        value = self.since_days
        if value is not None and not (math.isfinite(value) and 0 < value <= 36_500):
            raise InvalidValueError(
                f"since_days must be a number of days above 0 (at most 36500), got {value!r}",
                field="since_days",
                value=value,
                fix="e.g. --since-days 30 for the last 30 days",
            )


def check_outcome_score(score: float) -> None:
    """An outcome is a score in [0, 1]: 1 success, 0 failure, a share of tests between."""
    if isinstance(score, bool) or not 0.0 <= float(score) <= 1.0:
        raise InvalidValueError(
            f"outcome score must be in [0, 1], got {score!r}", field="score", value=score
        )


def outcome_points(
    store: Store,
    filters: Filters,
    *,
    after: str | None = None,
    tasks: Collection[str] | None = None,
) -> list[OutcomePoint]:
    """One point per task (of ``tasks`` only, when given): newest outcome per source, averaged
    over sources; oldest first."""
    since = None
    if filters.since_days is not None:
        since = (datetime.now(UTC) - timedelta(days=filters.since_days)).isoformat()
    if after is not None:
        since = max(since or after, after)
    rows = outcome_rows.outcomes(
        store,
        ai_id=filters.ai_id,
        profile=filters.profile,
        domain=filters.domain,
        since=since,
        tasks=tasks,
        columns=outcome_rows.PREDICTION_COLUMNS,
    )
    newest: dict[str, dict[str, Any]] = {}
    for row in rows:
        newest.setdefault(row["cascade_id"], {})[row["source"]] = row  # later replace earlier
    points = []
    for by_source in newest.values():
        latest = max(by_source.values(), key=lambda r: (r["at"], r["id"]))
        points.append(
            OutcomePoint.from_row(
                latest,
                vectors=json.loads(latest["predicted_vectors"]),
                observed=sum(float(r["score"]) for r in by_source.values()) / len(by_source),
            )
        )
    return sorted(points, key=lambda p: p.at)


def phase_points(
    store: Store,
    filters: Filters,
    *,
    after: str | None = None,
    tasks: Collection[str] | None = None,
) -> list[PhasePoint]:
    """Every task with an outcome, one point per phase it reached (:mod:`.per_phase`): its
    first PREFLIGHT, its last CHECK and its POSTFLIGHT, each as :func:`~.per_phase.stated_value`
    reads it; oldest task first. A task whose assessments are not in the store (outcomes
    written without them) falls back to the confidences recorded beside its outcome, at
    PREFLIGHT and CHECK. An assessment written after the outcome it would be scored against is
    no prediction and is left out.
    ``after``: only outcomes recorded since then (as :func:`outcome_points`); ``tasks``: only
    these tasks' points."""
    from noetic.calibration.per_phase import PhasePoint, stated_value

    judged = outcome_points(store, filters, after=after, tasks=tasks)
    if not judged:
        return []
    scored = outcome_rows.scored_tasks(store, tasks)
    personas = _personas(store, tasks)
    stated: dict[str, dict[str, tuple[float, Basis]]] = {}
    judged_at = {t.cascade_id: t.at for t in judged}
    for row in scored.assessments:
        if row["cascade_id"] not in judged_at or row["created_at"] > judged_at[row["cascade_id"]]:
            continue  # no outcome, or written once the outcome was known: not a prediction
        phase = row["phase"]
        if phase == Phase.POSTFLIGHT.value and row["review"] == "adversarial":
            phase = "adversarial_review"
        mine = stated.setdefault(row["cascade_id"], {})
        if phase == Phase.PREFLIGHT.value and phase in mine:
            continue  # the first PREFLIGHT is the prediction; the last of any other phase
        mine[phase] = stated_value(row["p_success"], row["confidence"])
    points = []
    for task in judged:
        meta = scored.who.get(task.cascade_id)
        if meta is None:
            continue
        phases = stated.get(task.cascade_id) or _recorded_beside(task)
        for phase, (value, basis) in phases.items():
            points.append(
                PhasePoint(
                    cascade_id=task.cascade_id,
                    at=task.at,
                    phase=phase,
                    stated=value,
                    basis=basis,
                    observed=task.observed,
                    agent=meta.ai_id,
                    model=meta.ai_model or scored.models.get(task.cascade_id) or "(unknown)",
                    engine=scored.engines.get(task.cascade_id) or "workflow",
                    persona=personas.get(task.cascade_id, "(none)"),
                    profile=meta.profile,
                )
            )
    return points


def _recorded_beside(task: OutcomePoint) -> dict[str, tuple[float, Basis]]:
    """The confidences stored beside a task's outcome, for a task without assessments."""
    stored = {
        Phase.PREFLIGHT.value: task.predicted_preflight,
        Phase.CHECK.value: task.predicted_check,
    }
    return {phase: (value, "confidence") for phase, value in stored.items() if value is not None}


def preflight_points(
    store: Store, filters: Filters, *, after: str | None = None
) -> list[PhasePoint]:
    """What each task stated at its PREFLIGHT, oldest first: the per-phase report's
    ``preflight`` points, which the guardian and the drift monitor judge too, so all three
    score the same statement (``p_success`` where given, the vectors' confidence otherwise)."""
    return [p for p in phase_points(store, filters, after=after) if p.phase == "preflight"]


def _personas(store: Store, tasks: Collection[str] | None) -> dict[str, str]:
    """The persona that wrote a Nova task's assessments (turn keys are ``round:node:persona``)."""
    found: dict[str, str] = {}
    for cascade_id, key in outcome_rows.nova_turn_keys(store, tasks):
        _, node, persona = [*key.split(":", 2), "", ""][:3]
        if node in ("preflight", "check", "postflight") and persona:
            found.setdefault(cascade_id, persona)
    return found
