"""How one agent runs (:class:`AgentSettings`), and its state in three horizons, as the seed
draws them.

* :class:`UserProfile` — who the user is, kept across sessions (``user_profiles``);
* :class:`Workspace` — what one task has learned so far, saved after every step so the task
  resumes after a crash (``task_workspaces``);
* :class:`ExecutionState` — the mechanics of this run (messages, pending calls, counters),
  never persisted.

:class:`State` composes them; the functions at the bottom are the only ways the loop changes
them, so every change is named.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from noetic.events import utcnow
from noetic.frozen import Frozen
from noetic.llm.base import Message, ToolCall

Mode = Literal["fast", "adapt", "deep"]
Depth = Literal["fast", "deep"]

MAX_OBSERVATIONS = 200
MAX_TEXT = 4000


class AgentSettings(Frozen):
    """How one agent runs."""

    name: str = "assistant"
    workspace: Path = Path(".")
    mode: Mode = "adapt"
    max_iterations: int = Field(10, ge=1, le=100)
    max_tokens: int | None = Field(None, gt=0, description="token budget of the whole run")
    breaker_threshold: int = Field(3, ge=1)
    tools_fixed: bool = False  # the caller listed the tools: triage does not narrow them
    user_id: str = "default"
    epistemic: bool = False  # wrap the run in CASCADE and hold irreversible actions
    approve: Literal["ask", "never", "always"] = "never"
    scratch: str | None = None  # a folder of the workspace whose writes count as reversible
    policy_files: tuple[Path, ...] = ()


class UserProfile(BaseModel):
    """Horizon 1: persistent user context across sessions."""

    user_id: str
    preferences: dict[str, Any] = Field(default_factory=dict)
    goals: list[str] = Field(default_factory=list)
    expertise_areas: list[str] = Field(default_factory=list)
    communication_style: str = ""
    projects: dict[str, str] = Field(default_factory=dict)
    interaction_count: int = 0
    last_session: str | None = None
    # the interactions since the model last consolidated the profile, each given to it then
    unconsolidated: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utcnow)
    last_updated: datetime = Field(default_factory=utcnow)

    def summary(self) -> str:
        """What the model is told about the user; empty when nothing is known."""

        def pairs(named: dict[str, Any]) -> str:
            return "; ".join(f"{k}: {v}" for k, v in named.items())

        parts = [
            ("preferences", self.preferences, pairs(self.preferences)),
            ("goals", self.goals, "; ".join(self.goals)),
            ("expertise", self.expertise_areas, ", ".join(self.expertise_areas)),
            ("communication style", self.communication_style, self.communication_style),
            ("projects", self.projects, pairs(self.projects)),
        ]
        return "\n".join(f"{name}: {text}" for name, given, text in parts if given)


class Workspace(BaseModel):
    """Horizon 2: one task's reasoning context, persisted at every step."""

    objective: str = ""
    assessment: str = ""
    approach: str = ""
    observations: list[str] = Field(default_factory=list)
    insights: list[str] = Field(default_factory=list)
    facts: dict[str, Any] = Field(default_factory=dict)
    thoughts: list[dict[str, Any]] = Field(default_factory=list)

    def summary(self) -> str:
        """The task's progress, for a resumed run's model."""
        lines = []
        if self.approach:
            lines.append(f"approach: {self.approach}")
        lines += [f"- observed: {o}" for o in self.observations[-30:]]
        lines += [f"- insight: {i}" for i in self.insights[-10:]]
        return "\n".join(lines)


@dataclass
class ExecutionState:
    """Horizon 3: runtime only, never persisted."""

    iteration: int = 0
    max_iterations: int = 10
    mode: Mode = "adapt"
    depth: Depth = "fast"
    stop_reason: str | None = None
    messages: list[Message] = field(default_factory=list)
    response: str | None = None
    pending_calls: list[ToolCall] = field(default_factory=list)
    completed_calls: list[dict[str, Any]] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    tokens: int = 0


@dataclass
class State:
    """The three horizons of one agent run."""

    query: str
    user_id: str = "default"
    task_id: str = field(default_factory=lambda: f"t_{uuid.uuid4().hex[:12]}")
    profile: UserProfile = field(default_factory=lambda: UserProfile(user_id="default"))
    workspace: Workspace = field(default_factory=Workspace)
    execution: ExecutionState = field(default_factory=ExecutionState)


# mutations -------------------------------------------------------------------------------------


def add_message(state: State, message: Message) -> None:
    state.execution.messages.append(message)


def record_observation(state: State, text: str) -> None:
    obs = state.workspace.observations
    obs.append(text[:MAX_TEXT])
    del obs[:-MAX_OBSERVATIONS]


def learn_insight(state: State, text: str) -> None:
    if text and text not in state.workspace.insights:
        state.workspace.insights.append(text[:MAX_TEXT])


def record_thought(state: State, iteration: int, text: str, depth: str) -> None:
    if text:
        state.workspace.thoughts.append(
            {"iteration": iteration, "depth": depth, "text": text[:MAX_TEXT]}
        )
        del state.workspace.thoughts[:-MAX_OBSERVATIONS]


def set_tool_calls(state: State, calls: list[ToolCall]) -> None:
    state.execution.pending_calls = list(calls)


def finish_tools(state: State, records: list[dict[str, Any]]) -> None:
    state.execution.completed_calls += records
    state.execution.pending_calls = []
