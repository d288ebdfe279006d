"""`nova_process` through a real MCP client: on the host's model by sampling, and resumed."""

from __future__ import annotations

import pytest

from noetic.store import Store
from noetic.store.llm_calls import llm_calls

from ..mcp._client import call, err, host_model, ok
from .test_cli import ANY_TURN


@pytest.fixture
def server(_isolated_home, monkeypatch):
    from noetic.mcp.server import build_server

    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    return build_server(_isolated_home)


@pytest.mark.subprocess
def test_nova_process_runs_on_the_clients_model_through_sampling(server, _isolated_home):
    (result,) = call(
        server,
        ("nova_process", {"question": "Should we use OAuth2?", "experts": ["security"]}),
        sampling_callback=host_model(*[ANY_TURN] * 8),
        mode="legacy",
    )
    body = ok(result)
    assert body["status"] == "completed" and body["recommendation"] == "OAuth2 with PKCE"
    assert [t["node"] for t in body["turns"]] == [
        "unpack", "experts", "synthesize", "critique", "final"
    ]  # fmt: skip
    assert [t["node"] for t in body["assessments"]] == ["preflight", "check", "postflight"]
    calls = llm_calls(Store(_isolated_home), session_id=body["session_id"])
    assert len(calls) == body["model_calls"] == 8
    assert {c.provider for c in calls} == {"mcp-sampling"}


@pytest.mark.subprocess
def test_nova_process_escalates_then_resumes_with_a_persons_input(server):
    critical = ANY_TURN.replace('"severity": "none"', '"severity": "critical"')
    args = {"question": "OAuth2?", "experts": ["security"], "max_rounds": 1}
    (first,) = call(
        server, ("nova_process", args), sampling_callback=host_model(*[critical] * 6),
        mode="legacy",
    )  # fmt: skip
    escalated = ok(first)
    assert escalated["status"] == "escalated"
    (second,) = call(
        server,
        ("nova_process", {"run_id": escalated["id"], "input": "Go with OAuth2."}),
        sampling_callback=host_model(critical, critical),  # the final, then the POSTFLIGHT
        mode="legacy",
    )
    done = ok(second)
    assert done["status"] == "completed" and done["inputs"] == ["Go with OAuth2."]
    assert done["model_calls"] == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"question": "why?"}, "does not support MCP sampling"),
        ({"question": " "}, "the question is empty"),
        ({"question": "q", "max_rounds": 0}, "greater than or equal to 1"),
        ({"run_id": "n_nope"}, "no Nova run"),
        ({"question": "q", "experts": ["astrologer"], "provider": "ollama:x"}, "astrologer"),
    ],
)
def test_bad_input_to_nova_process(server, args, message):
    (result,) = call(server, ("nova_process", args))
    assert message in err(result)
