"""What the MCP tools return: pydantic models, so clients get ``structuredContent`` and a
schema for each result. Leaner than the CLI's ``--json`` documents where an agent reads every
byte (a submitted assessment's receipt gives the vectors once, and what to do next)."""

from __future__ import annotations

import dataclasses
from typing import Any, Self, get_type_hints

from pydantic import ConfigDict, create_model

from noetic.assessment import Action, Decision, Phase
from noetic.calibration import BasicCalibration, BasicCalibrationReport, CalibrationReport
from noetic.frozen import Frozen
from noetic.plain import as_dataclass
from noetic.profiles import Profile
from noetic.recall.selection import RecallResult
from noetic.runtime.tracker import Recorded
from noetic.store.records import GoalRecord, SessionRecord


def described(cls: type[Any]) -> Any:
    """The model the MCP SDK makes of a plain class a tool returns (its fields, read from the
    value's attributes), with the class's docstring as its schema's description, as when the
    class was a model itself."""
    as_dataclass(cls)
    hints = get_type_hints(cls)
    fields: dict[str, Any] = {
        f.name: (hints[f.name], ... if f.default is dataclasses.MISSING else f.default)
        for f in dataclasses.fields(cls)
    }
    config = ConfigDict(from_attributes=True)
    return create_model(cls.__name__, __doc__=cls.__doc__, __config__=config, **fields)


class Bootstrapped(Frozen):
    session: SessionRecord
    profile: Profile
    next_step: str
    # the agent's record against its outcomes, in one line (absent before it has outcomes)
    record: str | None = None


class PromptOut(Frozen):
    session_id: str
    phase: str
    prompt: str
    next_step: str


class Resumed(Frozen):
    sessions: list[SessionRecord]
    recall: RecallResult | None


class Goals(Frozen):
    session_id: str
    goals: list[GoalRecord]


class Text(Frozen):
    text: str


class CalibrationOut(Frozen):
    outcomes: CalibrationReport
    self_consistency: BasicCalibrationReport


class Submitted(Frozen):
    """The receipt for a submitted assessment: the decision and what to do next.

    Leaner than the CLI's ``--json`` record (which echoes the whole assessment), because an
    agent reads every byte of a tool result: the vectors are given once, completed with the
    ones a CHECK carried over."""

    session_id: str
    cascade_id: str
    task: str
    phase: str
    seq: int
    vectors: dict[str, float]
    carried: list[str]
    decision: Decision
    next_step: str

    @classmethod
    def of(cls, recorded: Recorded, **extra: Any) -> Self:
        a = recorded.assessment.assessment
        return cls(
            session_id=recorded.session_id,
            cascade_id=recorded.cascade.id,
            task=recorded.cascade.task,
            phase=a.phase.value,
            seq=recorded.assessment.seq,
            vectors=a.vectors,
            carried=list(a.carried),
            decision=recorded.decision,
            next_step=_next_step(a.phase, recorded.decision),
            **extra,
        )


class Finished(Submitted):
    calibration: BasicCalibration


def _next_step(phase: Phase, decision: Decision) -> str:
    if phase == Phase.POSTFLIGHT:
        return "once you know whether the work really succeeded, call record_outcome"
    if decision.rule == "max_rounds":
        return "the profile's round limit is reached: do the work, then call execute_postflight"
    weakest = ", ".join(decision.gaps[:3]) or "the weakest vectors"
    return {
        Action.PROCEED: "do the work, then call execute_postflight",
        Action.INVESTIGATE: f"investigate ({weakest}), then call submit_check_assessment",
        Action.CLARIFY: "ask for clearer requirements, then call submit_check_assessment",
        Action.DELEGATE: "hand the task to someone better placed, or explain what you need",
        Action.RESET: "start over: submit_preflight_assessment with abandon_open=true",
    }[decision.action]


class AiAnswer(Frozen):
    answer: str
    provider: str
    model: str
