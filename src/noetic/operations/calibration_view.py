"""Calibration as the dashboard draws it: everything that says whether stated confidence matched
what happened, in one read model.

* the report (:func:`noetic.calibration.calibration_report`): Brier, ECE, debiased ECE, signed
  bias and AUROC with their 95% intervals and sample sizes, the calibration test's verdict, and
  the reliability bins, each with a 95% Wilson interval on its observed rate;
* the overconfidence gap (mean stated confidence − mean outcome, positive = overconfident) per
  phase (the PREFLIGHT and the last CHECK prediction), agent, model, engine and profile, and per
  Nova persona from its record, each with its count and a normal 95% interval once there are
  enough tasks to give one;
* drift: the monitor's report and alarms, and the running gap it watches, for the chart;
* the guardian: a read-only proposal per profile and every correction made or undone.

Nothing here writes: the guardian is asked for proposals only (a profile that applies them on
its own has already done so when its outcomes were recorded).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Final

from pydantic import BaseModel, ConfigDict

from noetic.calibration.drift import DriftReport
from noetic.calibration.guardian import GuardianReport, run_guardian
from noetic.calibration.outcomes import (
    Adjustment,
    Filters,
    OutcomePoint,
    adjustments,
    effective_profile,
    outcome_points,
)
from noetic.calibration.reports import CalibrationReport, Prediction, calibration_report
from noetic.errors import NoeticError
from noetic.profiles import ProfileRegistry
from noetic.store import Store

Z95: Final = 1.959964
MIN_FOR_INTERVAL: Final = 5
DRIFT_WINDOW: Final = 20


class Interval(BaseModel):
    model_config = ConfigDict(frozen=True)

    low: float
    high: float


class Bin(BaseModel):
    """A reliability bin with the Wilson interval of its observed rate (outcomes may be
    fractional scores; the interval then treats their mean as a rate over ``count`` trials)."""

    model_config = ConfigDict(frozen=True)

    low: float
    high: float
    count: int
    mean_confidence: float
    observed: float
    gap: float
    interval: Interval


class Gap(BaseModel):
    model_config = ConfigDict(frozen=True)

    group: str
    n: int
    stated: float
    observed: float
    gap: float
    interval: Interval | None


class DriftPoint(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    at: str
    gap: float


class GuardianRow(BaseModel):
    model_config = ConfigDict(frozen=True)

    profile: str
    auto_apply: bool
    report: GuardianReport | None
    note: str


class CalibrationView(BaseModel):
    model_config = ConfigDict(frozen=True)

    filters: Filters
    prediction: Prediction
    report: CalibrationReport
    bins: list[Bin]
    gaps: dict[str, list[Gap]]
    drift: DriftReport
    drift_path: list[DriftPoint]
    guardian: list[GuardianRow]
    adjustments: list[Adjustment]


def calibration_view(
    store: Store, filters: Filters, *, prediction: Prediction = "preflight", bins: int = 10
) -> CalibrationView:
    from noetic.calibration.reports import check_drift_monitor

    report = calibration_report(store, filters, prediction=prediction, bins=bins)
    points = outcome_points(store, filters)
    drift = check_drift_monitor(store, filters.ai_id, window=DRIFT_WINDOW)
    drifted = outcome_points(store, Filters(ai_id=filters.ai_id))
    return CalibrationView(
        filters=filters,
        prediction=prediction,
        report=report,
        bins=[
            Bin(**b.model_dump(), interval=wilson(b.observed, b.count))
            for b in report.metrics.reliability
        ],
        gaps=_gaps(store, points, prediction),
        drift=drift,
        drift_path=drift_path([p for p in drifted if p.predicted_preflight is not None]),
        guardian=_guardian(store, filters, points),
        adjustments=adjustments(store, profile=filters.profile),
    )


def wilson(rate: float, n: int) -> Interval:
    """The 95% Wilson score interval for a rate seen over ``n`` trials."""
    if n <= 0:
        return Interval(low=0.0, high=1.0)
    z2 = Z95 * Z95
    centre = (rate + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(rate * (1 - rate) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Interval(low=round(max(0.0, centre - half), 6), high=round(min(1.0, centre + half), 6))


def gap_of(group: str, pairs: Iterable[tuple[float, float]]) -> Gap:
    """Mean stated − mean observed over ``(stated, observed)`` pairs, with a normal 95%
    interval on the mean difference from ``MIN_FOR_INTERVAL`` pairs on."""
    diffs = [(p, y, p - y) for p, y in pairs]
    n = len(diffs)
    mean = sum(d for _, _, d in diffs) / n
    interval = None
    if n >= MIN_FOR_INTERVAL:
        sd = math.sqrt(sum((d - mean) ** 2 for _, _, d in diffs) / (n - 1))
        half = Z95 * sd / math.sqrt(n)
        interval = Interval(low=round(mean - half, 6), high=round(mean + half, 6))
    return Gap(
        group=group,
        n=n,
        stated=round(sum(p for p, _, _ in diffs) / n, 6),
        observed=round(sum(y for _, y, _ in diffs) / n, 6),
        gap=round(mean, 6),
        interval=interval,
    )


def drift_path(points: list[OutcomePoint], window: int = DRIFT_WINDOW) -> list[DriftPoint]:
    """The running gap the drift monitor watches: mean stated − observed over the last
    ``window`` outcomes (fewer at the start), one point per outcome, oldest first."""
    out = []
    diffs = [p.predicted_preflight - p.observed for p in points]  # type: ignore[operator]
    for i, p in enumerate(points):
        recent = diffs[max(0, i + 1 - window) : i + 1]
        out.append(DriftPoint(index=i + 1, at=p.at, gap=round(sum(recent) / len(recent), 6)))
    return out


def _stated(p: OutcomePoint, at: Prediction) -> float | None:
    if at == "check" and p.predicted_check is not None:
        return p.predicted_check
    return p.predicted_preflight


def _gaps(store: Store, points: list[OutcomePoint], prediction: Prediction) -> dict[str, list[Gap]]:
    attrs = _task_attributes(store, [p.cascade_id for p in points])
    groups: dict[str, dict[str, list[tuple[float, float]]]] = {
        "phase": {},
        "agent": {},
        "model": {},
        "engine": {},
        "profile": {},
    }
    for p in points:
        if p.predicted_preflight is not None:
            groups["phase"].setdefault("PREFLIGHT", []).append((p.predicted_preflight, p.observed))
        if p.predicted_check is not None:
            groups["phase"].setdefault("CHECK", []).append((p.predicted_check, p.observed))
        stated = _stated(p, prediction)
        if stated is None:
            continue
        a = attrs.get(p.cascade_id, {})
        for name in ("agent", "model", "engine", "profile"):
            groups[name].setdefault(a.get(name) or "unknown", []).append((stated, p.observed))
    out = {
        name: [gap_of(g, pairs) for g, pairs in sorted(by.items())] for name, by in groups.items()
    }
    out["persona"] = _persona_gaps(store)
    return out


def _task_attributes(store: Store, cascade_ids: list[str]) -> dict[str, dict[str, str | None]]:
    attrs: dict[str, dict[str, str | None]] = {}
    conn = store.conn
    for start in range(0, len(cascade_ids), 500):
        chunk = cascade_ids[start : start + 500]
        marks = ",".join("?" * len(chunk))
        for r in conn.execute(
            f"SELECT c.id, c.profile, s.ai_id, s.ai_model FROM cascades c "
            f"JOIN sessions s ON s.id = c.session_id WHERE c.id IN ({marks})",
            chunk,
        ):
            attrs[r["id"]] = {
                "agent": r["ai_id"],
                "model": r["ai_model"],
                "profile": r["profile"],
                "engine": "workflow",
            }
        for r in conn.execute(
            f"SELECT cascade_id, MIN(engine) engine FROM events WHERE cascade_id IN ({marks}) "
            f"AND engine IS NOT NULL GROUP BY cascade_id",
            chunk,
        ):
            if r["cascade_id"] in attrs:
                attrs[r["cascade_id"]]["engine"] = r["engine"]
    return attrs


def _persona_gaps(store: Store) -> list[Gap]:
    """Each Nova persona's record: what it stated in the decisive round against the outcome."""
    from noetic.nova.weighting import persona_records

    return [
        Gap(
            group=r.persona,
            n=r.outcomes,
            stated=r.stated,
            observed=r.observed,
            gap=round(r.stated - r.observed, 6),
            interval=None,
        )
        for r in persona_records(store).values()
    ]


def _guardian(store: Store, filters: Filters, points: list[OutcomePoint]) -> list[GuardianRow]:
    registry = ProfileRegistry(store.home / "profiles")
    names = sorted(
        {r[0] for r in store.conn.execute("SELECT DISTINCT profile FROM outcomes")}
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
