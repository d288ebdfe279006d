"""Recall: choose past tasks for a new session and render them to fit a token budget.

Steps: epistemic need → strategy (how many tasks); the scope (the current project unless
widened; one AI if asked); semantic search over the memory-mapped index (:mod:`.index`), a
shortlist of the closest tasks, the similarity floor (nothing loaded when even the closest task
is unrelated); the epistemic terms and the calibration filter on the shortlist (:mod:`.scoring`);
the safeguards (drift alert, context coherence, cold start); then the detail level
(``detailed``, ``compressed`` or ``ultra_compressed``), the richest that fits the budget counted
with the real tokenizer, dropping the lowest-scored tasks if even the most compressed does not
fit. The result lists what was chosen and why; the scores of the top 50 only when asked
(``explain``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from noetic.embeddings import Embedder, embed_query, one_blas_thread
from noetic.errors import NotFoundError
from noetic.frozen import Frozen
from noetic.recall.index import embed_pending, index_for
from noetic.recall.scoring import NO_CHANGE, RecallConfig, Strategy, floors, need, strategy
from noetic.recall.verification import CONFIRMED, UNVERIFIED, VERDICTS, outcome_drift
from noetic.store.base import BaseStore as Store
from noetic.store.summaries import RecallSummary, cascade_ids, load_summaries
from noetic.vectors import INVERTED, VECTOR_NAMES

if TYPE_CHECKING:
    from noetic.store.qdrant_index import QdrantIndex

LEVELS = ("detailed", "compressed", "ultra_compressed")


class Candidate(Frozen):
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


class Chosen(Frozen):
    """A loaded task, compactly: what the agent sees beside the context block."""

    cascade_id: str
    task: str
    project: str | None
    similarity: float
    score: float
    why: str


class RecallResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    task: str
    need: float | None
    strategy: Strategy
    scope: str
    embedder: str
    level: str | None
    budget_tokens: int
    tokens: int  # exact when tokens_exact, else an upper bound (see token_bound)
    tokens_exact: bool = True
    context: str
    considered: int
    filtered_by_calibration: int
    unverified: int = 0
    """Tasks considered that have no recorded outcome yet (kept, and named as such)."""
    left_out: dict[str, int] = {}
    """Tasks not loaded, by reason: ``calibration_filter`` (by default: their outcome
    contradicted the prediction), ``below_similarity`` (under the similarity floor),
    ``beyond_strategy`` (ranked below what the strategy loads), ``over_budget``; with the
    loaded ones, they add up to ``considered``."""
    chosen: list[Chosen]
    candidates: list[Candidate] | None = None
    warnings: list[str]


REPORTED = 50  # candidates listed with their scores; the rest are counted


def two(value: float) -> str:
    """``value`` to two decimals, never ``-0.00`` (a cosine of -0.001 is no negative news)."""
    text = f"{value:.2f}"
    return "0.00" if text == "-0.00" else text


def _moves(delta: dict[str, float], n: int) -> str:
    """The ``n`` biggest changes that show at two decimals, or that none does."""
    top = sorted(delta.items(), key=lambda kv: -abs(kv[1]))
    shown = [f"{k} {v:+.2f}" for k, v in top if round(abs(v), 2) > 0][:n]
    return ", ".join(shown) if shown else "no vector changed"


def render(summary: RecallSummary, level: str) -> str:
    if level == "ultra_compressed":
        return f"- {summary.task} [{summary.calibration}] {_moves(summary.delta, 3)}"
    lines = [
        f"## {summary.task}",
        f"calibration {summary.calibration}; confidence {summary.confidence_pre:.2f} → "
        f"{summary.confidence_post:.2f}; learning {summary.learning:.2f}",
        "biggest changes: " + _moves(summary.delta, 5),
    ]
    if summary.notes:
        lines.append(f"learned: {summary.notes}")
    if level == "detailed":
        lines.append("before: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.pre.items()))
        lines.append("after: " + ", ".join(f"{k} {v:.2f}" for k, v in summary.post.items()))
    return "\n".join(lines)


def search_scope(*, ai_id: str | None, project: str | None, all_projects: bool) -> str:
    """The scope a recall searched, in words: the project (or every project) and whose tasks."""
    where = "all projects" if all_projects else f"project {project or '(none)'}"
    who = f"agent {ai_id!r}'s tasks only" if ai_id is not None else "every agent's tasks"
    return f"{where}, {who}"


def recall(
    store: Store,
    task: str,
    embedder: Embedder,
    count_tokens: Callable[[str], int],
    *,
    current: Mapping[str, float] | None = None,
    ai_id: str | None = None,
    project: str | None = None,
    all_projects: bool = False,
    limit: int | None = None,
    budget: int | None = None,
    config: RecallConfig | None = None,
    now: datetime | None = None,
    index: QdrantIndex | None = None,
    explain: bool = False,
) -> RecallResult:
    """Past tasks of ``project`` (tasks without one when it is ``None``; every project with
    ``all_projects``) to load for ``task``. ``index`` is an optional vector backend
    (:class:`noetic.store.qdrant_index.QdrantIndex`) for the similarities; without it they are
    exact numpy over the memory-mapped index. ``explain`` adds the top-50 table. A query over
    ``text_chars`` (65,536 characters, ``docs/limits.md``) is refused before any work."""
    import numpy as np

    from noetic.untrusted import check_text_field

    check_text_field(task, "the recall query")

    config = config or RecallConfig()
    budget = budget or config.budget_tokens
    now = now or datetime.now(UTC)
    need_score = need(current) if current else None
    chosen_strategy = strategy(need_score, config)
    wanted = limit if limit is not None else config.sessions[chosen_strategy.value]
    floor, keep = floors(embedder, config)
    scope = search_scope(ai_id=ai_id, project=project, all_projects=all_projects)
    warnings: list[str] = []
    idx = index_for(store, embedder)
    if idx.pending():
        embed_pending(store, embedder, limit=config.catch_up)
        idx.refresh()
        if left := idx.pending():
            warnings.append(
                f"{left} finished tasks are not embedded yet for {embedder.name}; this recall "
                "ranks the others. Run `noetic reindex` to embed them (it shows progress)"
            )
    scoped = idx.scope(ai_id=ai_id, project=project, all_projects=all_projects)
    pos, n = scoped.positions, scoped.rows

    def result(**kw: Any) -> RecallResult:
        return RecallResult(**{
            "task": task, "need": need_score, "strategy": chosen_strategy, "scope": scope,
            "embedder": embedder.name, "level": None, "budget_tokens": budget, "tokens": 0,
            "context": "", "considered": n, "filtered_by_calibration": 0, "chosen": [],
            "candidates": [] if explain else None, "warnings": warnings, **kw,
        })  # fmt: skip

    if n == 0:
        wider = "" if all_projects else "; --all-projects widens the search"
        if ai_id is not None:
            wider += "; without --own every agent's tasks are searched"
        warnings.append(f"cold start: no finished tasks in {scope} to recall{wider}; "
                        "loading nothing")  # fmt: skip
        return result()
    verdict_all = idx.verdicts(config.outcome_tolerance)
    verdict = verdict_all if pos is None else verdict_all[pos]
    drift = outcome_drift(scoped.ended, verdict)
    if drift is not None and drift.moved > config.drift_threshold:
        warnings.append(
            f"calibration drift: the share of tasks whose outcome confirmed the prediction "
            f"moved by {drift.moved:.2f} ({drift.recent:.2f} over the latest 5 with an outcome, "
            f"{drift.earlier:.2f} over the {drift.before} before); review what is loaded"
        )
    allowed_by = np.array([v in config.allowed_verdicts for v in VERDICTS])
    trusted_by = np.array([v in (CONFIRMED, UNVERIFIED) for v in VERDICTS])
    allowed_all = allowed_by[verdict]
    query = embed_query(embedder, task)
    similarity = None
    # pgvector's HNSW, when the store is set to use it ([store] hnsw) and the server has it
    if index is None and getattr(store, "hnsw", False):
        from noetic.store.pg_vectors import nearest

        similarity = nearest(store, idx, query, positions=pos, ai_id=ai_id, project=project,
                             all_projects=all_projects, k=config.shortlist)  # fmt: skip
    if similarity is None and index is None:  # numpy over the scope's rows
        with one_blas_thread():
            similarity = scoped.vectors @ query
    elif similarity is None:  # the Qdrant backend's
        similarity = _qdrant(store, index, idx, pos, query)
    short = _top(similarity, config.shortlist)
    short = short[similarity[short] > -2]  # rows the HNSW search did not return are not scored
    sim = similarity[short].astype(np.float64)
    m = idx.meta[short if pos is None else pos[short]]
    if current:
        state, delta = _epistemic(current, m["pre"], m["delta"])
    else:
        state = delta = np.zeros(len(short))
    learning = np.minimum(1.0, m["learning"] / config.full_learning)
    days = np.maximum(now.timestamp() - m["ended"], 0) / 86400
    rec = 1 / (1 + config.recency_decay * days)
    multiplier = np.where(trusted_by[verdict[short]], 1.0, config.poor_calibration_multiplier)
    allowed = allowed_all[short]
    score = (config.w_semantic * sim + config.w_state * state + config.w_delta * delta
             + config.w_learning * learning + config.w_recency * rec) * multiplier  # fmt: skip
    order = np.argsort(-score, kind="stable")
    best = float(sim.max())
    if best < floor:
        warnings.append(
            f"nothing relevant: the closest earlier task ({scope}) has similarity {two(best)}, "
            f"under the floor {floor:.2f}; loading nothing"
        )
    eligible = allowed & (sim >= keep) & (best >= floor)
    eligible_all = int((allowed_all & (similarity >= keep)).sum()) if best >= floor else 0
    picked = [int(i) for i in order if eligible[i]][:wanted]
    report = [int(i) for i in order[: REPORTED if explain else 0]]
    ids = cascade_ids(store, [int(m["seq"][i]) for i in {*picked, *report}])
    full = load_summaries(store, [ids[int(m["seq"][i])] for i in {*picked, *report}])
    level, context, kept = _fit([full[ids[int(m["seq"][i])]] for i in picked], chosen_strategy,
                                budget, count_tokens)  # fmt: skip
    kept_ids = {s.cascade_id for s in kept}
    projects = {s.project or "(none)" for s in kept}
    if len(projects) > config.max_projects:
        warnings.append(
            f"context coherence: the loaded tasks span {len(projects)} projects "
            f"({', '.join(sorted(projects))}); mixing contexts can confuse more than it helps"
        )
    rank = {int(i): r for r, i in enumerate(order, 1)}

    def why(i: int) -> str:
        cid = ids[int(m["seq"][i])]
        if cid in kept_ids:
            return f"chosen: rank {rank[i]} of {n}, similarity {two(sim[i])}"
        if not allowed[i]:
            found = VERDICTS[verdict[short[i]]]
            return f"left out: its outcome contradicted the prediction ({found})"
        if best < floor:
            return f"left out: nothing reaches the similarity floor {floor:.2f}"
        if sim[i] < keep:
            return f"left out: similarity {two(sim[i])} is under {keep:.2f}"
        if i in picked:
            return f"left out: did not fit the {budget}-token budget"
        return f"left out: rank {rank[i]}; the {chosen_strategy.value} strategy loads {wanted}"

    chosen = [
        Chosen(cascade_id=ids[int(m["seq"][i])], task=full[ids[int(m["seq"][i])]].task,
               project=full[ids[int(m["seq"][i])]].project, similarity=round(float(sim[i]), 4),
               score=round(float(score[i]), 4), why=why(i))
        for i in picked if ids[int(m["seq"][i])] in kept_ids
    ]  # fmt: skip
    candidates = None
    if explain:
        candidates = []
        for i in report:
            s = full[ids[int(m["seq"][i])]]
            candidates.append(Candidate(
                cascade_id=s.cascade_id, task=s.task, project=s.project,
                calibration=s.calibration, verdict=VERDICTS[verdict[short[i]]],
                score=round(float(score[i]), 6),
                semantic=round(float(sim[i]), 6), state=round(float(state[i]), 6),
                delta=round(float(delta[i]), 6), learning=round(float(learning[i]), 6),
                recency=round(float(rec[i]), 6), multiplier=float(multiplier[i]),
                chosen=s.cascade_id in kept_ids, why=why(i),
            ))  # fmt: skip
    return result(
        level=level,
        tokens=_tokens(context, budget, count_tokens),
        tokens_exact=not context or token_bound(context) > budget // 2,
        context=context,
        chosen=chosen,
        candidates=candidates,
        filtered_by_calibration=n - int(allowed_all.sum()),
        unverified=int((verdict == 0).sum()),
        left_out={
            "calibration_filter": n - int(allowed_all.sum()),
            "below_similarity": int(allowed_all.sum()) - eligible_all,
            "beyond_strategy": eligible_all - len(picked),
            "over_budget": len(picked) - len(kept),
        },
    )


def _tokens(context: str, budget: int, count: Callable[[str], int]) -> int:
    """The block's tokens: counted when the bound comes within half the budget, else the bound
    (a cold CLI call then never loads the tokenizer for a block far under budget)."""
    bound = token_bound(context)
    return count(context) if context and bound > budget // 2 else bound


def _top(values: Any, k: int) -> Any:
    """Positions of the ``k`` largest values (unordered): a partition, not a sort."""
    import numpy as np

    if len(values) <= k:
        return np.arange(len(values))
    return np.argpartition(-values, k - 1)[:k]


def _qdrant(store: Store, backend: Any, idx: Any, pos: Any, query: Any) -> Any:
    """The similarities from a Qdrant collection, synced with the index first."""
    import numpy as np

    rows = np.arange(idx.rows) if pos is None else pos
    seqs = [int(s) for s in idx.meta["seq"][rows]]
    by_seq = {}
    for start in range(0, len(seqs), 500):
        by_seq.update(cascade_ids(store, seqs[start : start + 500]))
    ids = [by_seq[s] for s in seqs]
    backend.sync(ids, idx.vectors[rows])
    found = backend.similarities(query, ids)
    return np.array([found.get(c, 0.0) for c in ids], dtype=np.float32)


def _epistemic(current: Mapping[str, float], pre: Any, delta: Any) -> tuple[Any, Any]:
    """The state and delta terms (:mod:`noetic.recall.scoring`), over all rows at once."""
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
    learned_norm = np.linalg.norm(learned, axis=1)
    lacks_norm = np.linalg.norm(lacks)
    norms = learned_norm * lacks_norm
    with np.errstate(invalid="ignore", divide="ignore"):
        sim = np.where(
            (learned_norm >= NO_CHANGE) & (lacks_norm >= NO_CHANGE), (learned @ lacks) / norms, 0
        )
    return state, np.clip(sim, 0, None)


def _fit(
    picked: list[RecallSummary], chosen: Strategy, budget: int, count: Callable[[str], int]
) -> tuple[str | None, str, list[RecallSummary]]:
    """The richest level whose block fits; if none does, drop the lowest-scored tasks."""
    header = "# What you learned in earlier tasks (most relevant first)\n"
    kept = list(picked)

    def fits(block: str) -> bool:
        return token_bound(block) <= budget or count(block) <= budget

    while kept:
        if chosen == Strategy.SUMMARY:
            block = header + "\n".join(f"- {s.task}" for s in kept)
            if fits(block):
                return "summary", block, kept
        else:
            for level in LEVELS:
                block = header + "\n\n".join(render(s, level) for s in kept)
                if fits(block):
                    return level, block, kept
        kept = kept[:-1]
    return None, "", []


def token_bound(text: str) -> int:
    """An upper bound on the Llama-2 tokenizer's count, with no tokenizer: every token covers
    at least one UTF-8 byte of the text, plus the one word-boundary marker it prepends."""
    return len(text.encode("utf-8")) + 1 if text else 0


def recall_default(store: Store, task: str, **kwargs: Any) -> RecallResult:
    """:func:`recall` with the configured embedder and the real tokenizer."""
    # counted with noetic.llm.tokens' tokenizer, imported from where it is loaded: importing
    # the llm package would bring in asyncio and the network stack for nothing
    from noetic.embeddings import count_tokens, recall_embedder

    return recall(store, task, recall_embedder(), count_tokens, **kwargs)


def recall_for_current_session(
    store: Store,
    task: str,
    *,
    session_id: str | None = None,
    project: str | None = None,
    all_projects: bool = False,
    **kwargs: Any,
) -> RecallResult:
    """Recall for the agent's current session ``session_id`` (what ``noetic recall`` and the
    MCP server use): its latest assessment gives the need, its project the scope (every project
    when there is no current session), unless ``project`` or ``all_projects`` say otherwise."""
    current = None
    session = None
    if session_id is not None:
        history = store.assessments(session_id=session_id)
        current = history[-1].assessment.vectors if history else None
        with contextlib.suppress(NotFoundError):
            session = store.get_session(session_id)
    if project is None and not all_projects:
        if session is None:
            all_projects = True
        else:
            project = session.project
    return recall_default(
        store, task, current=current, project=project, all_projects=all_projects, **kwargs
    )
