"""Streaming over SSE through the real SDK clients, in both wire formats."""

import asyncio

import pytest

from noetic.errors import ProviderError, StreamInterrupted
from noetic.llm.base import Completion, Request, ToolSpec, complete_streaming, stream_completion
from noetic.llm.resilience import ResilientProvider, RetryPolicy
from noetic.llm.scripted import ScriptedProvider
from noetic.store.llm_calls import llm_calls, record_llm_call

from .model_server import Behaviour, calls, reply

GREP = ToolSpec(name="grep", parameters={"type": "object", "properties": {}})


def run(coro):
    return asyncio.run(coro)


async def collect(iterator):
    return [item async for item in iterator]


class Sleeps:
    def __init__(self):
        self.calls = []

    async def __call__(self, seconds):
        self.calls.append(seconds)


def resilient(provider, store=None, **policy):
    sleeps = Sleeps()
    wrapped = ResilientProvider(
        provider,
        RetryPolicy(**{"max_attempts": 3, "timeout": 5, **policy}),
        record=(lambda call: record_llm_call(store, call)) if store else None,
        sleep=sleeps,
        rand=lambda: 0.5,
    )
    return wrapped, sleeps


@pytest.mark.slow
def test_text_arrives_in_deltas_then_the_whole_completion(provider, model_server):
    model_server.enqueue(reply("The tests pass on main.", input_tokens=40, output_tokens=6))
    items = run(collect(provider.stream(Request.of("status?", system="terse"))))
    *deltas, final = items
    assert deltas == ["The ", "tests ", "pass ", "on ", "main."]
    assert isinstance(final, Completion) and final.text == "The tests pass on main."
    assert (final.usage.input_tokens, final.usage.output_tokens) == (40, 6)
    assert final.stop_reason == "end" and final.provider == provider.name
    body = model_server.requests[0]
    assert body["stream"] is True and model_server.refused == []
    if provider.name == "openai":
        assert body["stream_options"] == {"include_usage": True}


@pytest.mark.slow
def test_streamed_tool_calls_are_assembled(provider, model_server):
    model_server.enqueue(
        calls(("c1", "grep", {"pattern": "retry", "path": "src"}), ("c2", "grep", {}))
    )
    *deltas, final = run(collect(provider.stream(Request.of("find it", tools=(GREP,)))))
    assert deltas == [] and final.stop_reason == "tool_use"
    assert [(c.id, c.arguments) for c in final.tool_calls] == [
        ("c1", {"pattern": "retry", "path": "src"}),
        ("c2", {}),
    ]


@pytest.mark.slow
def test_a_stream_cut_midway_is_not_retried_and_keeps_what_arrived(provider, model_server, store):
    model_server.enqueue(reply("one two three four five", cut_after=3), reply("never asked"))
    wrapped, sleeps = resilient(provider, store)
    seen = []

    async def consume():
        async for item in wrapped.stream(Request.of("count")):
            seen.append(item)

    with pytest.raises(StreamInterrupted) as info:
        run(consume())
    assert seen == ["one ", "two ", "three "]
    assert info.value.received == "one two three "
    assert "after 14 characters" in info.value.message
    assert len(model_server.requests) == 1 and sleeps.calls == []
    (row,) = llm_calls(store)
    assert row.outcome == "error" and row.error_class == "connection"


@pytest.mark.slow
def test_a_stream_cut_before_any_text_is_retried(provider, model_server, store):
    model_server.enqueue(reply("lost", cut_after=0), reply("second try"))
    wrapped, sleeps = resilient(provider, store)
    *deltas, final = run(collect(wrapped.stream(Request.of("x"))))
    assert deltas == ["second ", "try"] and final.text == "second try"
    assert len(sleeps.calls) == 1
    assert [r.outcome for r in llm_calls(store)] == ["error", "ok"]


@pytest.mark.slow
def test_a_dropped_stream_is_never_a_short_reply(provider, model_server):
    model_server.enqueue(reply("all of it", cut_after=2))
    with pytest.raises(ProviderError) as info:
        run(collect(provider.stream(Request.of("x"))))
    assert info.value.retryable and info.value.kind == "connection"


@pytest.mark.slow
def test_an_http_error_before_the_stream_is_retried(provider, model_server):
    model_server.enqueue(Behaviour(status=503), reply("fine"))
    wrapped, sleeps = resilient(provider)
    assert run(collect(wrapped.stream(Request.of("x"))))[-1].text == "fine"
    assert len(sleeps.calls) == 1


@pytest.mark.slow
def test_a_silent_stream_times_out_per_piece(openai_provider, model_server):
    model_server.enqueue(reply("slow words", token_delay=1.0), reply("quick"))
    wrapped, sleeps = resilient(openai_provider, timeout=0.3)
    assert run(collect(wrapped.stream(Request.of("x"))))[-1].text == "quick"
    assert len(sleeps.calls) == 1


def test_complete_streaming_hands_each_delta_over():
    shown = []
    script = ScriptedProvider(["a whole reply"])
    result = run(complete_streaming(script, Request.of("x"), shown.append))
    assert shown == ["a whole reply"] and result.text == "a whole reply"
    plain = ScriptedProvider(["quiet"])
    assert run(complete_streaming(plain, Request.of("x"), None)).text == "quiet"
    assert run(collect(stream_completion(ScriptedProvider([""]), Request.of("x"))))[0].text == ""
