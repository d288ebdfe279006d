"""The goal orchestrator's two modes, as the seed names them.

Threshold mode is the seed's fast default: every vector whose 'higher is better' score sits
under the profile's gap threshold becomes a goal to raise it, weakest first, with priority equal
to the size of the gap; deterministic.

LLM mode (:func:`model_goals`): the model reads the task, the latest assessment (its vectors,
rationales and decision) and the goals already open, and proposes the goals — each a concrete
step, optionally the vector it should move, and a priority. Plain code only keeps what it
returns: it drops a goal already open in the task (same text), an unknown vector name, and
stores the rest as ``source="llm"``. A CASCADE run's PLAN sets subgoals the same way.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from noetic.assessment import gaps
from noetic.errors import WorkflowError
from noetic.llm.base import Message, Provider, Request
from noetic.llm.structured import complete_structured
from noetic.profiles import Profile
from noetic.store.base import BaseStore as Store
from noetic.store.records import AssessmentRecord, GoalRecord
from noetic.vectors import DESCRIPTIONS, INVERTED, VECTOR_NAMES, oriented


def _move(name: str, value: float, target: float) -> str:
    """The goal in the vector's own terms: density and uncertainty are lowered, not raised."""
    if name in INVERTED:
        return f"Lower {name} from {value:.2f} to at most {1 - target:.2f}"
    return f"Raise {name} from {value:.2f} to at least {target:.2f}"


def _latest(store: Store, session_id: str) -> AssessmentRecord:
    history = store.assessments(session_id=session_id)
    if not history:
        raise WorkflowError(
            f"session {session_id} has no assessment to derive goals from",
            fix='record a PREFLIGHT first (`noetic preflight "task"`)',
        )
    return history[-1]


def threshold_goals(store: Store, session_id: str, profile: Profile) -> list[GoalRecord]:
    """Store one goal per gap in the session's latest assessment; returns the new goals."""
    latest = _latest(store, session_id)
    vectors = latest.assessment.vectors
    target = profile.investigation.gap_threshold
    existing = {
        g.target_vector
        for g in store.goals(session_id=session_id)
        if g.status == "open" and g.cascade_id == latest.cascade_id
    }
    with store.unit():  # the goals of one assessment are stored together or not at all
        return [
            store.add_goal(
                session_id,
                f"{_move(name, vectors[name], target)} "
                f"({DESCRIPTIONS[name].split(':')[0].lower()})",
                source="threshold",
                cascade_id=latest.cascade_id,
                target_vector=name,
                priority=round(target - oriented(name, vectors[name]), 6),
            )
            for name in gaps(vectors, target)
            if name not in existing
        ]


class ProposedGoal(BaseModel):
    description: str = Field(min_length=1, max_length=500, description="one concrete step")
    target_vector: str | None = Field(
        None, description="the epistemic vector this goal should move, if one (e.g. know)"
    )
    priority: float = Field(0.5, ge=0, le=1, description="1 most urgent")


class ProposedGoals(BaseModel):
    goals: list[ProposedGoal] = Field(default_factory=list, max_length=10)


GOALS_SYSTEM = """You set the goals of an agent's task from its latest epistemic self-assessment.
Propose the goals that would close the gaps that matter for this task: each one concrete step \
(what to find out, check or do), the vector it should move when one applies, and a priority \
from 0 to 1. Do not repeat a goal that is already open. Propose none when nothing is missing."""


async def model_goals(
    provider: Provider, store: Store, session_id: str, profile: Profile
) -> list[GoalRecord]:
    """LLM mode: store the goals the model proposes for the session's latest assessment (those
    not already open in its task); returns the new goals."""
    latest = _latest(store, session_id)
    task = next(
        (c.task for c in store.cascades(session_id) if c.id == latest.cascade_id), "(no task)"
    )
    open_goals = [
        g.description
        for g in store.goals(session_id=session_id)
        if g.status == "open" and g.cascade_id == latest.cascade_id
    ]
    a = latest.assessment
    lines = [
        f"Task: {task}",
        f"Latest assessment ({a.phase}): "
        + ", ".join(f"{k} {v:.2f}" for k, v in a.vectors.items()),
        f"Decision: {latest.decision.action.value} at confidence {latest.decision.confidence:.2f}"
        f"; the profile's gap threshold is {profile.investigation.gap_threshold:.2f}",
    ]
    lines += [f"- {k}: {why}" for k, why in a.rationales.items() if why]
    lines.append("Goals already open: " + ("; ".join(open_goals) or "none"))
    request = Request(
        system=GOALS_SYSTEM,
        messages=(Message(role="user", content="\n".join(lines)),),
        max_tokens=1500,
    )
    proposed = await complete_structured(provider, request, ProposedGoals)
    seen = {d.strip().casefold() for d in open_goals}
    created = []
    for goal in proposed.goals:
        text = goal.description.strip()
        if not text or text.casefold() in seen:
            continue
        seen.add(text.casefold())
        vector = goal.target_vector if goal.target_vector in VECTOR_NAMES else None
        created.append(
            store.add_goal(
                session_id,
                text,
                source="llm",
                cascade_id=latest.cascade_id,
                target_vector=vector,
                priority=round(goal.priority, 6),
            )
        )
    return created
