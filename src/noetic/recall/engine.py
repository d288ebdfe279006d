"""Recall: choose past tasks for a new session and render them to fit a token budget.

Steps: epistemic need → strategy (how many tasks); the calibration filter; scoring
(:mod:`.scoring`); the safeguards (drift alert, context coherence, cold start); then the detail
level — ``detailed``, ``compressed`` or ``ultra_compressed`` — the richest that fits the budget
(counted with the real tokenizer), dropping the lowest-scored tasks if even the most compressed
does not fit. The result carries every score and the reason each task was chosen or left out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.embeddings import Embedder, cosine_top_k
from noetic.recall.scoring import (
    RecallConfig,
    Strategy,
    delta_similarity,
    need,
    recency,
    state_similarity,
    strategy,
)
from noetic.store import Store
from noetic.store.summaries import RecallSummary, load_summaries, save_embeddings

LEVELS = ("detailed", "compressed", "ultra_compressed")


class Candidate(BaseModel):
    model_config = ConfigDict(frozen=True)

    cascade_id: str
    task: str
    project: str | None
    calibration: str
    score: float
    semantic: float
    state: float
    delta: float
    learning: float
    recency: float
    multiplier: float
    chosen: bool
    why: str


class RecallResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    need: float | None
    strategy: Strategy
    level: str | None
    budget_tokens: int
    tokens: int
    context: str
    candidates: list[Candidate]
    warnings: list[str]


def _embed_missing(
    store: Store, embedder: Embedder, rows: list[tuple[RecallSummary, Any]]
) -> dict[str, Any]:
    import numpy as np

    vectors: dict[str, Any] = {}
    missing = []
    for summary, (name, blob) in rows:
        if name == embedder.name and blob is not None:
            vectors[summary.cascade_id] = np.frombuffer(blob, dtype=np.float32)
        else:
            missing.append(summary)
    if missing:
        fresh = embedder.embed([s.task for s in missing])
        save_embeddings(
            store,
            embedder.name,
            [(s.cascade_id, v.tobytes()) for s, v in zip(missing, fresh, strict=True)],
        )
        vectors.update({s.cascade_id: v for s, v in zip(missing, fresh, strict=True)})
    return vectors


def render(summary: RecallSummary, level: str) -> str:
    top = sorted(summary.delta.items(), key=lambda kv: -abs(kv[1]))
    if level == "ultra_compressed":
        moves = ", ".join(f"{k} {v:+.2f}" for k, v in top[:3])
        return f"- {summary.task} [{summary.calibration}] {moves}"
    lines = [
        f"## {summary.task}",
        f"calibration {summary.calibration}; confidence {summary.confidence_pre:.2f} → "
        f"{summary.confidence_post:.2f}; learning {summary.learning:.2f}",
        "biggest changes: " + ", ".join(f"{k} {v:+.2f}" for k, v in top[:5]),
    ]
    if summary.notes:
        lines.append(f"learned: {summary.notes}")
    if level == "detailed":
        lines.append("before: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.pre.items()))
        lines.append("after: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.post.items()))
    return "\n".join(lines)


def recall(
    store: Store,
    task: str,
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    *,
    current: Mapping[str, float] | None = None,
    ai_id: str | None = None,
    limit: int | None = None,
    budget: int | None = None,
    config: RecallConfig | None = None,
    now: datetime | None = None,
) -> RecallResult:
    config = config or RecallConfig()
    budget = budget or config.budget_tokens
    now = now or datetime.now(UTC)
    need_score = need(current) if current else None
    chosen_strategy = strategy(need_score, config)
    wanted = limit if limit is not None else config.sessions[chosen_strategy.value]
    rows = load_summaries(store, ai_id=ai_id)
    warnings: list[str] = []
    if not rows:
        cold = "cold start: no finished tasks to recall; loading nothing"
        return RecallResult(
            task=task, need=need_score, strategy=chosen_strategy, level=None,
            budget_tokens=budget, tokens=0, context="", candidates=[], warnings=[cold],
        )  # fmt: skip
    calibrations = [1.0 if s.calibration == "well_calibrated" else 0.0 for s, _ in rows]
    if len(calibrations) >= 10:
        recent, history = calibrations[-5:], calibrations[:-5]
        gap = abs(sum(recent) / len(recent) - sum(history) / len(history))
        if gap > config.drift_threshold:
            warnings.append(
                f"calibration drift: the share of well-calibrated tasks moved by {gap:.2f} "
                f"(recent 5 against the {len(history)} before); review what is loaded"
            )
    vectors = _embed_missing(store, embedder, rows)
    query = embedder.embed([task])[0]
    scored = []
    for summary, _ in rows:
        similarity = max(0.0, cosine_top_k(query, vectors[summary.cascade_id][None, :], 1)[0][1])
        state = state_similarity(current, summary.pre) if current else 0.0
        delta = delta_similarity(current, summary.delta) if current else 0.0
        learning = min(1.0, summary.learning / config.full_learning)
        days = (now - datetime.fromisoformat(summary.ended_at)).total_seconds() / 86400
        rec = recency(days, config)
        allowed = summary.calibration in config.allowed_calibration
        multiplier = (
            1.0 if summary.calibration == "well_calibrated" else config.poor_calibration_multiplier
        )
        raw = (config.w_semantic * similarity + config.w_state * state + config.w_delta * delta
               + config.w_learning * learning + config.w_recency * rec)  # fmt: skip
        scored.append((raw * multiplier, summary, similarity, state, delta, learning, rec,
                       multiplier, allowed))  # fmt: skip
    scored.sort(key=lambda t: -t[0])
    picked = [t for t in scored if t[8]][:wanted]
    level, context, kept = _fit(picked, chosen_strategy, budget, count_tokens)
    projects = {t[1].project or "(none)" for t in kept}
    if len(projects) > config.max_projects:
        warnings.append(
            f"context coherence: the loaded tasks span {len(projects)} projects "
            f"({', '.join(sorted(projects))}); mixing contexts can confuse more than it helps"
        )
    kept_ids = {t[1].cascade_id for t in kept}
    picked_ids = {t[1].cascade_id for t in picked}
    candidates = []
    for rank, (score, s, sem, state, delta, learning, rec, mult, allowed) in enumerate(scored, 1):
        if s.cascade_id in kept_ids:
            why = f"chosen: rank {rank} of {len(scored)}"
        elif not allowed:
            why = f"left out: calibration {s.calibration} is filtered out"
        elif s.cascade_id in picked_ids:
            why = f"left out: did not fit the {budget}-token budget"
        else:
            why = f"left out: rank {rank}, the {chosen_strategy.value} strategy loads {wanted}"
        candidates.append(Candidate(
            cascade_id=s.cascade_id, task=s.task, project=s.project, calibration=s.calibration,
            score=round(score, 6), semantic=round(sem, 6), state=round(state, 6),
            delta=round(delta, 6), learning=round(learning, 6), recency=round(rec, 6),
            multiplier=mult, chosen=s.cascade_id in kept_ids, why=why,
        ))  # fmt: skip
    return RecallResult(task=task, need=need_score, strategy=chosen_strategy, level=level,
                        budget_tokens=budget, tokens=count_tokens(context), context=context,
                        candidates=candidates, warnings=warnings)  # fmt: skip


def _fit(
    picked: list[Any], chosen: Strategy, budget: int, count: Callable[[str], int]
) -> tuple[str | None, str, list[Any]]:
    """The richest level whose block fits; if none does, drop the lowest-scored tasks."""
    header = "# What you learned in earlier tasks (most relevant first)\n"
    if chosen == Strategy.SUMMARY:
        picked_list = picked
        while picked_list:
            block = header + "\n".join(f"- {t[1].task}" for t in picked_list)
            if count(block) <= budget:
                return "summary", block, picked_list
            picked_list = picked_list[:-1]
        return None, "", []
    kept = list(picked)
    while kept:
        for level in LEVELS:
            block = header + "\n\n".join(render(t[1], level) for t in kept)
            if count(block) <= budget:
                return level, block, kept
        kept = kept[:-1]
    return None, "", []
