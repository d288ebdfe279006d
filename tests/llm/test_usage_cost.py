"""Tokens as providers report them, prices, and the Anthropic prompt-cache mark."""

import asyncio

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import ValidationError
from noetic.llm.anthropic import CACHE_MIN_CHARS
from noetic.llm.base import LLMCall, Request, Usage, UsageTotals
from noetic.llm.prices import BUILTIN, Price, PriceTable
from noetic.llm.resilience import ResilientProvider, RetryPolicy
from noetic.store.llm_calls import llm_calls, record_llm_call

from .model_server import error, reply


def run(coro):
    return asyncio.run(coro)


def recorded(provider, store, prices=None):
    return ResilientProvider(
        provider,
        RetryPolicy(max_attempts=2, base_delay=0),
        record=lambda c: record_llm_call(store, c),
        prices=prices or PriceTable(),
    )


@pytest.mark.slow
def test_anthropic_cache_tokens_and_their_cost(anthropic_provider, model_server, store):
    anthropic_provider.model = "claude-haiku-4-5-20251001"
    model_server.enqueue(
        reply("ok", input_tokens=100, output_tokens=50, cached_tokens=2000, cache_write_tokens=500)
    )
    result = run(recorded(anthropic_provider, store).complete(Request.of("x")))
    assert result.usage == Usage(
        input_tokens=2600, output_tokens=50, cached_tokens=2000, cache_write_tokens=500
    )
    (row,) = llm_calls(store)
    assert (row.tokens_in, row.tokens_cached, row.tokens_cache_write) == (2600, 2000, 500)
    # 100 plain at $1, 2,000 cached at $0.10, 500 written at $1.25, 50 out at $5 per million
    assert row.cost_usd == pytest.approx((100 * 1 + 2000 * 0.1 + 500 * 1.25 + 50 * 5) / 1e6)
    assert row.stop_reason == "end"


@pytest.mark.slow
def test_openai_cached_tokens_and_their_cost(openai_provider, model_server, store):
    openai_provider.model = "gpt-4o"
    model_server.enqueue(reply("ok", input_tokens=1000, output_tokens=100, cached_tokens=400))
    run(recorded(openai_provider, store).complete(Request.of("x")))
    (row,) = llm_calls(store)
    assert (row.tokens_in, row.tokens_cached) == (1000, 400)
    assert row.cost_usd == pytest.approx((600 * 2.5 + 400 * 1.25 + 100 * 10) / 1e6)


@pytest.mark.slow
def test_an_unknown_model_has_an_unknown_cost_not_zero(provider, model_server, store):
    model_server.enqueue(error(503), reply("ok"))
    wrapped = recorded(provider, store)
    run(wrapped.complete(Request.of("x")))
    rows = llm_calls(store)
    assert [r.cost_usd for r in rows] == [None, None]
    assert wrapped.totals.cost_usd is None and wrapped.totals.unpriced == 1
    assert wrapped.totals.failed == 1 and "cost unknown" in wrapped.totals.line()


def test_a_configured_price_wins_and_bad_entries_are_named(tmp_path):
    (tmp_path / "config.toml").write_text(
        '[prices."openai-compatible:qwen2.5-7b"]\ninput = 0.2\noutput = 0.6\n'
        '[prices."openai:gpt-4o"]\ninput = 1\noutput = 1\n'
    )
    table = PriceTable.from_config(tmp_path)
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert table.cost("openai-compatible", "qwen2.5-7b", usage) == pytest.approx(0.8)
    assert table.cost("openai", "gpt-4o", usage) == pytest.approx(2.0)
    assert table.cost("ollama", "llama3.2", usage) == 0.0  # local: no per-token charge
    assert table.cost("openai-compatible", "other", usage) is None
    for body, named in [
        ('[prices."gpt-4o"]\ninput = 1\noutput = 1\n', "is not provider:model"),
        ('[prices."openai:x"]\ninput = -1\noutput = 1\n', "input"),
        ('[prices."openai:x"]\ninput = 1\noutput = 1\ncheap = true\n', "cheap"),
        ('[prices."openai:x"]\ninput = 1\n', "output"),
        ("prices = 3\n", "must be a table"),
        ("[prices\n", "not valid TOML"),
    ]:
        (tmp_path / "config.toml").write_text(body)
        with pytest.raises(ValidationError, match=named):
            PriceTable.from_config(tmp_path)


def test_dated_and_wildcard_names():
    table = PriceTable()
    assert (
        table.price("anthropic", "claude-haiku-4-5-20251001")
        == BUILTIN["anthropic:claude-haiku-4-5"]
    )
    assert table.price("openai", "gpt-4o-2024-08-06") == BUILTIN["openai:gpt-4o"]
    assert table.price("anthropic", "claude-haiku-4-5-preview") is None
    assert PriceTable(builtin=False).price("ollama", "llama3.2") is None


@pytest.mark.slow
def test_the_system_prompt_is_marked_for_caching_when_it_can_be_cached(
    anthropic_provider, model_server
):
    long = "You review pull requests for a payments team. " * (CACHE_MIN_CHARS // 40)
    model_server.enqueue(reply("a"), reply("b"))
    run(anthropic_provider.complete(Request.of("x", system=long)))
    run(anthropic_provider.complete(Request.of("x", system="short")))
    assert model_server.refused == []
    assert model_server.requests[0]["system"] == [
        {"type": "text", "text": long, "cache_control": {"type": "ephemeral"}}
    ]
    assert model_server.requests[1]["system"] == "short"


counts = st.integers(min_value=0, max_value=10**9)


@pytest.mark.slow
@given(counts, counts, counts, counts, st.floats(0, 100), st.floats(0, 100))
def test_cost_is_never_negative_and_grows_with_output(i, o, cached, written, pin, pout):
    cached = min(cached, i)
    written = min(written, i - cached)
    price = Price(input=pin, output=pout, cached_input=pin / 10, cache_write=pin * 1.25)
    usage = Usage(input_tokens=i, output_tokens=o, cached_tokens=cached, cache_write_tokens=written)
    more = usage.model_copy(update={"output_tokens": o + 1000})
    assert 0 <= price.cost(usage) <= price.cost(more)


def _call(outcome, tokens_in, cost):
    return LLMCall(
        provider="p", model="m", attempt=1, outcome=outcome, tokens_in=tokens_in, cost_usd=cost
    )


def test_totals_add_and_subtract():
    calls = [_call("ok", 10, 0.5), _call("error", 0, None), _call("ok", 5, 0.25)]
    total = UsageTotals.of(calls)
    assert (total.calls, total.failed, total.input_tokens, total.cost_usd) == (3, 1, 15, 0.75)
    later = total.add(_call("ok", 7, None))
    assert later.cost_usd is None and later.since(total).cost_usd is None
    assert later.since(total).input_tokens == 7
    assert later.add(_call("ok", 1, 0.1)).since(later).cost_usd == pytest.approx(0.1)
    assert total.model_dump(mode="json")["cost_usd"] == 0.75
