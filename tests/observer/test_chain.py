"""The chain with scripted model replies: the seed's worked examples, failures, the cache."""

import asyncio
import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.embeddings import default_embedder
from noetic.errors import ParseError
from noetic.events import EventKind
from noetic.llm.scripted import ScriptedProvider
from noetic.observer.cache import PatternCache
from noetic.observer.chain import observer_stats, run_chain
from noetic.observer.crystallization import ObserverSettings, Reason
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store

from ..llm.model_server import reply, running


def run(query, replies, *, store=None, seen=None, **kw):
    provider = ScriptedProvider(replies)
    store = store or Store(Path(os.environ["NOETIC_HOME"]))
    ctx = build_context("observer", tracker=Tracker(store, ProfileRegistry()), provider=provider)
    if seen is not None:
        ctx.bus.subscribe(seen.append)
    return asyncio.run(run_chain(ctx, query, **kw)), provider


def test_seed_example_1_simple_query_ends_at_stage_2_low_complexity():
    result, provider = run(
        "What is 2+2?",
        [
            "CONFIDENCE: 0.9\nLAYERS: C02\nCONTENT:\nThis is a simple arithmetic question. "
            "2+2 = 4.",
            "CONFIDENCE: 0.92\nLAYERS: C02,C15\nCONTENT:\n2+2 = 4.",
        ],
    )
    assert (result.stages, result.reason) == (2, Reason.LOW_COMPLEXITY)
    assert result.answer == "2+2 = 4." and result.model_calls == 2
    assert provider.remaining == 0
    # the run's totals: the scripted provider's token counts, and no price for it
    assert (result.usage.calls, result.usage.cost_usd) == (2, None)
    assert result.usage.input_tokens == sum(
        len(m.content.split()) for r in provider.calls for m in r.messages
    )


def test_seed_example_2_complex_query_runs_4_stages_to_high_confidence():
    result, provider = run(
        "How do I balance career ambitions with family life while staying true to my values?",
        [
            "CONFIDENCE: 0.6\nLAYERS: C01,C03,C04,C06,C13\nCONTENT:\nemotional needs, ...",
            "CONFIDENCE: 0.75\nLAYERS: C01,C03,C04,C06,C09,C13\nCONTENT:\nAdded ethics.",
            "CONFIDENCE: 0.88\nLAYERS: C01,C03,C04,C06,C13\nCONTENT:\nSynthesized.",
            "CONFIDENCE: 0.95\nLAYERS: C01,C03,C13\nCONTENT:\nFinal answer: balance is dynamic.",
        ],
    )
    assert (result.stages, result.reason) == (4, Reason.HIGH_CONFIDENCE)
    assert [c.reason for c in result.checks] == [None, None, None, Reason.HIGH_CONFIDENCE]
    # each stage is a fresh call carrying the summary of the previous stages
    prompts = [r.messages[0].content for r in provider.calls]
    assert "stage 3: Integrator" in prompts[2] and "Added ethics." in prompts[2]
    assert "Stage 1 (confidence 0.60" in prompts[3]


def test_a_stage_unreadable_once_is_retried_with_the_problem():
    result, provider = run(
        "q",
        [
            "CONFIDENCE: 0.6\nLAYERS: C01,C02,C03\nCONTENT: a",
            "I am fairly confident now.",
            "CONFIDENCE: 0.97\nLAYERS: C01\nCONTENT: b",
        ],
    )
    assert result.stages == 2 and result.reason is Reason.HIGH_CONFIDENCE
    assert result.model_calls == 3
    assert "no CONFIDENCE line" in provider.calls[2].messages[-1].content


def test_a_stage_unreadable_twice_ends_with_the_last_good_observation():
    result, _ = run(
        "q",
        [
            "CONFIDENCE: 0.6\nLAYERS: C01,C02,C03\nCONTENT: the good one",
            "CONFIDENCE: 2\nLAYERS: C01\nCONTENT: x",
            "CONFIDENCE: lots\nLAYERS: C01\nCONTENT: y",
        ],
    )
    assert result.answer == "the good one" and result.reason is None
    assert "stage 2 reply unreadable twice" in result.note
    assert "ended with the stage 1 observation" in result.note


def test_nothing_usable_at_stage_1_is_an_error():
    with pytest.raises(ParseError, match="no usable observation"):
        run("q", ["nope", "still nope"])


def test_adaptive_budget_stops_early_when_the_explorer_predicts_high_confidence():
    replies = [
        "CONFIDENCE: 0.8\nPREDICTED_CONFIDENCE: 0.97\nLAYERS: C01,C02,C03\nCONTENT: a",
        "CONFIDENCE: 0.85\nLAYERS: C01,C02,C04,C05\nCONTENT: b",
    ]
    result, provider = run("q", replies, settings=ObserverSettings(adaptive=True))
    assert (result.stages, result.stage_budget) == (2, 2)
    assert result.reason is Reason.MAX_STAGES_REACHED
    assert "PREDICTED_CONFIDENCE" in provider.calls[0].messages[0].content


def test_events_and_persistence(store):
    seen = []
    result, _ = run("q", ["CONFIDENCE: 0.96\nLAYERS: C02\nCONTENT: done"], store=store, seen=seen)
    kinds = [e.kind for e in seen]
    assert kinds == [
        EventKind.PHASE_ENTERED, EventKind.LLM_CALL, EventKind.OBSERVATION, EventKind.RUN_FINISHED
    ]  # fmt: skip
    assert {e.engine for e in seen} == {"observer"}  # the model call too, through the context
    assert seen[-1].data["status"] == "HighConfidence"
    stored = store.events(kind="observation")
    assert len(stored) == 1 and stored[0].engine == "observer"
    stats = observer_stats(store)
    assert stats.runs == 1 and stats.reasons == {"HighConfidence": 1}
    assert stats.calls_saved_by_early_stopping == 3 and result.run_id


@pytest.fixture
def cache(store):
    clock = {"now": 1000.0}
    c = PatternCache(store, default_embedder(), ttl=100, max_size=3, clock=lambda: clock["now"])
    c.clock_state = clock  # type: ignore[attr-defined]
    return c


def test_cache_hit_answers_with_zero_model_calls(cache, store):
    first, _ = run("What is 2+2?", ["CONFIDENCE: 0.97\nLAYERS: C02\nCONTENT: 4"], cache=cache)
    assert first.model_calls == 1 and not first.cache_hit
    again, provider = run("what is 2 + 2 ?", [], cache=cache, store=store)
    assert again.cache_hit and again.model_calls == 0 and again.answer == "4"
    assert again.reason is Reason.PATTERN_MATCH and provider.calls == []
    assert observer_stats(store).cache_hits == 1


def test_cache_miss_for_an_unrelated_query(cache):
    run("What is 2+2?", ["CONFIDENCE: 0.97\nLAYERS: C02\nCONTENT: 4"], cache=cache)
    assert cache.lookup("How do I bake sourdough bread?") is None
    assert cache.lookup("What is 3+3?") is None  # similar words, different question


def test_cache_entries_expire(cache):
    cache.add("What is the capital of France?", "Paris", 0.99, ("C15",))
    assert cache.lookup("What is the capital of France?") is not None
    cache.clock_state["now"] += 101
    assert cache.lookup("What is the capital of France?") is None
    assert len(cache) == 0


def test_cache_evicts_the_least_recently_used(cache):
    for i, q in enumerate(["capital of France", "boiling point of water", "speed of light"]):
        cache.clock_state["now"] += 1
        cache.add(q, f"a{i}", 0.99, ())
    cache.clock_state["now"] += 1
    assert cache.lookup("capital of France") is not None  # now the most recently used
    cache.clock_state["now"] += 1
    cache.add("height of Everest", "8849 m", 0.99, ())
    assert len(cache) == 3
    assert cache.lookup("boiling point of water") is None  # least recently used: evicted
    assert cache.lookup("capital of France") is not None


def test_the_cache_survives_a_restart(cache, store):
    cache.add("What is 2+2?", "4", 0.99, ("C02",))
    reopened = PatternCache(store, default_embedder(), ttl=100, clock=lambda: 1000.0)
    assert reopened.lookup("What is 2+2?").answer == "4"


@pytest.mark.slow
def test_the_cli_streams_stages_over_real_http():
    runner = CliRunner()
    with running() as server:
        server.enqueue(
            reply("CONFIDENCE: 0.6\nLAYERS: C01,C02,C03,C04\nCONTENT: exploring"),
            reply("CONFIDENCE: 0.97\nLAYERS: C02\nCONTENT: the answer"),
        )
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["observe", "why is the sky blue?", "--provider", spec])
    assert result.exit_code == 0, result.output
    assert "stage 1 Explorer" in result.stderr and "stage 2 Refiner" in result.stderr
    assert "HighConfidence" in result.stdout and "the answer" in result.stdout
    stats = json.loads(runner.invoke(app, ["observe", "stats", "--json"]).stdout)
    assert stats["runs"] == 1 and stats["chain_lengths"] == {"2": 1}
