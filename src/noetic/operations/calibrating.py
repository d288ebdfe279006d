"""Calibration: record what really happened to a task, and read how well confidence matched.

Both are sync store work: from async code, call them on a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from noetic.errors import InvalidValueError, NotFoundError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.calibration import CalibrationReport, RecordedOutcome
    from noetic.operations.once import Replayed
    from noetic.store.base import BaseStore


def outcome(
    store: BaseStore | Callable[[], BaseStore],
    target: str | None,
    *,
    success: bool = False,
    failure: bool = False,
    score: float | None = None,
    from_junit: Path | None = None,
    evidence: str = "",
    source: str | None = None,
    current: Callable[[BaseStore], str | None] | None = None,
    request_id: str | None = None,
) -> RecordedOutcome | Replayed[RecordedOutcome]:
    """Record the verified outcome of a task (``target``: a cascade id, or a session id for
    its latest task), next to what the agent predicted. Exactly one of ``success``,
    ``failure``, ``score`` (in [0, 1]) or ``from_junit`` (a JUnit XML report: the share of
    tests passed) gives it; ``source`` defaults to ``human`` (``test`` from a report).
    ``store`` may be a function that opens it, called once the verdict is read (a wrong
    command line fails before a store is looked for); without a target, ``current`` gives the
    caller's current session in it. Applied once per ``request_id``
    (:mod:`noetic.operations.once`): a request is the task and the verdict as read. Sync."""
    from noetic.calibration import RecordedOutcome, record_outcome
    from noetic.calibration.outcomes import check_outcome_score
    from noetic.operations.once import once

    given = [v for v in (success, failure, score is not None, from_junit is not None) if v]
    if len(given) != 1:
        raise InvalidValueError(
            "give exactly one of --success, --failure, --score X or --from-junit FILE",
            field="outcome",
        )
    if from_junit is not None:
        from noetic.hosts.testing.junit import junit_outcome

        value, found = junit_outcome(from_junit)
        evidence = f"{found}; {evidence}" if evidence else found
    else:
        value = 1.0 if success else 0.0 if failure else float(score)  # type: ignore[arg-type]
    check_outcome_score(value)
    source = source or ("test" if from_junit is not None else "human")
    opened = store() if callable(store) else store
    if target is None and current is not None:
        target = current(opened)
    if target is None:
        raise NotFoundError(
            "no task given and no current session",
            fix="pass a task id, or name the agent with --ai-id",
        )
    asked = {"target": target, "score": value, "source": source, "evidence": evidence}
    return once(
        opened, request_id, "outcome", asked, RecordedOutcome.model_validate,
        lambda: record_outcome(opened, target, score=value, source=source, evidence=evidence),
    )  # fmt: skip


def report(
    store: BaseStore | Callable[[], BaseStore],
    *,
    ai_id: str | None = None,
    profile: str | None = None,
    domain: str | None = None,
    since_days: float | None = None,
    at: str = "preflight",
    bins: int = 10,
    by: str = "phase",
) -> CalibrationReport:
    """Calibration against the tasks with recorded outcomes (filtered by agent, profile,
    domain, age): the summary from the first outcome, every phase's gap, Brier and AUROC, the
    standard against the adversarial reviews, and the 20-outcome metrics (Brier, ECE,
    reliability, signed bias, AUROC with intervals) for the phase ``at`` (preflight, check,
    postflight, adversarial_review); ``by`` (agent, model, engine, persona, profile) repeats
    the per-phase report per value. ``store`` may be a function that opens it, called once the
    arguments are checked. Sync."""
    from noetic.calibration import PHASES, Filters, calibration_report
    from noetic.calibration.per_phase import GROUPINGS

    if at not in PHASES:
        raise InvalidValueError(f"--at must be one of {', '.join(PHASES)}", field="at", value=at)
    if by not in GROUPINGS:
        raise InvalidValueError(f"--by must be one of {', '.join(GROUPINGS)}", field="by", value=by)
    filters = Filters(ai_id=ai_id, profile=profile, domain=domain, since_days=since_days)
    opened = store() if callable(store) else store
    return calibration_report(opened, filters, prediction=at, bins=bins, by=by)  # type: ignore[arg-type]
