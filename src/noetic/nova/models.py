"""A deliberation's settings and its result, and the two rules that come from the outside: where
personas are read from, and where the CHECK gate sits."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, computed_field

from noetic.frozen import Frozen
from noetic.nova.turns import Pick, Risk, Turn, highest_risk
from noetic.runtime.context import RunContext

DEFAULT_GATE = 0.35

RunStatus = Literal["running", "completed", "escalated", "failed"]
OnTurn = Callable[[Turn], None]


class NovaSettings(Frozen, extra="forbid"):
    """How a deliberation is bounded and gated."""

    max_rounds: int = Field(5, ge=1, le=20, description="Expert rounds before escalating.")
    gate: float | None = Field(
        None, ge=0, le=1, description="CHECK gate on uncertainty (default: the seed's 0.35)."
    )
    gate_from_profile: bool = Field(
        False, description="No gate given: 1 − the run's profile's threshold sets it."
    )
    epsilon: float = Field(0.05, ge=0, le=1, description="Convergence: smallest state change.")
    context_tokens: int = Field(
        3000, ge=200, le=200_000, description="Budget for a turn's context."
    )
    reply_tokens: int = Field(1500, ge=64, le=32_000, description="Budget for a turn's reply.")
    experts: tuple[str, ...] = Field((), description="A fixed panel (else the DCE chooses).")
    provider: str | None = Field(
        None, description="The provider string the run began on: a resume without one uses it."
    )
    max_experts: int = Field(5, ge=1, le=12)
    expert_attempts: int = Field(2, ge=1, le=5, description="Tries before an expert is dropped.")
    concurrency: int = Field(
        8, ge=1, le=12, description="Experts asked at once (1: one after another)."
    )
    personas: tuple[str, ...] = Field((), description="Persona directories after the store's.")
    recall: bool = Field(True, description="Give the unpacking what the project already knows.")
    recall_tokens: int = Field(800, ge=0, le=8000, description="Budget for the recalled context.")
    track: bool = Field(True, description="Track the run as a task (PREFLIGHT, CHECK, POSTFLIGHT).")
    weighting: Literal["dce", "calibrated"] = Field(
        "dce", description="The final confidence: the DCE's, or weighted by track records."
    )
    min_outcomes: int = Field(5, ge=1, le=1000, description="Outcomes before a record counts.")


class NovaRun(BaseModel):
    """A deliberation: its decision, how it got there, and every turn."""

    id: str
    question: str
    status: RunStatus
    detail: str = ""
    session_id: str | None = None
    cascade_id: str | None = None
    gate: float
    gate_rule: str = ""
    experts: list[Pick] = []
    rounds: int = 0
    exit: str | None = None
    recommendation: str | None = None
    confidence: float | None = None
    tradeoffs: list[str] = []
    dissent: list[str] = []
    disagreements: list[str] = []
    inputs: list[str] = []
    notes: list[str] = []
    turns: list[Turn] = []
    assessments: list[Turn] = []
    calibration: str | None = None
    weighting: str = "dce"
    weights: dict[str, float] = {}
    recall_tokens: int = 0
    decision_log: str | None = None
    model_calls: int = 0
    replayed: int = 0
    prompt_tokens: int = 0
    ms: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def risks(self) -> dict[str, Risk]:
        """The risk level each persona stated last (the seed asks every persona for one)."""
        return {
            t.persona: Risk(t.block["risk_level"]) for t in self.turns if t.block.get("risk_level")
        }

    @computed_field  # type: ignore[prop-decorator]
    @property
    def risk_level(self) -> Risk | None:
        """The highest risk level a persona stated last; None when none stated one."""
        return highest_risk(self.risks.values())


def persona_dirs(home: Path, settings: NovaSettings) -> list[Path]:
    """Where a run's personas come from after the built-ins: the store's, then the caller's."""
    return [home / "personas", *(Path(d) for d in settings.personas)]


def gate_for(ctx: RunContext, settings: NovaSettings) -> tuple[float, str]:
    """The CHECK gate and the rule that set it: ``--gate``; else, when the caller named a
    profile for the purpose, ``1 − its confidence threshold``; else the seed's 0.35, whatever
    the model (a profile chosen by the model's name does not move it)."""
    if settings.gate is not None:
        return settings.gate, "set by --gate"
    if settings.gate_from_profile and ctx.profile is not None:
        threshold = ctx.profile.thresholds.confidence_threshold
        if threshold is None:
            threshold = ctx.profile.thresholds.dynamic_fallback_threshold
        return round(1.0 - threshold, 6), (
            f"profile {ctx.profile.name!r}: 1 − its confidence threshold {threshold:.2f}"
        )
    return DEFAULT_GATE, "the seed's default"
