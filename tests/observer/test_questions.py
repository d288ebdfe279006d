"""The pattern cache is right or silent: near-miss questions never hit, paraphrases may."""

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.embeddings import default_embedder
from noetic.observer.cache import PatternCache
from noetic.observer.questions import Signature, same_question
from noetic.store import Store

PAIRS = json.loads(Path(__file__).with_name("near_misses.json").read_text())
NEAR = [p for p in PAIRS if p["kind"] != "paraphrase"]
PARA = [p for p in PAIRS if p["kind"] == "paraphrase"]


def test_the_set_is_large_enough_and_covers_every_kind():
    kinds = {p["kind"] for p in NEAR}
    assert len(NEAR) >= 50 and {"negation", "entity-swap", "number", "polarity"} <= kinds
    assert len(PARA) >= 20


@pytest.mark.parametrize("pair", NEAR, ids=[f"{p['kind']}:{p['b']}" for p in NEAR])
def test_near_misses_are_different_questions(pair):
    assert not same_question(pair["a"], pair["b"])
    assert not same_question(pair["b"], pair["a"])


def test_most_paraphrases_are_the_same_question():
    assert sum(same_question(p["a"], p["b"]) for p in PARA) >= 18


@pytest.fixture(scope="module")
def embedder():
    return default_embedder()


def test_the_cache_never_answers_a_near_miss(tmp_path, embedder):
    with Store(tmp_path / "s", write_files=False) as store:
        cache = PatternCache(store, embedder)
        wrong = []
        for pair in NEAR:
            cache.add(pair["a"], f"answer to {pair['a']}", 0.97, ())
            hit = cache.lookup(pair["b"], touch=False)
            if hit is not None and hit.query != pair["b"]:
                wrong.append((pair["b"], hit.query))
        assert wrong == []
        # the questions themselves still hit, and the in-chain rule agrees with the lookup
        assert cache.lookup(NEAR[0]["a"]).answer == f"answer to {NEAR[0]['a']}"
        assert cache.knows_question(NEAR[0]["a"]) and not cache.knows_question(NEAR[0]["b"])


def test_a_paraphrase_finds_its_question_among_near_misses(tmp_path, embedder):
    with Store(tmp_path / "s", write_files=False) as store:
        cache = PatternCache(store, embedder)
        cache.add("Should I deploy on Friday?", "no", 0.97, ())
        cache.add("Should I not deploy on Friday?", "yes", 0.97, ())
        assert cache.lookup("should I deploy on friday").answer == "no"
        assert cache.lookup("Shouldn't I deploy on Friday?").answer == "yes"
        assert cache.lookup("Should I deploy on Monday?") is None


words = st.sampled_from(
    [
        "should",
        "I",
        "deploy",
        "the",
        "service",
        "on",
        "Friday",
        "what",
        "is",
        "2",
        "+",
        "3",
        "how",
        "do",
        "convert",
        "Celsius",
        "to",
        "a",
        "list",
        "in",
        "Python",
        "not",
        "never",
        "why",
        "when",
        "cat",
        "dog",
        "chase",
    ]
)


@given(st.lists(words, min_size=1, max_size=12))
def test_a_question_means_itself_and_the_rule_is_symmetric(tokens):
    a = " ".join(tokens) + "?"
    assert same_question(a, a) and same_question(a, a.upper()[0] + a[1:])
    b = " ".join(reversed(tokens)) + "?"
    assert same_question(a, b) == same_question(b, a)


@given(st.lists(words, min_size=1, max_size=12), st.integers(0, 12))
def test_adding_a_negation_or_a_number_changes_the_question(tokens, at):
    at = min(at, len(tokens))
    base = " ".join(tokens)
    assert not same_question(base, " ".join([*tokens[:at], "not", *tokens[at:]]))
    assert not same_question(base, " ".join([*tokens[:at], "7", *tokens[at:]]))


@given(st.text(max_size=300))
def test_any_text_has_a_signature(text):
    Signature(text)
    assert same_question(text, text)


def test_pattern_match_in_a_chain_compares_questions_not_answers(tmp_path, embedder):
    import asyncio

    from noetic.llm.scripted import ScriptedProvider
    from noetic.observer.chain import run_chain
    from noetic.observer.crystallization import Reason
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.context import build_context
    from noetic.runtime.tracker import Tracker

    reply = (
        "CONFIDENCE: 0.7\nLAYERS: C02,C07,C10,C15\nCONTENT: deploy on Friday with a rollback plan"
    )
    with Store(tmp_path / "s", write_files=False) as store:
        cache = PatternCache(store, embedder)
        cache.add("Who should approve a Friday deploy?", "deploy on Friday with a rollback plan",
                  0.9, ())  # fmt: skip
        provider = ScriptedProvider([reply] * 4)
        ctx = build_context(
            "observer", tracker=Tracker(store, ProfileRegistry()), provider=provider
        )
        result = asyncio.run(run_chain(ctx, "Should I deploy on Friday?", cache=cache))
        assert not result.cache_hit and result.reason is not Reason.PATTERN_MATCH


def test_pattern_match_fires_inside_a_chain_when_another_run_crystallized_the_question(
    tmp_path, embedder
):
    import asyncio

    from noetic.llm.scripted import ScriptedProvider
    from noetic.observer.chain import run_chain
    from noetic.observer.crystallization import Reason
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.context import build_context
    from noetic.runtime.tracker import Tracker

    replies = iter([
        "CONFIDENCE: 0.6\nLAYERS: C02,C07,C10,C15\nCONTENT: it depends on the rollback plan",
        "CONFIDENCE: 0.7\nLAYERS: C01,C03,C05,C08\nCONTENT: yes, with a rollback plan",
        "CONFIDENCE: 0.8\nLAYERS: C04,C06,C09,C11\nCONTENT: never reached",
    ])  # fmt: skip
    question = "Should I deploy on Friday?"
    with Store(tmp_path / "s", write_files=False) as store:
        other_run = PatternCache(store, embedder)  # another chain, e.g. a concurrent MCP call

        def model(request):
            reply = next(replies)
            if reply.endswith("yes, with a rollback plan"):  # the other run ends during stage 2
                other_run.add(question, "yes, if you can roll back", 0.96, ())
            return reply

        cache = PatternCache(store, embedder)
        ctx = build_context(
            "observer", tracker=Tracker(store, ProfileRegistry()), provider=ScriptedProvider(model)
        )
        result = asyncio.run(run_chain(ctx, question, cache=cache))
    assert not result.cache_hit  # the cache was empty when the chain began
    assert (result.stages, result.model_calls) == (2, 2)
    assert result.reason is Reason.PATTERN_MATCH
    assert [c.reason for c in result.checks] == [None, Reason.PATTERN_MATCH]
