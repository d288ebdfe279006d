"""How past tasks are scored for recall. Pure functions; weights in :class:`RecallConfig`.

**Epistemic need** (from the current PREFLIGHT): ``need = mean(uncertainty, 1 − know,
1 − context, 1 − state)`` — how much the agent lacks. The seed's thresholds pick the strategy:
need > 0.7 → deep (5 tasks), > 0.5 → moderate (3), > 0.3 → light (1), else summary (only the
titles of up to 10 tasks). Without a current assessment the strategy is moderate.

**Floor.** Nothing is loaded unless the closest task's cosine similarity reaches the
embedder's floor (all-MiniLM-L6-v2: 0.38), and no task under the keep threshold (0.15) is
loaded beside it: an unrelated query loads nothing and says so.

**Score** of a past task ``s`` on the shortlist (the ``shortlist`` closest by similarity)::

    score = (w_semantic·similarity + w_state·state + w_delta·delta + w_learning·learning
             + w_recency·recency) · calibration_multiplier

* similarity: cosine similarity of the task texts' embeddings;
* state: ``1 − ‖pre_now − pre_s‖ / √13``: it started where the agent is now;
* delta: cosine between what the agent now lacks (``1 − oriented score`` per vector) and what
  ``s`` learned (its positive oriented deltas), clipped at 0: it learned what is missing now;
* learning: ``s``'s learning magnitude, scaled so 0.3 counts as full;
* recency: ``1 / (1 + 0.1 · days)`` (the seed's decay);
* calibration multiplier: 1.0 for tasks whose outcome confirmed the prediction and for tasks
  without an outcome yet, ``poor_calibration_multiplier`` (0.3, the seed's) for tasks whose
  outcome contradicted it, when the filter lets them through at all (see
  :mod:`noetic.recall.verification`: verified outcomes decide, not POSTFLIGHT's self-report).

The weights were tuned on the relevance set (``tests/recall/relevance.py``, measured by
``bench/recall_quality.py``), one term at a time from similarity alone: state (0.1) is kept, as
it changes nothing when the agent's state says nothing about the task and raises P@3 and R@5
when it does; delta, learning and recency are computed and reported but weigh 0, as no weight
helped and larger ones cost quality. ``docs/recall.md`` gives the figures.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from enum import StrEnum

from pydantic import Field

from noetic.frozen import Frozen
from noetic.vectors import VECTOR_NAMES, oriented


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


def state_similarity(a: Mapping[str, float], b: Mapping[str, float]) -> float:
    shared = [v for v in VECTOR_NAMES if v in a and v in b]
    if not shared:
        return 0.0
    distance = math.sqrt(sum((a[v] - b[v]) ** 2 for v in shared))
    return max(0.0, 1 - distance / math.sqrt(len(shared)))


NO_CHANGE = 1e-6
"""A need or a learning vector shorter than this is no direction at all (scores are stored as
float32, whose smallest normal value is about 1e-38: a 1e-139 delta is zero there)."""


def delta_similarity(current: Mapping[str, float], delta: Mapping[str, float]) -> float:
    lacks = [1 - oriented(v, current[v]) if v in current else 0.0 for v in VECTOR_NAMES]
    learned = [
        max(0.0, -delta[v] if v in ("density", "uncertainty") else delta[v]) if v in delta else 0.0
        for v in VECTOR_NAMES
    ]
    na = math.sqrt(sum(x * x for x in lacks))
    nb = math.sqrt(sum(x * x for x in learned))
    if na < NO_CHANGE or nb < NO_CHANGE:
        return 0.0
    return max(0.0, sum(x * y for x, y in zip(lacks, learned, strict=True)) / (na * nb))


def recency(days: float, config: RecallConfig) -> float:
    return 1 / (1 + config.recency_decay * max(0.0, days))


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
