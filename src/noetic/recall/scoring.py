"""How past tasks are scored for recall. Pure functions; weights in :class:`RecallConfig`.

``docs/recall.md`` gives the formulas (epistemic need and the strategy it picks, the similarity
floor, the score of a shortlisted task and its calibration multiplier) and the figures the
weights were tuned by: on the relevance set (``tests/recall/relevance.py``, measured by
``bench/recall_quality.py``) only the state term helped, so delta, learning and recency are
computed and reported but weigh 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from pydantic import Field

from noetic.frozen import Frozen


class Strategy(StrEnum):
    DEEP = "deep"
    MODERATE = "moderate"
    LIGHT = "light"
    SUMMARY = "summary"


class RecallConfig(Frozen):
    # tuned on the relevance set (bench/recall_quality.py): only the state term is kept
    w_semantic: float = 1.0
    w_state: float = 0.1
    w_delta: float = 0.0
    w_learning: float = 0.0
    w_recency: float = 0.0
    semantic_floor: float | None = None  # the embedder's own when None
    keep_floor: float | None = None
    shortlist: int = Field(200, ge=1)  # closest tasks scored in full
    catch_up: int = Field(32, ge=0)  # pending tasks a recall embeds before it ranks
    recency_decay: float = 0.1
    full_learning: float = 0.3
    deep_above: float = 0.7
    moderate_above: float = 0.5
    light_above: float = 0.3
    sessions: dict[str, int] = Field(
        default_factory=lambda: {"deep": 5, "moderate": 3, "light": 1, "summary": 10}
    )
    allowed_verdicts: tuple[str, ...] = ("confirmed", "unverified")
    outcome_tolerance: float = Field(0.5, ge=0, le=1)
    poor_calibration_multiplier: float = 0.3
    drift_threshold: float = 0.15
    max_projects: int = 2
    budget_tokens: int = Field(40_000, gt=0)  # 20% of a 200k context


def need(current: Mapping[str, float]) -> float:
    parts = [current.get("uncertainty", 0.5)] + [
        1 - current.get(v, 0.5) for v in ("know", "context", "state")
    ]
    return sum(parts) / len(parts)


def strategy(need_score: float | None, config: RecallConfig) -> Strategy:
    if need_score is None:
        return Strategy.MODERATE
    if need_score > config.deep_above:
        return Strategy.DEEP
    if need_score > config.moderate_above:
        return Strategy.MODERATE
    if need_score > config.light_above:
        return Strategy.LIGHT
    return Strategy.SUMMARY


NO_CHANGE = 1e-6
"""A need or a learning vector shorter than this is no direction at all (scores are stored as
float32, whose smallest normal value is about 1e-38: a 1e-139 delta is zero there)."""


FLOORS = {"all-minilm-l6-v2": (0.38, 0.15)}  # the middle of the gap on the relevance set
DEFAULT_FLOORS = (0.30, 0.15)


def floors(embedder: object, config: RecallConfig) -> tuple[float, float]:
    """``(floor, keep)``: the closest task must reach ``floor`` for anything to load, and
    nothing under ``keep`` loads beside it. Calibrated per embedder on the relevance set."""
    floor, keep = FLOORS.get(getattr(embedder, "name", ""), DEFAULT_FLOORS)
    if config.semantic_floor is not None:
        floor = config.semantic_floor
    if config.keep_floor is not None:
        keep = config.keep_floor
    return floor, min(keep, floor)
