"""`noetic outcome`: record a verified outcome of a task. Declared in :mod:`noetic.cli.declared`
(the fast path parses a plain invocation; typer the rest), and free of typer itself."""

from __future__ import annotations

from pathlib import Path

from noetic.cli.exits import handled
from noetic.cli.output import stdout
from noetic.runtime.opening import open_tracker, optional_current_session

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def outcome(
    target: str | None,
    success: bool,
    failure: bool,
    score: float | None,
    from_junit: Path | None,
    evidence: str,
    source: str | None,
    session: str | None,
    ai_id: str | None,
    request_id: str | None,
    store: Path | None,
    json: bool,
) -> None:
    """Record a verified outcome of a task, next to what the agent predicted."""
    from noetic.cli.answered import answer
    from noetic.operations.calibrating import outcome as record_outcome

    with handled(json):
        record = record_outcome(
            lambda: open_tracker(store).store, target, success=success, failure=failure,
            score=score, from_junit=from_junit, evidence=evidence, source=source,
            current=lambda got: optional_current_session(got, session, ai_id),
            request_id=request_id,
        )  # fmt: skip
    answer(
        record,
        json,
        lambda r: stdout().print(
            f"outcome {r.score:.2f} ({r.source}) recorded for task {r.cascade_id}"
            f" of session {r.session_id}; {_stated(r)}",
            markup=False,
        ),
    )


def _stated(record: Any) -> str:
    """What the agent stated at PREFLIGHT, and what it is (calibration scores the same); and
    what that statement now means calibrated, when a map is in force."""
    if record.stated == "p_success":
        said = f"it stated P(success) {record.stated_preflight:.2f} at PREFLIGHT"
    else:
        said = (
            f"it stated no P(success) at PREFLIGHT; its vectors' confidence was "
            f"{record.stated_preflight:.2f}"
        )
    cal = getattr(record, "calibrated", None)
    if cal is not None:
        said += (
            f"; calibrated on {cal.outcomes} outcomes (method {cal.method}), "
            f"{cal.stated:.2f} now means {cal.value:.2f}"
        )
    return said
