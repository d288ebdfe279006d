"""The goal orchestrator, threshold mode: goals derived deterministically from vector gaps.

Threshold mode is the seed's fast default: every vector whose 'higher is better' score sits
under the profile's gap threshold becomes a goal to raise it, weakest first, with priority equal
to the size of the gap. (LLM mode, where the model proposes goals and subgoals, runs through the
CASCADE engine with a provider.)
"""

from __future__ import annotations

from noetic.assessment import gaps
from noetic.errors import WorkflowError
from noetic.profiles import Profile
from noetic.store.base import BaseStore as Store
from noetic.store.records import GoalRecord
from noetic.vectors import DESCRIPTIONS, INVERTED, oriented


def _move(name: str, value: float, target: float) -> str:
    """The goal in the vector's own terms: density and uncertainty are lowered, not raised."""
    if name in INVERTED:
        return f"Lower {name} from {value:.2f} to at most {1 - target:.2f}"
    return f"Raise {name} from {value:.2f} to at least {target:.2f}"


def threshold_goals(store: Store, session_id: str, profile: Profile) -> list[GoalRecord]:
    """Store one goal per gap in the session's latest assessment; returns the new goals."""
    history = store.assessments(session_id=session_id)
    if not history:
        raise WorkflowError(
            f"session {session_id} has no assessment to derive goals from",
            fix='record a PREFLIGHT first (`noetic preflight "task"`)',
        )
    latest = history[-1]
    vectors = latest.assessment.vectors
    target = profile.investigation.gap_threshold
    existing = {
        g.target_vector
        for g in store.goals(session_id=session_id)
        if g.status == "open" and g.cascade_id == latest.cascade_id
    }
    created = []
    with store.unit():  # the goals of one assessment are stored together or not at all
        created += _gap_goals(store, session_id, latest.cascade_id, vectors, target, existing)
    return created


def _gap_goals(
    store: Store,
    session_id: str,
    cascade_id: str | None,
    vectors: dict[str, float],
    target: float,
    existing: set[str | None],
) -> list[GoalRecord]:
    created = []
    for name in gaps(vectors, target):
        if name in existing:
            continue
        score = oriented(name, vectors[name])
        created.append(
            store.add_goal(
                session_id,
                f"{_move(name, vectors[name], target)} "
                f"({DESCRIPTIONS[name].split(':')[0].lower()})",
                source="threshold",
                cascade_id=cascade_id,
                target_vector=name,
                priority=round(target - score, 6),
            )
        )
    return created
