"""The tools that need a model: a configured provider over real HTTP, or the connected client's
own model through MCP sampling (a real client with a sampling callback)."""

import json

import pytest
from mcp.types import CreateMessageResult, ErrorData, ImageContent

from noetic.store import Store
from noetic.store.llm_calls import llm_calls

from ..conftest import uniform
from ..llm.model_server import reply, running
from ._client import call, err, host_model, ok

GOOD = uniform(0.85, engagement=0.9, coherence=0.9)


@pytest.mark.slow
def test_query_ai_on_a_configured_provider_over_http(server, _isolated_home):
    with running() as model:
        model.enqueue(reply("Paris."))
        spec = f"openai-compatible:{model.url}/v1#tiny"
        (result,) = call(server, ("query_ai", {"question": "Capital of France?", "provider": spec}))
    assert ok(result) == {"answer": "Paris.", "provider": "openai-compatible", "model": "tiny"}
    assert model.requests[0]["messages"][-1] == {"role": "user", "content": "Capital of France?"}
    recorded = llm_calls(Store(_isolated_home))
    assert [(c.provider, c.outcome, c.tokens_in) for c in recorded] == [
        ("openai-compatible", "ok", 11)
    ]


@pytest.mark.slow
def test_query_ai_uses_the_configured_default_provider(server, monkeypatch):
    with running() as model:
        model.enqueue(reply("configured"))
        monkeypatch.setenv("NOETIC_PROVIDER", f"openai-compatible:{model.url}/v1#tiny")
        (result,) = call(server, ("query_ai", {"question": "hi"}))
    assert ok(result)["answer"] == "configured"


def test_a_broken_configured_provider_is_an_error_not_a_silent_fallback(server, monkeypatch):
    monkeypatch.setenv("NOETIC_PROVIDER", "bogus:model")
    (result,) = call(
        server, ("query_ai", {"question": "hi"}), sampling_callback=host_model("x"), mode="legacy"
    )
    assert "unknown provider 'bogus'" in err(result)


def test_query_ai_runs_on_the_clients_own_model_through_sampling(server, _isolated_home):
    seen = []
    (result,) = call(
        server,
        ("query_ai", {"question": "what is 2+2?", "system": "Be terse.", "max_tokens": 50}),
        sampling_callback=host_model("4", seen=seen),
        mode="legacy",
    )
    assert ok(result) == {"answer": "4", "provider": "mcp-sampling", "model": "host"}
    params = seen[0]
    assert params.messages[0].content.text == "what is 2+2?"
    assert (params.system_prompt, params.max_tokens, params.temperature) == ("Be terse.", 50, 0.0)
    (recorded,) = llm_calls(Store(_isolated_home))
    assert (recorded.provider, recorded.outcome) == ("mcp-sampling", "ok")


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (ErrorData(code=-1, message="the user declined"), "did not run the sampling request"),
        (
            CreateMessageResult(
                role="assistant",
                content=ImageContent(type="image", data="AAAA", mime_type="image/png"),
                model="host",
            ),
            "image content, not text",
        ),
    ],
)
def test_a_client_that_declines_or_answers_without_text_is_a_clear_error(server, answer, message):
    async def sampler(context, params):
        return answer

    (result,) = call(
        server, ("query_ai", {"question": "hi"}), sampling_callback=sampler, mode="legacy"
    )
    assert message in err(result)


def test_a_connection_without_a_channel_for_sampling_says_how_to_connect(server):
    # The 2026-07-28 protocol has no mid-call server-to-client requests.
    (result,) = call(
        server, ("query_ai", {"question": "hi"}), sampling_callback=host_model("x"), mode="auto"
    )
    assert "cannot carry sampling requests" in err(result)
    assert "initialize handshake" in err(result)


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("query_ai", {"question": "hi"}, "does not support MCP sampling"),
        ("query_ai", {"question": " "}, "the question is empty"),
        ("query_ai", {"question": "hi", "provider": "bogus:model"}, "unknown provider"),
        ("query_ai", {"question": "hi", "max_tokens": 0}, "greater than or equal to 1"),
        ("create_cascade", {"task": "say hi"}, "does not support MCP sampling"),
        ("create_cascade", {"task": " "}, "the task is empty"),
        ("create_cascade", {"task": "t", "provider": "anthropic"}, "is not SCHEME:MODEL"),
        ("create_cascade", {"task": "t", "timeout": 0}, "greater than 0"),
        ("observe", {"query": "why?"}, "does not support MCP sampling"),
        ("observe", {"query": ""}, "the query is empty"),
    ],
)
def test_bad_input_to_model_tools(server, tool, args, message):
    (result,) = call(server, (tool, args))
    assert message in err(result)


@pytest.mark.subprocess
def test_create_cascade_runs_on_the_clients_model(server, _isolated_home):
    scores = json.dumps({"vectors": GOOD})
    plan = '{"approach": "answer directly", "strategy": "general", "complex": false}'
    (result,) = call(
        server,
        ("create_cascade", {"task": "say hi"}),
        sampling_callback=host_model(scores, plan, "The answer.", scores),
        mode="legacy",
        client_info={"name": "test-host", "version": "1"},
    )
    body = ok(result)
    assert body["status"] == "completed" and body["output"] == "The answer."
    assert [p["phase"] for p in body["trajectory"]] == ["PREFLIGHT", "POSTFLIGHT"]
    assert body["calibration"]["classification"] == "well_calibrated"
    store = Store(_isolated_home)
    session = store.get_session(body["session_id"])
    assert session.ai_id == "test-host"  # the host's name, as the client declared it
    calls = llm_calls(store, session_id=session.id)
    assert len(calls) == 4 and {c.provider for c in calls} == {"mcp-sampling"}


def test_observe_runs_on_the_clients_model_through_sampling(server):
    sampler = host_model(
        "CONFIDENCE: 0.7\nLAYERS: C02,C07,C10\nCONTENT: thinking",
        "CONFIDENCE: 0.96\nLAYERS: C02\nCONTENT: crystallized",
    )
    (result,) = call(
        server, ("observe", {"query": "why?"}), sampling_callback=sampler, mode="legacy"
    )
    body = ok(result)
    assert body["answer"] == "crystallized" and body["reason"] == "HighConfidence"
    assert body["stages"] == 2 and body["model_calls"] == 2
