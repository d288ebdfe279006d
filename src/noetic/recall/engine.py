"""Recall: choose past tasks for a new session and render them to fit a token budget.

Steps: epistemic need → strategy (how many tasks); the calibration filter; scoring
(:mod:`.scoring`, vectorised over every past task); the safeguards (drift alert, context
coherence, cold start); then the detail level (``detailed``, ``compressed`` or
``ultra_compressed``), the richest that fits the budget counted with the real tokenizer,
dropping the lowest-scored tasks if even the most compressed does not fit. The result carries
the scores of the top 50 and the reason each was chosen or left out, and counts the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.embeddings import Embedder
from noetic.recall.scoring import RecallConfig, Strategy, need, strategy
from noetic.recall.verification import CONFIRMED, UNVERIFIED, verdicts
from noetic.store import Store
from noetic.store.summaries import (
    RecallSummary,
    load_summaries,
    save_embeddings,
    scoring_columns,
)
from noetic.vectors import INVERTED, VECTOR_NAMES

LEVELS = ("detailed", "compressed", "ultra_compressed")


class Candidate(BaseModel):
    model_config = ConfigDict(frozen=True)

    cascade_id: str
    task: str
    project: str | None
    calibration: str
    verdict: str
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
    considered: int
    filtered_by_calibration: int
    unverified: int = 0
    """Tasks considered that have no recorded outcome yet (kept, and named as such)."""
    left_out: dict[str, int] = {}
    """Tasks not loaded, by reason: ``calibration_filter`` (by default: their outcome
    contradicted the prediction), ``beyond_strategy`` (ranked below what the strategy loads),
    ``over_budget``; with the loaded ones, they add up to ``considered``."""
    candidates: list[Candidate]
    warnings: list[str]


REPORTED = 50  # candidates listed with their scores; the rest are counted


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


def _embeddings(store: Store, embedder: Embedder, rows: list[Any]) -> Any:
    """The task embeddings of every row, computing (and storing) the missing ones."""
    import numpy as np

    missing = [
        i for i, r in enumerate(rows) if r["embedder"] != embedder.name or r["embedding"] is None
    ]
    blobs = [r["embedding"] for r in rows]
    if missing:
        fresh = embedder.embed([rows[i]["task"] for i in missing])
        save_embeddings(
            store,
            embedder.name,
            [(rows[i]["cascade_id"], v.tobytes()) for i, v in zip(missing, fresh, strict=True)],
        )
        for j, i in enumerate(missing):
            blobs[i] = fresh[j].tobytes()
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(rows), -1)


def _packed(rows: list[Any], column: str) -> Any:
    import numpy as np

    return np.frombuffer(b"".join(r[column] for r in rows), dtype=np.float32).reshape(len(rows), -1)


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
    index: Any = None,
) -> RecallResult:
    """``index`` is an optional vector backend (:class:`noetic.store.qdrant_index.QdrantIndex`)
    for the semantic part; without it the search is exact numpy over the stored vectors."""
    import numpy as np

    config = config or RecallConfig()
    budget = budget or config.budget_tokens
    now = now or datetime.now(UTC)
    need_score = need(current) if current else None
    chosen_strategy = strategy(need_score, config)
    wanted = limit if limit is not None else config.sessions[chosen_strategy.value]
    rows = scoring_columns(store, ai_id=ai_id)
    warnings: list[str] = []
    if not rows:
        cold = "cold start: no finished tasks to recall; loading nothing"
        return RecallResult(
            task=task, need=need_score, strategy=chosen_strategy, level=None,
            budget_tokens=budget, tokens=0, context="", considered=0,
            filtered_by_calibration=0, candidates=[], warnings=[cold],
        )  # fmt: skip
    calibration = np.array([r["calibration"] for r in rows])
    well = (calibration == "well_calibrated").astype(float)
    if len(rows) >= 10:
        gap = abs(well[-5:].mean() - well[:-5].mean())
        if gap > config.drift_threshold:
            warnings.append(
                f"calibration drift: the share of well-calibrated tasks moved by {gap:.2f} "
                f"(recent 5 against the {len(rows) - 5} before); review what is loaded"
            )
    found = verdicts(store, [r["cascade_id"] for r in rows], config.outcome_tolerance)
    verdict = np.array([found[r["cascade_id"]] for r in rows])
    matrix = _embeddings(store, embedder, rows)
    query = embedder.embed([task])[0]
    if index is None:
        similarity = np.clip(matrix @ query, 0, None)
    else:
        ids = [r["cascade_id"] for r in rows]
        index.sync(ids, matrix)
        found = index.similarities(query, ids)
        similarity = np.clip(np.array([found.get(c, 0.0) for c in ids]), 0, None)
    semantic = np.minimum(1.0, similarity / max(float(similarity.max()), config.semantic_floor))
    if current:
        state, delta = _epistemic(current, _packed(rows, "pre_vec"), _packed(rows, "delta_vec"))
    else:
        state = delta = np.zeros(len(rows))
    learning = np.minimum(1.0, np.array([r["learning"] for r in rows]) / config.full_learning)
    days = np.array([(now - datetime.fromisoformat(r["ended_at"])).total_seconds() / 86400
                     for r in rows])  # fmt: skip
    rec = 1 / (1 + config.recency_decay * np.maximum(days, 0))
    trusted = np.isin(verdict, [CONFIRMED, UNVERIFIED])
    multiplier = np.where(trusted, 1.0, config.poor_calibration_multiplier)
    allowed = np.isin(verdict, list(config.allowed_verdicts))
    score = (config.w_semantic * semantic + config.w_state * state + config.w_delta * delta
             + config.w_learning * learning + config.w_recency * rec) * multiplier  # fmt: skip
    order = [int(i) for i in np.argsort(-score, kind="stable")]
    picked = [i for i in order if allowed[i]][:wanted]
    full = load_summaries(store, [rows[i]["cascade_id"] for i in picked])
    level, context, kept = _fit([full[rows[i]["cascade_id"]] for i in picked], chosen_strategy,
                                budget, count_tokens)  # fmt: skip
    kept_ids = {s.cascade_id for s in kept}
    projects = {s.project or "(none)" for s in kept}
    if len(projects) > config.max_projects:
        warnings.append(
            f"context coherence: the loaded tasks span {len(projects)} projects "
            f"({', '.join(sorted(projects))}); mixing contexts can confuse more than it helps"
        )
    picked_ids = {rows[i]["cascade_id"] for i in picked}
    candidates = []
    for rank, i in enumerate(order[:REPORTED], 1):
        r = rows[i]
        cid = r["cascade_id"]
        if cid in kept_ids:
            why = f"chosen: rank {rank} of {len(rows)}"
        elif not allowed[i]:
            why = f"left out: its outcome contradicted the prediction ({verdict[i]})"
        elif cid in picked_ids:
            why = f"left out: did not fit the {budget}-token budget"
        else:
            why = f"left out: rank {rank}; the {chosen_strategy.value} strategy loads {wanted}"
        candidates.append(Candidate(
            cascade_id=cid, task=r["task"], project=r["project"], calibration=r["calibration"],
            verdict=str(verdict[i]), score=round(float(score[i]), 6),
            semantic=round(float(semantic[i]), 6),
            state=round(float(state[i]), 6), delta=round(float(delta[i]), 6),
            learning=round(float(learning[i]), 6), recency=round(float(rec[i]), 6),
            multiplier=float(multiplier[i]), chosen=cid in kept_ids, why=why,
        ))  # fmt: skip
    return RecallResult(
        task=task, need=need_score, strategy=chosen_strategy, level=level, budget_tokens=budget,
        tokens=count_tokens(context), context=context, considered=len(rows),
        filtered_by_calibration=int((~allowed).sum()),
        unverified=int((verdict == UNVERIFIED).sum()),
        left_out={"calibration_filter": int((~allowed).sum()),
                  "beyond_strategy": int(allowed.sum()) - len(picked),
                  "over_budget": len(picked) - len(kept)},
        candidates=candidates, warnings=warnings,
    )  # fmt: skip


def _epistemic(current: Mapping[str, float], pre: Any, delta: Any) -> tuple[Any, Any]:
    """Vectorised :func:`state_similarity` and :func:`delta_similarity` over all rows."""
    import numpy as np

    cur = np.array([current.get(v, np.nan) for v in VECTOR_NAMES], dtype=np.float32)
    diff = pre - cur
    valid = ~np.isnan(diff)
    dist = np.sqrt(np.nansum(diff**2, axis=1))
    count = valid.sum(axis=1)
    state = np.where(count > 0, np.maximum(0, 1 - dist / np.sqrt(np.maximum(count, 1))), 0)
    inverted = np.array([v in INVERTED for v in VECTOR_NAMES])
    oriented_now = np.where(inverted, 1 - cur, cur)
    lacks = np.nan_to_num(1 - oriented_now)
    learned = np.clip(np.nan_to_num(np.where(inverted, -delta, delta)), 0, None)
    norms = np.linalg.norm(learned, axis=1) * np.linalg.norm(lacks)
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(norms > 0, (learned @ lacks) / norms, 0)
    return state, np.clip(sim, 0, None)


def _fit(
    picked: list[RecallSummary], chosen: Strategy, budget: int, count: Callable[[str], int]
) -> tuple[str | None, str, list[RecallSummary]]:
    """The richest level whose block fits; if none does, drop the lowest-scored tasks."""
    header = "# What you learned in earlier tasks (most relevant first)\n"
    kept = list(picked)
    while kept:
        if chosen == Strategy.SUMMARY:
            block = header + "\n".join(f"- {s.task}" for s in kept)
            if count(block) <= budget:
                return "summary", block, kept
        else:
            for level in LEVELS:
                block = header + "\n\n".join(render(s, level) for s in kept)
                if count(block) <= budget:
                    return level, block, kept
        kept = kept[:-1]
    return None, "", []


def recall_for_current_session(
    store: Store, task: str, *, session_id: str | None = None, **kwargs: Any
) -> RecallResult:
    """Recall with the default embedder and tokenizer, against the latest assessment of the
    agent's current session ``session_id`` when there is one (what the CLI and the MCP server
    both use)."""
    from noetic.embeddings import default_embedder
    from noetic.llm.tokens import count_tokens

    current = None
    if session_id is not None:
        history = store.assessments(session_id=session_id)
        current = history[-1].assessment.vectors if history else None
    return recall(store, task, default_embedder(), count_tokens, current=current, **kwargs)
