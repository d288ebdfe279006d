"""The real SDK clients against a local server speaking their wire formats."""

import asyncio
import sys

import pytest
from pydantic import BaseModel

from noetic.errors import ParseError, ProviderError, UsageError, ValidationError
from noetic.events import EventBus, EventKind
from noetic.llm.base import Request
from noetic.llm.registry import parse_provider, resolve_provider_spec
from noetic.llm.resilience import ResilientProvider, RetryPolicy
from noetic.llm.structured import complete_structured
from noetic.store.llm_calls import llm_calls, record_llm_call

from .model_server import error, hang, reply, truncated


def run(coro):
    return asyncio.run(coro)


class Sleeps:
    def __init__(self):
        self.calls = []

    async def __call__(self, seconds):
        self.calls.append(seconds)


def resilient(provider, store=None, bus=None, **policy):
    sleeps = Sleeps()
    wrapped = ResilientProvider(
        provider,
        RetryPolicy(**{"max_attempts": 3, "timeout": 5, **policy}),
        record=(lambda call: record_llm_call(store, call)) if store else None,
        bus=bus,
        session_id="s_test",
        sleep=sleeps,
        rand=lambda: 0.5,
    )
    return wrapped, sleeps


@pytest.mark.slow
def test_a_normal_reply_with_usage(provider, model_server):
    model_server.enqueue(reply("hello there", input_tokens=21, output_tokens=3))
    result = run(provider.complete(Request.of("hi", system="be brief", max_tokens=50)))
    assert result.text == "hello there"
    assert (result.usage.input_tokens, result.usage.output_tokens) == (21, 3)
    assert result.provider == provider.name and result.latency_ms > 0
    body = model_server.requests[0]
    assert body["max_tokens"] == 50
    if provider.name == "anthropic":
        assert body["system"] == "be brief" and model_server.paths[0] == "/v1/messages"
    else:
        assert body["messages"][0] == {"role": "system", "content": "be brief"}
        assert model_server.paths[0] == "/v1/chat/completions"


@pytest.mark.slow
def test_429_honours_retry_after_and_every_attempt_is_recorded(provider, model_server, store):
    model_server.enqueue(error(429, headers={"retry-after": "0.25"}), reply("done"))
    bus = EventBus()
    seen = []
    bus.subscribe(seen.append)
    wrapped, sleeps = resilient(provider, store, bus)
    assert run(wrapped.complete(Request.of("x"))).text == "done"
    assert sleeps.calls == [0.25]
    rows = llm_calls(store, session_id="s_test")
    assert [(r.attempt, r.outcome, r.status) for r in rows] == [(1, "error", 429), (2, "ok", None)]
    assert rows[0].error_class == "status" and rows[1].tokens_in == 11
    assert [e.kind for e in seen] == [EventKind.LLM_CALL, EventKind.LLM_CALL]


@pytest.mark.slow
def test_500_then_success_backs_off_exponentially(provider, model_server):
    model_server.enqueue(error(500), error(503), reply("fine"))
    wrapped, sleeps = resilient(provider, base_delay=0.2)
    assert run(wrapped.complete(Request.of("x"))).text == "fine"
    assert sleeps.calls == pytest.approx([0.15, 0.3])  # equal jitter at rand=0.5


@pytest.mark.slow
def test_4xx_is_not_retried(provider, model_server, store):
    model_server.enqueue(error(400, text="bad request"), reply("never"))
    wrapped, sleeps = resilient(provider, store)
    with pytest.raises(ProviderError) as info:
        run(wrapped.complete(Request.of("x")))
    assert info.value.status == 400 and not info.value.retryable
    assert sleeps.calls == [] and len(llm_calls(store)) == 1


@pytest.mark.slow
def test_401_says_to_check_the_key(provider, model_server):
    model_server.enqueue(error(401))
    with pytest.raises(ProviderError) as info:
        run(provider.complete(Request.of("x")))
    assert "API key" in info.value.fix


@pytest.mark.slow
def test_a_hang_past_the_timeout_is_retried_then_fails(provider, model_server, store):
    model_server.enqueue(hang(1.5), hang(1.5))
    wrapped, _ = resilient(provider, store, timeout=0.2, max_attempts=2)
    with pytest.raises(ProviderError) as info:
        run(wrapped.complete(Request.of("x")))
    assert info.value.kind == "timeout"
    assert [r.error_class for r in llm_calls(store)] == ["timeout", "timeout"]


@pytest.mark.slow
def test_a_truncated_body_is_a_retryable_connection_error(provider, model_server):
    model_server.enqueue(truncated(), reply("whole"))
    wrapped, sleeps = resilient(provider)
    assert run(wrapped.complete(Request.of("x"))).text == "whole"
    assert len(sleeps.calls) == 1


@pytest.mark.slow
def test_attempts_are_bounded(provider, model_server, store):
    model_server.enqueue(*(error(502) for _ in range(5)))
    wrapped, sleeps = resilient(provider, store, max_attempts=3)
    with pytest.raises(ProviderError):
        run(wrapped.complete(Request.of("x")))
    assert len(llm_calls(store)) == 3 and len(sleeps.calls) == 2


@pytest.mark.slow
def test_a_retry_after_longer_than_allowed_fails_at_once(provider, model_server):
    model_server.enqueue(error(429, headers={"retry-after": "600"}), reply("late"))
    wrapped, sleeps = resilient(provider, max_delay=30)
    with pytest.raises(ProviderError, match="asks to wait 600"):
        run(wrapped.complete(Request.of("x")))
    assert sleeps.calls == []


class Verdict(BaseModel):
    answer: str
    confidence: float


@pytest.mark.slow
def test_structured_output_from_prose_and_a_repair_round(provider, model_server):
    model_server.enqueue(
        reply("I think the answer is yes, fairly sure."),
        reply('Sure:\n```json\n{"answer": "yes", "confidence": 0.8}\n```'),
    )
    result = run(complete_structured(provider, Request.of("q"), Verdict))
    assert result == Verdict(answer="yes", confidence=0.8)
    repair = model_server.requests[1]["messages"][-1]["content"]
    assert "no JSON object" in repair


@pytest.mark.slow
def test_structured_output_gives_up_after_one_repair_with_the_raw_text(provider, model_server):
    model_server.enqueue(reply("no json here"), reply("still none"), reply("unused"))
    with pytest.raises(ParseError) as info:
        run(complete_structured(provider, Request.of("q"), Verdict))
    assert info.value.raw == "still none"
    assert len(model_server.requests) == 2


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("anthropc:claude", "did you mean 'anthropic'"),
        ("gpt-4o", "is not SCHEME:MODEL"),
        ("openai:", "is not SCHEME:MODEL"),
        ("openai-compatible:http://host:8000/v1", "needs a base URL and a model"),
        ("scripted:x", "unknown provider"),
    ],
)
def test_bad_provider_strings(spec, message):
    with pytest.raises(ValidationError) as info:
        parse_provider(spec)
    assert message in str(info.value)


def test_keys_come_from_the_environment(monkeypatch):
    with pytest.raises(UsageError, match="ANTHROPIC_API_KEY"):
        parse_provider("anthropic:claude-sonnet-4-5")
    with pytest.raises(UsageError, match="OPENAI_API_KEY"):
        parse_provider("openai:gpt-4o")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    assert parse_provider("anthropic:claude-sonnet-4-5").model == "claude-sonnet-4-5"


def test_ollama_and_compatible_endpoints(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:11434")
    ollama = parse_provider("ollama:llama3.2")
    assert (ollama.name, ollama.model) == ("ollama", "llama3.2")
    assert str(ollama._client.base_url).rstrip("/") == "http://gpu-box:11434/v1"  # type: ignore[attr-defined]
    vllm = parse_provider("openai-compatible:http://localhost:8000/v1#qwen2.5-7b")
    assert vllm.model == "qwen2.5-7b"
    assert str(vllm._client.base_url).rstrip("/") == "http://localhost:8000/v1"  # type: ignore[attr-defined]


def test_a_missing_sdk_names_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "anthropic", None)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with pytest.raises(UsageError) as info:
        parse_provider("anthropic:claude")
    assert "pip install 'noetic[anthropic]'" in info.value.fix


def test_provider_resolution_order(tmp_path, monkeypatch):
    with pytest.raises(UsageError, match="no model provider configured"):
        resolve_provider_spec(None, tmp_path)
    (tmp_path / "config.toml").write_text('[provider]\ndefault = "ollama:qwen2.5"\n')
    assert resolve_provider_spec(None, tmp_path) == "ollama:qwen2.5"
    monkeypatch.setenv("NOETIC_PROVIDER", "openai:gpt-4o")
    assert resolve_provider_spec(None, tmp_path) == "openai:gpt-4o"
    assert resolve_provider_spec("anthropic:x", tmp_path) == "anthropic:x"
    (tmp_path / "config.toml").write_text("[provider\n")
    monkeypatch.delenv("NOETIC_PROVIDER")
    with pytest.raises(ValidationError, match="not valid TOML"):
        resolve_provider_spec(None, tmp_path)


@pytest.mark.slow
def test_the_anthropic_route_to_another_server_is_anthropic_base_url(monkeypatch):
    """docs/providers.md's route to an Anthropic-compatible server works as written."""
    import asyncio
    from pathlib import Path

    from noetic.llm.base import Request
    from noetic.llm.registry import parse_provider

    from .model_server import reply, running

    docs = (Path(__file__).resolve().parents[2] / "docs" / "providers.md").read_text()
    assert "export ANTHROPIC_BASE_URL=" in docs
    with running() as server:
        server.enqueue(reply("from the local server"))
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "local-key")
        provider = parse_provider("anthropic:my-model")
        done = asyncio.run(provider.complete(Request.of("hello")))
    assert done.text == "from the local server" and provider.endpoint == server.url  # type: ignore[attr-defined]
    assert server.requests[0]["model"] == "my-model"


@pytest.mark.slow
def test_held_calls_wait_for_the_callers_write_but_never_for_a_model(
    openai_provider, model_server, store
):
    model_server.enqueue(reply("one"), error(500), reply("two"))
    bus = EventBus()
    seen = []
    bus.subscribe(seen.append)
    stored_at_pause = []

    async def pause(seconds):
        stored_at_pause.append([r.outcome for r in llm_calls(store)])

    wrapped = ResilientProvider(
        openai_provider,
        RetryPolicy(max_attempts=3, timeout=5),
        record=lambda call: record_llm_call(store, call),
        bus=bus,
        session_id="s_test",
        sleep=pause,
        hold=True,
    )
    run(wrapped.complete(Request.of("x")))
    assert llm_calls(store) == [] and seen == []  # held for the caller's next write
    assert wrapped.totals.calls == 1  # counted at once
    run(wrapped.complete(Request.of("y")))
    # the held call was written before the next one was sent, and the failed attempt before
    # the pause: only the answered call is held now
    assert stored_at_pause == [["ok", "error"]]
    assert [r.outcome for r in llm_calls(store)] == ["ok", "error"]
    wrapped.flush()
    rows = llm_calls(store)
    assert [(r.attempt, r.outcome) for r in rows] == [(1, "ok"), (1, "error"), (2, "ok")]
    assert [e.kind for e in seen] == [EventKind.LLM_CALL] * 3
    assert [e.data["outcome"] for e in seen] == ["ok", "error", "ok"]
    assert seen[0].data == {
        "provider": "openai", "model": rows[0].model, "attempt": 1, "outcome": "ok",
        "tokens_in": rows[0].tokens_in, "tokens_out": rows[0].tokens_out,
        "latency_ms": rows[0].latency_ms, "error_class": None, "status": None,
        "tokens_cached": 0, "tokens_cache_write": 0, "cost_usd": None,
        "stop_reason": rows[0].stop_reason, "note": None,
    }  # fmt: skip
    assert seen[0].session_id == "s_test" and rows[0].session_id == "s_test"
