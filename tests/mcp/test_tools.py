"""Every tool through a real in-process MCP client: a happy path and a bad input each."""

import asyncio
import json

import pytest

from mcp import Client
from noetic.vectors import VECTOR_NAMES

from ..conftest import uniform

GOOD = uniform(0.85, engagement=0.9, coherence=0.9)
LOW = uniform(0.5, engagement=0.9, coherence=0.9)


def call(server, *steps, **client_kw):
    """Run (tool, args) steps in one client session; return the results."""

    async def go():
        async with Client(server, **client_kw) as client:
            return [await client.call_tool(name, args) for name, args in steps]

    return asyncio.run(go())


def ok(result):
    assert not result.is_error, result.content[0].text
    return result.structured_content


def err(result):
    assert result.is_error
    return result.content[0].text


def test_the_full_agent_transaction(server):
    results = call(
        server,
        ("bootstrap_session", {"ai_id": "claude", "ai_model": "claude-sonnet-4-5"}),
        ("execute_preflight", {"task": "fix the login bug"}),
        ("submit_preflight_assessment", {"task": "fix the login bug", "vectors": LOW}),
        ("get_epistemic_state", {}),
        ("execute_check", {}),
        ("submit_check_assessment", {"vectors": {"know": 0.9, "context": 0.9}}),
        ("execute_postflight", {}),
        ("submit_postflight_assessment", {"vectors": GOOD}),
        ("get_session_summary", {}),
        ("get_calibration_report", {"ai_id": "claude"}),
    )
    boot, prompt, pre, state, check_prompt, check, post_prompt, post, summary, report = map(
        ok, results
    )
    assert boot["profile"]["name"] == "high_reasoning_collaborative"
    assert "TASK: fix the login bug" in prompt["prompt"]
    assert all(v in prompt["prompt"] for v in VECTOR_NAMES)
    assert pre["decision"]["action"] == "INVESTIGATE"
    assert state["open_cascade"]["task"] == "fix the login bug"
    assert check_prompt["phase"] == "check" and '"know": 0.5' in check_prompt["prompt"]
    assert check["assessment"]["assessment"]["carried"]
    assert post_prompt["phase"] == "postflight"
    assert post["calibration"]["classification"] == "underconfident"
    assert summary["tasks"][0]["status"] == "completed"
    self_report = report["self_consistency"]
    assert self_report["completed_tasks"] == 1
    assert self_report["classifications"] == {"underconfident": 1}
    assert report["outcomes"]["tasks"] == 0
    assert "insufficient data" in report["outcomes"]["metrics"]["brier"]["reason"]


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("submit_preflight_assessment", {"task": "t", "vectors": {**GOOD, "know": 1.7}}, "outside"),
        ("submit_preflight_assessment", {"task": "t", "vectors": {"know": 0.5}}, "needs all 13"),
        ("submit_check_assessment", {"vectors": {"know": "high"}}, "must be a number"),
        ("submit_postflight_assessment", {"vectors": GOOD}, "PREFLIGHT first"),
        ("execute_check", {}, "PREFLIGHT first"),
        ("execute_postflight", {}, "PREFLIGHT first"),
        ("get_epistemic_state", {"session_id": "s_unknown"}, "unknown session"),
        ("get_session_summary", {"session_id": "s_unknown"}, "unknown session"),
        ("generate_goals", {}, "no assessment"),
        ("query_goal_orchestrator", {"session_id": "s_unknown"}, "unknown session"),
        ("get_workflow_guidance", {"phase": "dance"}, "unknown phase"),
        ("execute_cli_command", {"command": "rm -rf /"}, "not an allowed"),
        ("execute_cli_command", {"command": "sessions export x -o /tmp/y"}, "allows only"),
        ("execute_cli_command", {"command": "state --store /etc"}, "--store cannot"),
        ("execute_cli_command", {"command": "state 'unclosed"}, "cannot parse"),
        ("cli_help", {"command": "no-such-command"}, "no help"),
        ("resume_previous_session", {"limit": 0}, "between 1 and 100"),
        ("execute_preflight", {"task": ""}, "needs the task"),
        ("query_ai", {"question": "hi", "provider": "bogus:model"}, "unknown provider"),
        ("record_outcome", {"score": 1.0}, "no task"),
        ("record_outcome", {"score": 1.5}, "less than or equal to 1"),
        ("record_outcome", {"score": 1.0, "task_id": "c_missing"}, "unknown cascade"),
        ("check_drift_monitor", {"window": 2}, "between 5 and 1000"),
    ],
)
def test_bad_input_is_a_tool_error_that_names_the_problem(server, tool, args, message):
    boot, result = call(server, ("bootstrap_session", {}), (tool, args))
    ok(boot)
    assert message in err(result)


def test_an_unknown_session_for_a_postflight(server):
    (result,) = call(
        server, ("submit_postflight_assessment", {"vectors": GOOD, "session_id": "s_x"})
    )
    assert "unknown session" in err(result)


def test_goals_from_gaps_and_the_orchestrator(server):
    results = call(
        server,
        ("bootstrap_session", {"profile": "balanced"}),
        (
            "submit_preflight_assessment",
            {"task": "t", "vectors": uniform(0.5, engagement=0.9, coherence=0.9, know=0.2)},
        ),
        ("generate_goals", {}),
        ("generate_goals", {}),
        ("query_goal_orchestrator", {}),
    )
    goals = ok(results[2])["goals"]
    assert goals[0]["target_vector"] == "know" and goals[0]["priority"] == pytest.approx(0.4)
    assert len(ok(results[3])["goals"]) == len(goals)  # no duplicates on a second call
    assert ok(results[4])["goals"] == goals


def test_previous_sessions_and_texts(server):
    results = call(
        server,
        ("bootstrap_session", {"ai_id": "a"}),
        ("bootstrap_session", {"ai_id": "b"}),
        ("resume_previous_session", {"ai_id": "a"}),
        ("get_empirica_introduction", {}),
        ("get_workflow_guidance", {}),
        ("get_workflow_guidance", {"phase": "check"}),
        ("cli_help", {"command": "preflight"}),
        ("execute_cli_command", {"command": "noetic sessions list --json"}),
    )
    previous = ok(results[2])
    assert [s["ai_id"] for s in previous["sessions"]] == ["a"]
    assert "13 vectors" in ok(results[3])["text"]
    assert "POSTFLIGHT" in ok(results[4])["text"]
    assert ok(results[5])["text"].startswith("CHECK")
    assert "--vectors" in ok(results[6])["text"]
    cli = ok(results[7])
    assert cli["exit_code"] == 0 and '"ai_id": "b"' in cli["stdout"]


def test_outcomes_beliefs_and_drift(server):
    steps = [("bootstrap_session", {"ai_id": "o"})]
    for i in range(25):
        steps += [
            ("submit_preflight_assessment", {"task": f"t{i}", "vectors": GOOD}),
            ("submit_postflight_assessment", {"vectors": GOOD}),
            ("record_outcome", {"score": 0.0, "source": "test", "evidence": "tests failed"}),
        ]
    steps += [
        ("get_calibration_report", {"ai_id": "o"}),
        ("query_bayesian_beliefs", {"ai_id": "o"}),
        ("check_drift_monitor", {"ai_id": "o"}),
    ]
    results = call(server, *steps)
    outcome = ok(results[3])
    assert outcome["score"] == 0.0 and outcome["predicted_preflight"] > 0.7
    report, beliefs, drift = (ok(r) for r in results[-3:])
    assert report["outcomes"]["tasks"] == 25
    assert report["outcomes"]["metrics"]["signed_bias"]["value"] > 0.7
    assert beliefs["beliefs"][0]["direction"] == "overconfident"
    assert "insufficient data" in drift["reason"]


def test_create_cascade_runs_on_the_clients_model(server):
    from mcp.types import CreateMessageResult, TextContent

    scores = json.dumps({"vectors": GOOD})
    replies = iter(
        [scores, '{"approach": "answer directly", "strategy": "general", "complex": false}',
         "The answer.", scores]
    )  # fmt: skip

    async def sampler(context, params):
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=next(replies)), model="host"
        )

    (result,) = call(
        server, ("create_cascade", {"task": "say hi"}), sampling_callback=sampler, mode="legacy"
    )
    body = ok(result)
    assert body["status"] == "completed" and body["output"] == "The answer."
    assert [p["phase"] for p in body["trajectory"]] == ["PREFLIGHT", "POSTFLIGHT"]
    assert body["calibration"]["classification"] == "well_calibrated"


def test_query_ai_without_provider_or_sampling_is_a_clear_error(server):
    (result,) = call(server, ("query_ai", {"question": "hi"}))
    assert "does not support MCP sampling" in err(result)


def test_query_ai_runs_on_the_clients_own_model_through_sampling(server):
    from mcp.types import CreateMessageResult, TextContent

    seen = []

    async def sampler(context, params):
        seen.append(params)
        text = params.messages[-1].content.text
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=f"echo: {text}"), model="host"
        )

    (result,) = call(
        server, ("query_ai", {"question": "what is 2+2?"}), sampling_callback=sampler, mode="legacy"
    )
    body = ok(result)
    assert body == {"answer": "echo: what is 2+2?", "provider": "mcp-sampling", "model": "host"}
    assert seen[0].max_tokens == 1024


def test_resources_and_prompt(server):
    async def go():
        async with Client(server) as client:
            resources = await client.list_resources()
            sessions = await client.read_resource("noetic://sessions")
            profiles = await client.read_resource("noetic://profiles")
            prompt = await client.get_prompt("workflow_guidance")
            return resources, sessions, profiles, prompt

    call(server, ("bootstrap_session", {"ai_id": "res"}))
    resources, sessions, profiles, prompt = asyncio.run(go())
    assert {str(r.uri) for r in resources.resources} == {"noetic://sessions", "noetic://profiles"}
    assert '"ai_id": "res"' in sessions.contents[0].text
    assert "critical_domain" in profiles.contents[0].text
    assert "PREFLIGHT" in prompt.messages[0].content.text


def test_observe_runs_on_the_clients_model_through_sampling(server):
    from mcp.types import CreateMessageResult, TextContent

    replies = iter(
        [
            "CONFIDENCE: 0.7\nLAYERS: C02,C07,C10\nCONTENT: thinking",
            "CONFIDENCE: 0.96\nLAYERS: C02\nCONTENT: crystallized",
        ]
    )

    async def sampler(context, params):
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=next(replies)), model="host"
        )

    (result,) = call(
        server, ("observe", {"query": "why?"}), sampling_callback=sampler, mode="legacy"
    )
    body = ok(result)
    assert body["answer"] == "crystallized" and body["reason"] == "HighConfidence"
    assert body["stages"] == 2 and body["model_calls"] == 2
