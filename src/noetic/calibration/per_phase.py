"""Calibration per phase, as Kaddour et al. (2026) report it: what the agent stated at
PREFLIGHT, at its last CHECK, at POSTFLIGHT and at an adversarial review, each against the
task's verified outcome.

Every task with an outcome gives one *point per phase it reached*: the stated value and what it
is (:func:`stated_value`); each phase says how many of each it used. A POSTFLIGHT asked for as
an adversarial review is the ``adversarial_review`` phase; any other is ``postflight``.

A phase's statistics (:class:`PhaseStats`) are defined from the first outcome: the success rate
with its Wilson interval, the overconfidence gap with its interval (:mod:`.rates`), the Brier
score (its bootstrap interval from :data:`MIN_INTERVAL` outcomes) and its decomposition, and
AUROC once both a success and a failure exist (its Hanley–McNeil interval once there are 5 of
each). What needs more outcomes says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from noetic.calibration.metrics import MIN_PER_CLASS, MIN_SAMPLES, Metric, auroc, brier
from noetic.calibration.rates import (
    BrierParts,
    Interval,
    auroc_interval,
    brier_parts,
    gap,
    gap_difference,
    significant,
    wilson,
)
from noetic.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final, Literal, TypeAlias


PHASES: Final = ("preflight", "check", "postflight", "adversarial_review")
GROUPINGS: Final = ("phase", "agent", "model", "engine", "persona", "profile")
MIN_INTERVAL: Final = 5
Basis: TypeAlias = 'Literal["p_success", "confidence"]'
Stated: TypeAlias = 'Literal["p_success", "confidence", "mixed"]'
Grouping: TypeAlias = 'Literal["phase", "agent", "model", "engine", "persona", "profile"]'


class PhasePoint(Plain):
    """One task's statement at one phase, beside its outcome and who made it."""

    cascade_id: str
    at: str
    phase: str
    stated: float
    basis: Basis
    observed: float
    agent: str
    model: str
    engine: str
    persona: str
    profile: str


def stated_value(p_success: float | None, confidence: float) -> tuple[float, Basis]:
    """What one assessment stated, and what it is: its ``p_success`` where the agent gave one,
    its vectors' overall confidence otherwise. The one place the choice is made: the per-phase
    report, the guardian, the drift monitor and the ``noetic outcome`` receipt all read it."""
    return (p_success, "p_success") if p_success is not None else (confidence, "confidence")


def stated_basis(bases: Sequence[Basis]) -> tuple[Stated | None, dict[str, int]]:
    """What a set of statements was (``p_success``, ``confidence``, or ``mixed`` when both are
    present; ``None`` for none) and how many of each (``stated_from``)."""
    counts = {"p_success": 0, "confidence": 0}
    for basis in bases:
        counts[basis] += 1
    if not bases:
        return None, counts
    if counts["p_success"] and counts["confidence"]:
        return "mixed", counts
    return ("p_success" if counts["p_success"] else "confidence"), counts


class PhaseStats(Plain):
    """One phase's calibration over its points (module docstring)."""

    phase: str
    n: int
    successes: float
    stated: Stated | None
    stated_from: dict[str, int]
    mean_stated: float | None
    success_rate: Interval
    gap: Interval
    significant: bool
    brier: Metric
    auroc: Metric
    decomposition: BrierParts | None


class Summary(PhaseStats):
    """The phase the report scores, and what more outcomes would add."""

    more: list[str]


class ReviewComparison(Plain):
    """Standard against adversarial POSTFLIGHT reviews of one agent. ``difference`` is the
    standard gap minus the adversarial one: positive when the adversarial review is less
    overconfident."""

    agent: str
    standard: PhaseStats
    adversarial: PhaseStats
    difference: Interval
    significant: bool


class Group(Plain):
    """The per-phase report of the tasks that share one value of the grouping."""

    value: str
    tasks: int
    by_phase: dict[str, PhaseStats]


def phase_stats(phase: str, points: Sequence[PhasePoint], *, seed: int = 0) -> PhaseStats:
    """The statistics of one phase's points (module docstring)."""
    import numpy as np

    from noetic.calibration.metrics import _bootstrap

    n = len(points)
    p = np.asarray([x.stated for x in points], dtype=float)
    y = np.asarray([x.observed for x in points], dtype=float)
    stated, counts = stated_basis([x.basis for x in points])
    successes = float(y.sum()) if n else 0.0
    rate = wilson(min(float(n), successes), n)
    mean = float(p.mean()) if n else None
    the_gap = gap(mean, rate) if mean is not None else Interval(value=None)
    positives = int((y >= 0.5).sum()) if n else 0
    low = high = why = None
    if n == 0:
        why = "no outcomes"
    elif n < MIN_INTERVAL:
        why = f"no interval yet: {n} outcome{'s' if n != 1 else ''}, {MIN_INTERVAL} needed for one"
    elif positives in (0, n):
        why = (
            f"no interval: all {n} outcomes were {'successes' if positives else 'failures'}, "
            "and resampling them cannot show the other kind"
        )
    else:
        low, high = _bootstrap(brier, p, y, seed, 1000)
        if high <= low:
            low = high = None
            why = f"no interval: every resample of the {n} outcomes gives the same score"
    brier_metric = Metric(value=brier(p, y) if n else None, low=low, high=high, n=n, reason=why)
    if positives in (0, n):
        why = f"AUROC needs a success and a failure ({positives} and {n - positives})"
        auroc_metric = Metric(value=None, n=n, reason=why)
    elif positives < MIN_PER_CLASS or n - positives < MIN_PER_CLASS:
        why = (
            f"no interval yet: {positives} successes and {n - positives} failures, "
            f"{MIN_PER_CLASS} of each needed for one"
        )
        auroc_metric = Metric(value=auroc(p, y), n=n, reason=why)
    else:
        a = auroc_interval(auroc(p, y), positives, n - positives)
        auroc_metric = Metric(value=a.value, low=a.low, high=a.high, n=n)
    return PhaseStats(
        phase=phase,
        n=n,
        successes=round(successes, 6),
        stated=stated,
        stated_from=counts,
        mean_stated=mean,
        success_rate=rate,
        gap=the_gap,
        significant=significant(the_gap),
        brier=brier_metric,
        auroc=auroc_metric,
        decomposition=brier_parts(list(p), list(y)),
    )


def by_phase(points: Sequence[PhasePoint]) -> dict[str, PhaseStats]:
    """Every phase in :data:`PHASES`, present even with no points, so the shape is stable."""
    return {ph: phase_stats(ph, [x for x in points if x.phase == ph]) for ph in PHASES}


def summary(stats: PhaseStats, outcomes: int = 0) -> Summary:
    """``stats`` with a plain account of what more outcomes would add; ``outcomes`` is how many
    the report's tasks have in all, so a phase none of them reached says so."""
    return Summary(**stats.model_dump(), more=_more(stats, outcomes))


def _more(stats: PhaseStats, outcomes: int = 0) -> list[str]:
    n = stats.n
    if n == 0 and outcomes:
        name = stats.phase.upper() if stats.phase != "adversarial_review" else "adversarial review"
        return [
            f"{outcomes} outcome{'s' if outcomes != 1 else ''} recorded, but no task with one "
            f"has a {name} written before its outcome to score: choose another phase with --at, "
            "or assess that phase before the outcome is known"
        ]
    if n == 0:
        return [
            "no outcomes yet: record one with `noetic outcome` (or `noetic run -- pytest`) and "
            "the success rate, the gap and the Brier score appear at once"
        ]
    more = []
    g = stats.gap
    if g.low is not None and g.high is not None and stats.success_rate.value is not None:
        width = g.high - g.low
        later = wilson(stats.success_rate.value * 4 * n, 4 * n)
        assert later.low is not None and later.high is not None
        more.append(
            f"the gap's interval is {width:.2f} wide from {n} outcome{'s' if n != 1 else ''}; "
            f"{4 * n} at the same success rate would make it about "
            f"{later.high - later.low:.2f}"
        )
    if n < MIN_INTERVAL:
        more.append(f"the Brier score's interval needs {MIN_INTERVAL} outcomes ({n} so far)")
    if n < MIN_SAMPLES:
        more.append(
            f"the calibration verdict, ECE and the reliability table need {MIN_SAMPLES} "
            f"outcomes ({MIN_SAMPLES - n} more)"
        )
    positives = round(stats.successes)
    if positives < MIN_PER_CLASS or n - positives < MIN_PER_CLASS:
        more.append(
            f"AUROC (does higher confidence go with success?) needs {MIN_PER_CLASS} successes "
            f"and {MIN_PER_CLASS} failures ({positives} and {n - positives} so far)"
        )
    return more


def review_comparisons(points: Sequence[PhasePoint]) -> list[ReviewComparison]:
    """For every agent with both standard and adversarial POSTFLIGHT reviews, the two side by
    side and the difference of their gaps."""
    out = []
    for agent in sorted({x.agent for x in points}):
        standard, adversarial = (
            phase_stats(ph, [x for x in points if x.agent == agent and x.phase == ph])
            for ph in ("postflight", "adversarial_review")
        )
        if not standard.n or not adversarial.n:
            continue
        assert standard.mean_stated is not None and adversarial.mean_stated is not None
        diff = gap_difference(
            standard.mean_stated,
            standard.success_rate,
            adversarial.mean_stated,
            adversarial.success_rate,
        )
        out.append(
            ReviewComparison(
                agent=agent,
                standard=standard,
                adversarial=adversarial,
                difference=diff,
                significant=significant(diff),
            )
        )
    return out


def groups(points: Sequence[PhasePoint], by: Grouping) -> list[Group]:
    """The per-phase report for each value of ``by`` (``phase`` needs no groups: ``[]``)."""
    if by == "phase":
        return []
    out = []
    for value in sorted({getattr(x, by) for x in points}):
        mine = [x for x in points if getattr(x, by) == value]
        out.append(
            Group(value=value, tasks=len({x.cascade_id for x in mine}), by_phase=by_phase(mine))
        )
    return out
