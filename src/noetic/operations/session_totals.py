"""A session's totals, the ones the seed keeps on its ``sessions`` row, computed from the store
when read rather than kept as columns, so they cannot disagree with the rows they count: its
tasks; its ``turns``, the recorded assessments (each PREFLIGHT, CHECK and POSTFLIGHT one turn
of the loop); their decisions' ``average_confidence``; and ``drift_detected``, whether the drift
monitor, as ``noetic calibration drift`` runs it over the session's AI's outcomes, alarmed at
an outcome of one of this session's tasks.

Sync: one query for the counts of any number of sessions, one drift run per AI among them.
"""

from __future__ import annotations

from typing import Any

from noetic.frozen import Frozen
from noetic.store import listing
from noetic.store.base import BaseStore


class SessionTotals(Frozen):
    tasks: int = 0
    turns: int = 0
    average_confidence: float | None = None
    drift_detected: bool = False


def session_totals(store: BaseStore, session_ids: list[str]) -> dict[str, SessionTotals]:
    """The totals of each session in ``session_ids`` (zeros for one with nothing recorded)."""
    if not session_ids:  # PostgreSQL refuses "IN ()"
        return {}
    tasks, turns = listing.session_turns(store, session_ids)
    drifted = _drifted(store, session_ids)
    return {
        sid: SessionTotals(
            tasks=tasks[sid],
            turns=turns.get(sid, (0, None))[0],
            average_confidence=turns.get(sid, (0, None))[1],
            drift_detected=sid in drifted,
        )
        for sid in session_ids
    }


def _drifted(store: BaseStore, session_ids: list[str]) -> set[str]:
    """The sessions among ``session_ids`` with a task at which the drift monitor alarmed."""
    from noetic.calibration import Filters, detect_drift, preflight_points

    ais = listing.session_agents(store, session_ids)
    if not listing.has_outcomes(store):
        return set()
    alarmed: set[str] = set()
    for ai in sorted(ais):  # the monitor of `noetic calibration drift`, on the points it reads
        points = preflight_points(store, Filters(ai_id=ai))
        stated, observed = [p.stated for p in points], [p.observed for p in points]
        report = detect_drift(stated, observed, bases=[p.basis for p in points])
        alarmed |= {points[a.at - 1].cascade_id for a in report.alarms if a.at <= len(points)}
    return listing.sessions_of_tasks(store, alarmed, session_ids)


def exported(store: BaseStore, session_id: str) -> dict[str, Any]:
    """The session's export document with its ``totals`` beside it (an import ignores them:
    they are counted from the rows, not restored)."""
    doc = store.export_session(session_id)
    sid = doc["session"]["id"]
    return {**doc, "totals": session_totals(store, [sid])[sid].model_dump()}
