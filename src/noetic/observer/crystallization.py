"""When a chain stops: the five reasons (HighConfidence, Consistency, LowComplexity,
PatternMatch, MaxStagesReached), checked in the seed's order, every threshold configurable.

The seed's prose says "> 0.95" and "< 6 layers", but its worked examples contradict both; the
thresholds here (≥ 0.95; fewer than 3 layers at this stage *and* the previous one) make both
examples come out as documented (``docs/observer.md``).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from noetic.frozen import Frozen
from noetic.observer.observation import Observation


class Reason(StrEnum):
    HIGH_CONFIDENCE = "HighConfidence"
    CONSISTENCY = "Consistency"
    LOW_COMPLEXITY = "LowComplexity"
    PATTERN_MATCH = "PatternMatch"
    MAX_STAGES_REACHED = "MaxStagesReached"


class ObserverSettings(Frozen):
    max_stages: int = Field(4, ge=1, le=10)
    high_confidence: float = Field(0.95, ge=0, le=1)
    consistency_delta: float = Field(0.05, ge=0, le=1)
    consistency_overlap: float = Field(0.9, ge=0, le=1)
    low_complexity_layers: int = Field(3, ge=0, le=16)
    pattern_threshold: float = Field(0.92, ge=-1, le=1)
    adaptive: bool = False
    max_tokens: int = Field(1024, gt=0)


class CrystallizationCheck(Frozen):
    is_crystallized: bool
    reason: Reason | None
    confidence_delta: float
    layer_overlap: float


def layer_overlap(a: tuple[str, ...], b: tuple[str, ...]) -> float:
    """Jaccard overlap of two layer sets (two empty sets overlap fully)."""
    union = set(a) | set(b)
    return len(set(a) & set(b)) / len(union) if union else 1.0


def check(
    current: Observation,
    previous: Observation | None,
    *,
    pattern_match: bool,
    stage_budget: int,
    settings: ObserverSettings,
) -> CrystallizationCheck:
    delta = abs(current.confidence - previous.confidence) if previous else 1.0
    overlap = layer_overlap(current.layers, previous.layers) if previous else 0.0

    def done(reason: Reason | None) -> CrystallizationCheck:
        return CrystallizationCheck(
            is_crystallized=reason is not None,
            reason=reason,
            confidence_delta=round(delta, 6),
            layer_overlap=round(overlap, 6),
        )

    if current.confidence >= settings.high_confidence:
        return done(Reason.HIGH_CONFIDENCE)
    if (
        previous is not None
        and delta < settings.consistency_delta
        and overlap > settings.consistency_overlap
    ):
        return done(Reason.CONSISTENCY)
    limit = settings.low_complexity_layers
    if previous is not None and len(current.layers) < limit and len(previous.layers) < limit:
        return done(Reason.LOW_COMPLEXITY)
    if pattern_match:
        return done(Reason.PATTERN_MATCH)
    if current.stage >= stage_budget:
        return done(Reason.MAX_STAGES_REACHED)
    return done(None)


def stage_budget(first: Observation, settings: ObserverSettings) -> int:
    """With ``adaptive`` on, the Explorer's own prediction of its final confidence sets the
    budget: above 0.95 → 2 stages, below 0.70 → all of them, otherwise 3."""
    if not settings.adaptive or first.predicted_confidence is None:
        return settings.max_stages
    predicted = first.predicted_confidence
    if predicted > 0.95:
        return min(2, settings.max_stages)
    if predicted < 0.70:
        return settings.max_stages
    return min(3, settings.max_stages)
