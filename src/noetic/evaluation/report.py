"""An eval run's calibration report, and two runs side by side.

Per phase (PREFLIGHT, the standard POSTFLIGHT, the adversarial review) the mean stated
P(success) against the tests' success rate with its Wilson interval, the gap with its interval,
Brier with its interval and its decomposition, and AUROC: the per-phase statistics of
:mod:`noetic.calibration.per_phase`, over the run's problems that have a verdict. A run whose
problems got both kinds of review (``--review split``) also gets the two reviews' gaps side by
side. Then what the run cost: model calls, tokens, dollars, and time per problem.
"""

from __future__ import annotations

from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from noetic.assessment import Phase
from noetic.calibration.per_phase import (
    PhasePoint,
    PhaseStats,
    ReviewComparison,
    phase_stats,
    review_comparisons,
    stated_value,
)
from noetic.calibration.rates import Interval, gap_difference, significant
from noetic.evaluation.engine import EvalRun, TaskResult, stored_run
from noetic.store import evals
from noetic.store.base import BaseStore

PHASES: Final = ("preflight", "postflight", "adversarial_review")


class Timing(BaseModel):
    """Mean milliseconds per finished problem: in all, waiting on the model, running the
    tests (their own time, much of which passes while the model reassesses the function), and
    the rest: Noetic's own bookkeeping, the time spent neither waiting on the model nor on the
    tests; and of that, what the problem waited for (``added_ms``): the time during which
    neither a model call nor its tests were under way (the writes made while the tests run are
    not)."""

    model_config = ConfigDict(frozen=True)

    problems: int
    total_ms: float | None
    model_ms: float | None
    test_ms: float | None
    other_ms: float | None
    added_ms: float | None = None


class EvalReport(BaseModel):
    """One run's report (module docstring)."""

    model_config = ConfigDict(frozen=True)

    run: EvalRun
    by_phase: dict[str, PhaseStats]
    reviews: ReviewComparison | None
    timing: Timing


class PhaseDifference(BaseModel):
    """One phase in two runs: the first's gap minus the second's (positive: the second is
    less overconfident), and the Brier scores' difference."""

    model_config = ConfigDict(frozen=True)

    phase: str
    gap_difference: Interval
    significant: bool
    brier_difference: float | None


class EvalComparison(BaseModel):
    model_config = ConfigDict(frozen=True)

    first: EvalReport
    second: EvalReport
    differences: list[PhaseDifference]


def eval_points(store: BaseStore, run: EvalRun) -> list[PhasePoint]:
    """One point per phase for each problem of ``run`` with a verdict."""
    done = {t.cascade_id: t for t in run.tasks if t.state == "done" and t.cascade_id}
    if not done:
        return []
    rows = evals.done_assessments(store, run.run_id)
    points: list[PhasePoint] = []
    for row in rows:
        task = done.get(row["cascade_id"])
        if task is None:
            continue
        phase = row["phase"]
        if phase == Phase.POSTFLIGHT.value and row["review"] == "adversarial":
            phase = "adversarial_review"
        if phase not in PHASES:
            continue
        value, basis = stated_value(row["p_success"], row["confidence"])
        points.append(
            PhasePoint(
                cascade_id=row["cascade_id"],
                at=row["created_at"],
                phase=phase,
                stated=value,
                basis=basis,
                observed=1.0 if task.passed else 0.0,
                agent=run.ai_id,
                model=run.model or "(unknown)",
                engine="eval",
                persona="(none)",
                profile=run.profile or "(default)",
            )
        )
    return points


def eval_report(store: BaseStore, run_id: str) -> EvalReport:
    """The report of the eval run ``run_id`` (an id or a unique prefix)."""
    run = stored_run(store, run_id)
    points = eval_points(store, run)
    by_phase = {ph: phase_stats(ph, [p for p in points if p.phase == ph]) for ph in PHASES}
    comparisons = review_comparisons(points)
    return EvalReport(
        run=run,
        by_phase=by_phase,
        reviews=comparisons[0] if comparisons else None,
        timing=_timing(run),
    )


def compare_runs(store: BaseStore, first: str, second: str) -> EvalComparison:
    """Two runs' reports side by side (two models, two profiles, two kinds of review)."""
    a, b = eval_report(store, first), eval_report(store, second)
    return EvalComparison(first=a, second=b, differences=[_difference(a, b, ph) for ph in PHASES])


def _difference(a: EvalReport, b: EvalReport, phase: str) -> PhaseDifference:
    x, y = a.by_phase[phase], b.by_phase[phase]
    if x.mean_stated is None or y.mean_stated is None:
        return PhaseDifference(
            phase=phase, gap_difference=Interval(value=None), significant=False,
            brier_difference=None,
        )  # fmt: skip
    diff = gap_difference(x.mean_stated, x.success_rate, y.mean_stated, y.success_rate)
    brier = (
        round(x.brier.value - y.brier.value, 6)
        if x.brier.value is not None and y.brier.value is not None
        else None
    )
    return PhaseDifference(
        phase=phase, gap_difference=diff, significant=significant(diff), brier_difference=brier
    )


def _other(t: TaskResult) -> float | None:
    """A problem's own time outside the model and the tests (as recorded, or, for a problem
    judged before it was, what its time in all leaves of them)."""
    if t.ms_other is not None:
        return t.ms_other
    if t.ms_total is None or t.ms_model is None or t.ms_test is None:
        return None
    return t.ms_total - t.ms_model - t.ms_test


def _timing(run: EvalRun) -> Timing:
    done = [t for t in run.tasks if t.state == "done" and t.ms_total is not None]

    def mean(values: list[Any]) -> float | None:
        known = [float(v) for v in values if v is not None]
        return round(sum(known) / len(known), 3) if known else None

    total = mean([t.ms_total for t in done])
    model = mean([t.ms_model for t in done])
    test = mean([t.ms_test for t in done])
    # recorded per problem since the tests run beside the reassessment; before, the rest
    other = mean([_other(t) for t in done])
    added = mean([t.ms_added for t in done])  # recorded since the writes run beside the tests
    return Timing(
        problems=len(done), total_ms=total, model_ms=model, test_ms=test, other_ms=other,
        added_ms=added,
    )  # fmt: skip
