"""Two runs or two agents side by side: each side's confidence trajectory, vectors, outcome and
calibration, read by the same operations as their own pages.

A side is named in the URL: a task id (``c_…``) or ``agent:NAME`` (an agent's calibration over
every task it was scored on). A bare name that is no task id is read as an agent.
"""

from __future__ import annotations

from typing import Literal

from noetic.errors import NotFoundError
from noetic.frozen import Frozen
from noetic.operations.calibration_view import Gap, gap_from
from noetic.operations.task_view import TaskView, task_view
from noetic.store import reads
from noetic.store.base import BaseStore


class AgentSide(Frozen):
    name: str
    sessions: int
    tasks: int
    confidences: list[float]
    gap: Gap | None
    brier: float | None
    brier_low: float | None
    brier_high: float | None
    ece: float | None
    brier_missing: str | None = None
    """Why there is no Brier score (too few outcomes), when there is none."""
    ece_missing: str | None = None
    """Why there is no ECE, when there is none."""
    verdict: str
    outcomes: int


class Side(Frozen):
    key: str
    kind: Literal["task", "agent"]
    task: TaskView | None = None
    agent: AgentSide | None = None


class Comparison(Frozen):
    a: Side
    b: Side


def compare_choices(store: BaseStore) -> list[str]:
    """The agents a comparison can name."""
    return reads.distinct(store, "sessions", "ai_id")


def compare(store: BaseStore, a: str, b: str) -> Comparison:
    """Both sides, or :class:`NotFoundError` naming the one that is unknown."""
    return Comparison(a=side(store, a), b=side(store, b))


def side(store: BaseStore, key: str) -> Side:
    key = key.strip()
    if key.startswith("agent:"):
        return Side(key=key, kind="agent", agent=_agent(store, key.removeprefix("agent:")))
    if reads.task_exists(store, key):
        return Side(key=key, kind="task", task=task_view(store, key))
    return Side(key=key, kind="agent", agent=_agent(store, key))


def _agent(store: BaseStore, name: str) -> AgentSide:
    from noetic.operations.calibrating import report

    sessions, tasks, confidences = reads.agent_totals(store, name)
    if not sessions:
        raise NotFoundError(f"unknown task or agent {name!r}")
    scored = report(store, ai_id=name)
    m = scored.metrics
    return AgentSide(
        name=name,
        sessions=sessions,
        tasks=tasks,
        confidences=confidences,
        gap=gap_from(name, scored.by_phase["preflight"]),
        brier=m.brier.value,
        brier_low=m.brier.low,
        brier_high=m.brier.high,
        ece=m.ece.value,
        brier_missing=m.brier.reason if m.brier.value is None else None,
        ece_missing=m.ece.reason if m.ece.value is None else None,
        verdict=m.test.verdict,
        outcomes=scored.outcomes,
    )
