"""Which past tasks recall can trust: verified outcomes decide, not the agent's self-reports.

POSTFLIGHT's calibration compares the agent's two self-reports, so a task whose confidence rose
from PREFLIGHT to POSTFLIGHT comes out "underconfident" although that rise is the learning
recall exists to find. The filter therefore reads recorded outcomes (``noetic outcome``): a
task is ``confirmed`` when its latest outcome fell on the side its last prediction before acting
leaned to (``|prediction − outcome| ≤ tolerance``), ``overconfident`` or ``underconfident`` when
it contradicted it, ``unverified`` without an outcome. One task cannot show calibration in the
statistical sense; it can only contradict its prediction. :func:`outcome_drift` reads the same
verdicts for the feedback-loop alert (``docs/recall.md``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from noetic.store import reads
from noetic.store.base import BaseStore as Store

CONFIRMED = "confirmed"
UNVERIFIED = "unverified"


VERDICTS = (UNVERIFIED, CONFIRMED, "overconfident", "underconfident")


def outcome_verdicts(store: Store, tolerance: float = 0.5) -> dict[str, str]:
    """The verdict of every task that has an outcome (the rest are ``unverified``)."""
    latest: dict[str, str] = {}
    for cid, score, pre, check in reads.predictions(store):
        predicted = check if check is not None else pre
        latest[cid] = _verdict(predicted, score, tolerance)
    return latest


def _verdict(predicted: float | None, outcome: float, tolerance: float) -> str:
    if predicted is None:
        return UNVERIFIED
    error = predicted - outcome
    if error > tolerance:
        return "overconfident"
    if error < -tolerance:
        return "underconfident"
    return CONFIRMED


DRIFT_RECENT = 5  # the latest tasks with an outcome, set against the earlier ones
DRIFT_MINIMUM = 10  # tasks with an outcome before a drift is said


@dataclass(frozen=True)
class Drift:
    """How the share of confirmed predictions moved: ``recent`` over the latest
    :data:`DRIFT_RECENT` tasks with an outcome, ``earlier`` over the ``before`` ones before."""

    moved: float
    recent: float
    earlier: float
    before: int


def outcome_drift(ended: Any, verdict: Any) -> Drift | None:
    """The drift of the tasks with an outcome (``verdict`` holds indices into :data:`VERDICTS`,
    ``ended`` when each task ended), or ``None`` under :data:`DRIFT_MINIMUM` of them."""
    import numpy as np

    verified = np.flatnonzero(verdict != VERDICTS.index(UNVERIFIED))
    if len(verified) < DRIFT_MINIMUM:
        return None
    confirmed = verdict[verified] == VERDICTS.index(CONFIRMED)
    order = np.argsort(ended[verified], kind="stable")
    latest, rest = order[-DRIFT_RECENT:], order[:-DRIFT_RECENT]
    recent, earlier = float(confirmed[latest].mean()), float(confirmed[rest].mean())
    return Drift(moved=abs(recent - earlier), recent=recent, earlier=earlier, before=len(rest))
