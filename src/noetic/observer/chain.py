"""The observer chain: Explore → Refine → Integrate → Crystallize, stopping when crystallized.

Each stage is a fresh model call carrying a summary of the stages before it. After each stage
the inspector checks the five crystallization reasons (see :mod:`.crystallization`). A pattern
cache, when given, is consulted before stage 1: a hit answers with zero model calls. After each
stage PatternMatch looks only at what another run crystallized since (a concurrent MCP call,
another process): the same question answered meanwhile ends this chain at that stage. A stage
whose reply cannot be parsed is asked once more, quoting the problem; if that fails too, the
chain ends with the last good observation and says why (or, at stage 1, raises the
:class:`ParseError`, since there is nothing to answer with).
"""

from __future__ import annotations

from collections import Counter

from pydantic import computed_field

from noetic.errors import ParseError
from noetic.events import EventKind, Observed, PhaseEntered, RunFinished, Timer
from noetic.frozen import Frozen
from noetic.llm.base import Completion, Provider, Request, UsageTotals
from noetic.llm.structured import complete_parsed
from noetic.observer.cache import PatternCache
from noetic.observer.crystallization import (
    CrystallizationCheck,
    ObserverSettings,
    Reason,
    check,
    stage_budget,
)
from noetic.observer.observation import Observation, parse_observation
from noetic.observer.prompts import ROLES, stage_prompt, summary
from noetic.runtime.context import RunContext
from noetic.store.base import BaseStore as Store
from noetic.store.observations import runs, save_run


class ChainResult(Frozen):
    query: str
    answer: str
    confidence: float
    layers: tuple[str, ...]
    stages: int
    reason: Reason | None
    checks: list[CrystallizationCheck]
    observations: list[Observation]
    model_calls: int
    cache_hit: bool
    stage_budget: int
    note: str = ""
    run_id: str | None = None
    usage: UsageTotals | None = None

    @computed_field  # type: ignore[prop-decorator]
    @property
    def converged(self) -> bool:
        """The seed's ``converged``: the chain crystallized by a check (high confidence,
        consistency, low complexity, a cached pattern) rather than by running out of stages.
        (The seed counts ``chain_length < 4``; a chain that crystallizes by a real check on its
        last stage converged too.)"""
        return self.reason is not None and self.reason != Reason.MAX_STAGES_REACHED


async def _observe(
    provider: Provider, stage: int, prompt: str, settings: ObserverSettings
) -> tuple[Observation | None, int, str]:
    """One stage: ask, parse; on a parse error ask once more quoting it."""
    replies: list[Completion] = []
    try:
        observation = await complete_parsed(
            provider,
            Request.of(prompt, max_tokens=settings.max_tokens),
            lambda text: parse_observation(text, stage),
            expected="an answer in exactly the format asked (CONFIDENCE, LAYERS, CONTENT)",
            replies=replies,
        )
    except ParseError as exc:
        return None, len(replies), f"stage {stage} reply unreadable twice ({exc.message})"
    return observation, len(replies), ""


async def run_chain(
    ctx: RunContext,
    query: str,
    *,
    settings: ObserverSettings | None = None,
    cache: PatternCache | None = None,
) -> ChainResult:
    """Reason about ``query`` on the context's model in stages; see the module docstring."""
    start = ctx.usage()
    with ctx.scope():
        result = await _chain(ctx, query, settings or ObserverSettings(), cache)
    return result.model_copy(update={"usage": ctx.usage_since(start)})


async def _chain(
    ctx: RunContext, query: str, settings: ObserverSettings, cache: PatternCache | None
) -> ChainResult:
    provider = ctx.model
    timer = Timer()
    if cache is not None:
        hit = cache.lookup(query)
        if hit is not None:
            result = ChainResult(
                query=query,
                **hit.model_dump(include={"answer", "confidence", "layers"}),
                stages=0,
                reason=Reason.PATTERN_MATCH,
                checks=[],
                observations=[],
                model_calls=0,
                cache_hit=True,
                stage_budget=0,
                note=f"answered from the pattern cache (similarity {hit.similarity:.3f} to "
                f"{hit.query!r})",
            )
            return _finish(ctx, result, timer)
    observations: list[Observation] = []
    budget = settings.max_stages
    calls = 0
    checks: list[CrystallizationCheck] = []
    note = ""
    for stage in range(1, settings.max_stages + 1):
        role = ROLES[min(stage, 4)][0]
        ctx.emit(EventKind.PHASE_ENTERED, PhaseEntered(phase="OBSERVE", stage=stage, role=role))
        prompt = stage_prompt(
            stage, query, summary(observations), predict=settings.adaptive and stage == 1
        )
        observation, used, problem = await _observe(provider, stage, prompt, settings)
        calls += used
        if observation is None:
            if not observations:
                raise ParseError(f"the observer chain produced no usable observation: {problem}",
                                 raw="")  # fmt: skip
            note = f"{problem}; ended with the stage {observations[-1].stage} observation"
            break
        observations.append(observation)
        seen = observation.model_dump(include={"confidence", "content"})
        ctx.emit(
            EventKind.OBSERVATION,
            Observed(stage=stage, role=role, layers=list(observation.layers), **seen),
        )
        if stage == 1:
            budget = stage_budget(observation, settings)
        known = cache is not None and cache.crystallized_meanwhile(query)
        verdict = check(
            observation,
            observations[-2] if len(observations) > 1 else None,
            pattern_match=known,
            stage_budget=budget,
            settings=settings,
        )
        checks.append(verdict)
        if verdict.is_crystallized:
            break
    final = observations[-1]  # stage 1 either added one or raised
    result = ChainResult(
        query=query,
        answer=final.content,
        confidence=final.confidence,
        layers=final.layers,
        stages=len(observations),
        reason=checks[-1].reason if checks and not note else None,
        checks=checks,
        observations=observations,
        model_calls=calls,
        cache_hit=False,
        stage_budget=budget,
        note=note,
    )
    if cache is not None and result.reason is not None:
        cache.add(query, result.answer, result.confidence, result.layers)
    return _finish(ctx, result, timer)


def _finish(ctx: RunContext, result: ChainResult, timer: Timer) -> ChainResult:
    provider = ctx.model
    run_id = save_run(
        ctx.store,
        {
            **result.model_dump(include={"query", "stages", "model_calls", "cache_hit",
                                         "stage_budget", "answer", "confidence", "note"}),
            "provider": provider.name,
            "model": provider.model,
            "reason": result.reason.value if result.reason else "unparseable",
        },
        [o.model_dump() for o in result.observations],
    )  # fmt: skip
    result = result.model_copy(update={"run_id": run_id})
    ctx.emit(
        EventKind.RUN_FINISHED,
        RunFinished(
            status=result.reason.value if result.reason else "ended_early",
            ms=timer.ms,
            summary={
                "stages": result.stages,
                "model_calls": result.model_calls,
                "cache_hit": result.cache_hit,
            },
        ),
    )
    return result


class ObserverStats(Frozen):
    runs: int
    chain_lengths: dict[int, int]
    reasons: dict[str, int]
    average_stages: float | None
    cache_hits: int
    model_calls: int
    calls_saved_by_early_stopping: int
    calls_saved_by_cache_estimate: float


def observer_stats(store: Store, max_stages: int = 4) -> ObserverStats:
    """Chain lengths, reasons, and the model calls early stopping and the cache saved.

    Early stopping saved ``max_stages − stages`` calls per chain run; a cache hit saved what an
    uncached chain costs on average (an estimate, labelled as one)."""
    rows = runs(store)
    chains = [r for r in rows if not r["cache_hit"]]
    hits = len(rows) - len(chains)
    mean_calls = sum(r["model_calls"] for r in chains) / len(chains) if chains else 0.0
    return ObserverStats(
        runs=len(rows),
        chain_lengths=dict(sorted(Counter(r["stages"] for r in chains).items())),
        reasons=dict(Counter(r["reason"] for r in rows)),
        average_stages=round(sum(r["stages"] for r in chains) / len(chains), 3) if chains else None,
        cache_hits=hits,
        model_calls=sum(r["model_calls"] for r in rows),
        calls_saved_by_early_stopping=sum(max(0, max_stages - r["stages"]) for r in chains),
        calls_saved_by_cache_estimate=round(hits * mean_calls, 3),
    )
