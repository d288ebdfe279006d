"""Calibration as the dashboard draws it: everything that says whether stated confidence matched
what happened, in one read model over the calibration report (:mod:`noetic.calibration.reports`):
the report for the chosen phase's statements with a Wilson interval on each reliability bin,
every phase, the overconfidence gap per phase, agent, model, engine, persona and profile, drift
with the running gap it watches, the guardian's proposal per profile and every correction made
or undone.

Nothing here writes: the guardian is asked for proposals only (a profile that applies them on
its own has already done so when its outcomes were recorded).
"""

from __future__ import annotations

from typing import Final

from noetic.calibration import rates
from noetic.calibration.drift import DriftReport
from noetic.calibration.guardian import GuardianReport, run_guardian
from noetic.calibration.metrics import ReliabilityBin
from noetic.calibration.outcomes import (
    Adjustment,
    Filters,
    adjustments,
    effective_profile,
    phase_points,
    preflight_points,
)
from noetic.calibration.per_phase import PHASES, PhasePoint, PhaseStats, groups
from noetic.calibration.reports import CalibrationReport, Prediction
from noetic.errors import NoeticError
from noetic.frozen import Frozen
from noetic.profiles import ProfileRegistry
from noetic.store import reads
from noetic.store.base import BaseStore

DRIFT_WINDOW: Final = 20


class Interval(Frozen):
    low: float
    high: float


class Bin(ReliabilityBin):
    """A reliability bin with the Wilson interval of its observed rate (outcomes may be
    fractional scores; the interval then treats their mean as a rate over ``count`` trials)."""

    interval: Interval


class Gap(Frozen):
    group: str
    n: int
    stated: float
    observed: float
    gap: float
    interval: Interval | None
    significant: bool = False


class DriftPoint(Frozen):
    index: int
    at: str
    gap: float


class GuardianRow(Frozen):
    profile: str
    auto_apply: bool
    report: GuardianReport | None
    note: str


class CalibrationView(Frozen):
    filters: Filters
    prediction: Prediction
    report: CalibrationReport
    bins: list[Bin]
    phases: list[PhaseStats]
    gaps: dict[str, list[Gap]]
    drift: DriftReport
    drift_path: list[DriftPoint]
    guardian: list[GuardianRow]
    adjustments: list[Adjustment]


def calibration_view(
    store: BaseStore, filters: Filters, *, prediction: Prediction = "preflight", bins: int = 10
) -> CalibrationView:
    from noetic.calibration.reports import check_drift_monitor
    from noetic.operations.calibrating import report as calibration_report

    report = calibration_report(
        store,
        ai_id=filters.ai_id,
        profile=filters.profile,
        domain=filters.domain,
        since_days=filters.since_days,
        at=prediction,
        bins=bins,
    )
    points = phase_points(store, filters)
    drift = check_drift_monitor(store, filters.ai_id, window=DRIFT_WINDOW)
    drifted = preflight_points(store, Filters(ai_id=filters.ai_id))
    phases = [report.by_phase[p] for p in PHASES if p in report.by_phase]
    return CalibrationView(
        filters=filters,
        prediction=prediction,
        report=report,
        bins=[
            Bin(**b.model_dump(), interval=wilson(b.observed, b.count))
            for b in report.metrics.reliability
        ],
        phases=phases,
        gaps=_gaps(points, phases, prediction),
        drift=drift,
        drift_path=drift_path(drifted),
        guardian=_guardian(store, filters),
        adjustments=adjustments(store, profile=filters.profile),
    )


def wilson(rate: float, n: int) -> Interval:
    """The 95% Wilson score interval (:func:`noetic.calibration.rates.wilson`) for a rate seen
    over ``n`` trials."""
    found = rates.wilson(min(float(n), rate * n), n)
    if found.low is None or found.high is None:  # no trials
        return Interval(low=0.0, high=1.0)
    return Interval(low=round(found.low, 6), high=round(found.high, 6))


def drift_path(points: list[PhasePoint], window: int = DRIFT_WINDOW) -> list[DriftPoint]:
    """The running gap the drift monitor watches: mean stated − observed over the last
    ``window`` outcomes (fewer at the start), one point per outcome, oldest first; stated as
    the monitor judges it (``p_success`` where given, the vectors' confidence otherwise)."""
    out = []
    diffs = [p.stated - p.observed for p in points]
    for i, p in enumerate(points):
        recent = diffs[max(0, i + 1 - window) : i + 1]
        out.append(DriftPoint(index=i + 1, at=p.at, gap=round(sum(recent) / len(recent), 6)))
    return out


def gap_from(name: str, stats: PhaseStats) -> Gap | None:
    """A phase's statistics as one gap bar (None for a phase no task reached)."""
    if not stats.n or stats.mean_stated is None or stats.gap.value is None:
        return None
    interval = None
    if stats.gap.low is not None and stats.gap.high is not None:
        interval = Interval(low=stats.gap.low, high=stats.gap.high)
    return Gap(
        group=name,
        n=stats.n,
        stated=round(stats.mean_stated, 6),
        observed=round(stats.success_rate.value or 0.0, 6),
        gap=round(stats.gap.value, 6),
        interval=interval,
        significant=stats.significant,
    )


def _gaps(
    points: list[PhasePoint], phases: list[PhaseStats], prediction: Prediction
) -> dict[str, list[Gap]]:
    out: dict[str, list[Gap]] = {
        "phase": [
            g for s in phases if (g := gap_from(s.phase.replace("_", " ").upper(), s)) is not None
        ]
    }
    for by in ("agent", "model", "engine", "persona", "profile"):
        out[by] = [
            g
            for group in groups(points, by)
            if (g := gap_from(group.value, group.by_phase[prediction])) is not None
        ]
    return out


def outcome_choices(store: BaseStore) -> tuple[list[str], list[str]]:
    """The agents and the profiles that have outcomes (the calibration filters' menus)."""
    return reads.distinct(store, "outcomes", "ai_id"), reads.distinct(store, "outcomes", "profile")


def _guardian(store: BaseStore, filters: Filters) -> list[GuardianRow]:
    registry = ProfileRegistry(store.home / "profiles")
    names = sorted(
        set(reads.distinct(store, "outcomes", "profile"))
        if filters.profile is None
        else {filters.profile}
    )
    rows = []
    for name in names:
        try:
            auto = effective_profile(store, registry, name).guardian.auto_apply
        except NoeticError as exc:
            rows.append(GuardianRow(profile=name, auto_apply=False, report=None, note=str(exc)))
            continue
        if auto:
            note = "this profile applies the guardian's corrections as outcomes are recorded"
            rows.append(GuardianRow(profile=name, auto_apply=True, report=None, note=note))
            continue
        report = run_guardian(store, registry, name, ai_id=filters.ai_id, apply=False)
        rows.append(GuardianRow(profile=name, auto_apply=False, report=report, note=report.note))
    return rows
