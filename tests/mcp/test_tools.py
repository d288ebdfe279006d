"""The workflow and monitoring tools through a real in-process MCP client: a happy path and a
bad input each. Model-backed tools are in test_model_tools.py, the CLI bridge in
test_cli_bridge.py, resources and the prompt in test_resources.py."""

import re

import pytest

from noetic.assessment import Action, Decision, Phase
from noetic.mcp.results import _next_step
from noetic.store.current import agents_with_current_sessions
from noetic.vectors import VECTOR_NAMES

from ..conftest import uniform
from ._client import call, err, ok

GOOD = uniform(0.85, engagement=0.9, coherence=0.9)
LOW = uniform(0.5, engagement=0.9, coherence=0.9)


@pytest.mark.subprocess
def test_the_full_agent_transaction(server, _isolated_home):
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
    assert agents_with_current_sessions(_isolated_home) == {}  # the CLI's are not touched
    assert "TASK: fix the login bug" in prompt["prompt"]
    assert all(v in prompt["prompt"] for v in VECTOR_NAMES)
    assert pre["decision"]["action"] == "INVESTIGATE"
    assert pre["next_step"].startswith("investigate (") and "submit_check" in pre["next_step"]
    assert state["open_cascade"]["task"] == "fix the login bug"
    assert state["open_cascade"]["id"] == pre["cascade_id"]
    assert check_prompt["phase"] == "check" and '"know": 0.5' in check_prompt["prompt"]
    assert (check["phase"], check["seq"], check["task"]) == ("check", 2, "fix the login bug")
    assert set(check["carried"]) == set(VECTOR_NAMES) - {"know", "context"}
    assert check["vectors"] == {**LOW, "know": 0.9, "context": 0.9}  # completed by carry-over
    assert post_prompt["phase"] == "postflight"
    assert post["calibration"]["classification"] == "underconfident"
    assert "record_outcome" in post["next_step"]
    assert summary["tasks"][0]["status"] == "completed"
    self_report = report["self_consistency"]
    assert self_report["completed_tasks"] == 1
    assert self_report["classifications"] == {"underconfident": 1}
    # No outcome was recorded, so the outcome metrics say so instead of showing numbers.
    assert report["outcomes"]["tasks"] == 0
    assert report["outcomes"]["metrics"]["brier"]["value"] is None
    assert report["outcomes"]["metrics"]["brier"]["reason"] == "no outcomes"
    assert "insufficient data" in report["outcomes"]["metrics"]["ece"]["reason"]


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("bootstrap_session", {"profile": "nope"}, "unknown profile 'nope'"),
        ("bootstrap_session", {"ai_id": " "}, "ai_id must not be empty"),
        ("resume_previous_session", {"limit": 0}, "between 1 and 100"),
        ("get_session_summary", {"session_id": "s_unknown"}, "unknown session"),
        ("get_epistemic_state", {"session_id": "s_unknown"}, "unknown session"),
        ("execute_preflight", {"task": " "}, "needs the task"),
        ("submit_preflight_assessment", {"task": "t", "vectors": {**GOOD, "know": 1.7}}, "outside"),
        ("submit_preflight_assessment", {"task": "t", "vectors": {**GOOD, "do": -0.1}}, "outside"),
        ("submit_preflight_assessment", {"task": "t", "vectors": {"know": 0.5}}, "needs all 13"),
        (
            "submit_preflight_assessment",
            {"task": "t", "vectors": {**GOOD, "wisdom": 0.5}},
            "unknown vector 'wisdom'",
        ),
        (
            "submit_preflight_assessment",
            {"task": " ", "vectors": GOOD},
            "task description is empty",
        ),
        (
            "submit_preflight_assessment",
            {"task": "t", "vectors": GOOD, "recommended_action": "JUMP"},
            "unknown action 'JUMP'",
        ),
        ("submit_preflight_assessment", {"task": "t", "vectors": "high"}, "valid dictionary"),
        ("execute_check", {}, "PREFLIGHT first"),
        ("submit_check_assessment", {"vectors": {"know": "high"}}, "must be a number"),
        ("submit_check_assessment", {"vectors": {"know": 0.9}}, "PREFLIGHT first"),
        ("execute_postflight", {}, "PREFLIGHT first"),
        ("submit_postflight_assessment", {"vectors": GOOD}, "PREFLIGHT first"),
        ("submit_postflight_assessment", {"vectors": GOOD, "session_id": "s_x"}, "unknown session"),
        ("get_calibration_report", {"bins": 0}, "greater than or equal to 1"),
        ("get_calibration_report", {"at": "act"}, "'adversarial_review'"),
        ("get_calibration_report", {"by": "colour"}, "'persona'"),
        (
            "submit_preflight_assessment",
            {"task": "t", "vectors": GOOD, "p_success": 1.5},
            "p_success is 1.5, outside [0, 1]",
        ),
        ("execute_postflight", {"review": "harsh"}, "'adversarial'"),
        ("get_calibration_report", {"since_days": 0}, "greater than 0"),
        ("record_outcome", {"score": 1.0}, "no task"),
        ("record_outcome", {"score": 1.5}, "less than or equal to 1"),
        ("record_outcome", {"score": 1.0, "task_id": "c_missing"}, "unknown cascade"),
        ("check_drift_monitor", {"window": 2}, "between 5 and 1000"),
        ("query_goal_orchestrator", {"session_id": "s_unknown"}, "unknown session"),
        ("generate_goals", {}, "no assessment"),
        ("get_workflow_guidance", {"phase": "dance"}, "unknown phase"),
    ],
)
@pytest.mark.slow
def test_bad_input_is_a_tool_error_that_names_the_problem(server, tool, args, message):
    boot, result = call(server, ("bootstrap_session", {}), (tool, args))
    ok(boot)
    assert message in err(result)


def test_a_tool_needing_a_session_before_any_bootstrap_says_what_to_call(server):
    (result,) = call(server, ("get_epistemic_state", {}))
    assert "call bootstrap_session first" in err(result)


@pytest.mark.subprocess
def test_a_second_postflight_finds_the_task_closed(server):
    results = call(
        server,
        ("bootstrap_session", {}),
        ("submit_preflight_assessment", {"task": "t", "vectors": GOOD}),
        ("submit_postflight_assessment", {"vectors": GOOD}),
        ("submit_postflight_assessment", {"vectors": GOOD}),
    )
    assert "already completed" in err(results[-1])


@pytest.mark.subprocess
def test_a_preflight_while_a_task_is_open_needs_abandon_open(server):
    results = call(
        server,
        ("bootstrap_session", {}),
        ("submit_preflight_assessment", {"task": "first", "vectors": GOOD}),
        ("submit_preflight_assessment", {"task": "second", "vectors": GOOD}),
        ("submit_preflight_assessment", {"task": "second", "vectors": GOOD, "abandon_open": True}),
        ("get_session_summary", {}),
    )
    assert "still open" in err(results[2])
    ok(results[3])
    tasks = ok(results[4])["tasks"]
    assert [(t["task"], t["status"]) for t in tasks] == [("first", "abandoned"), ("second", "open")]


@pytest.mark.subprocess
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
        ("get_workflow_guidance", {"phase": "outcome"}),
    )
    previous = ok(results[2])
    assert [s["ai_id"] for s in previous["sessions"]] == ["a"]
    assert previous["recall"] is None
    assert "13 vectors" in ok(results[3])["text"]
    assert "POSTFLIGHT" in ok(results[4])["text"]
    assert ok(results[5])["text"].startswith("CHECK")
    assert "record_outcome" in ok(results[6])["text"]


@pytest.mark.subprocess
def test_resuming_with_a_task_recalls_the_relevant_earlier_task(server):
    steps = [("bootstrap_session", {"ai_id": "r"})]
    for task in ("fix the login bug in the auth module", "write a haiku about autumn leaves"):
        steps += [
            ("submit_preflight_assessment", {"task": task, "vectors": LOW}),
            ("submit_postflight_assessment", {"vectors": LOW}),
        ]
    steps.append(("resume_previous_session", {"task": "the login form rejects valid passwords"}))
    steps.append(("resume_previous_session", {"task": "renew the office lease"}))
    steps.append(("resume_previous_session", {"task": "login is broken", "explain": True}))
    results = call(server, *steps)
    recall = ok(results[-3])["recall"]
    assert recall["considered"] == 2 and recall["candidates"] is None
    # no limit given: the need-based strategy decides (the latest assessment: need 0.5, light)
    assert recall["need"] == 0.5 and recall["strategy"] == "light"
    assert [c["task"] for c in recall["chosen"]] == ["fix the login bug in the auth module"]
    assert "chosen: rank 1" in recall["chosen"][0]["why"]
    assert "login bug" in recall["context"] and "haiku" not in recall["context"]
    off_topic = ok(results[-2])["recall"]
    assert off_topic["chosen"] == [] and off_topic["context"] == ""
    assert "nothing relevant" in off_topic["warnings"][0]
    explained = ok(results[-1])["recall"]
    assert explained["candidates"][0]["task"] == recall["chosen"][0]["task"]


@pytest.mark.subprocess
def test_outcomes_beliefs_and_drift(server):
    steps = [("bootstrap_session", {"ai_id": "o"})]
    for i in range(25):
        steps += [
            ("submit_preflight_assessment", {"task": f"t{i}", "vectors": GOOD}),
            ("submit_postflight_assessment", {"vectors": GOOD}),
            ("record_outcome", {"score": 0.0, "source": "test", "evidence": "tests failed"}),
        ]
    steps += [
        ("get_calibration_report", {"ai_id": "o", "bins": 2}),
        ("query_bayesian_beliefs", {"ai_id": "o"}),
        ("check_drift_monitor", {"ai_id": "o"}),
        ("check_drift_monitor", {"ai_id": "o", "window": 5}),
    ]
    results = call(server, *steps)
    outcome = ok(results[3])
    assert outcome["score"] == 0.0 and outcome["predicted_preflight"] > 0.7
    report, beliefs, drift, drift_small = (ok(r) for r in results[-4:])
    assert report["outcomes"]["tasks"] == 25
    assert report["outcomes"]["metrics"]["signed_bias"]["value"] > 0.7
    assert beliefs["beliefs"][0]["direction"] == "overconfident"
    assert beliefs["beliefs"][0]["credible"] is True
    # a steady bias is the report's and the guardian's business, not drift
    assert not drift["calibration_drift"] and drift["reason"].startswith("no drift")
    assert drift["alpha"] == 0.05 and "at most 0.05" in drift["guarantee"]
    assert drift_small["n"] == 25 and drift_small["bias_recent"] > 0.7
    assert drift_small["calibration_drift"] is False  # consistently overconfident: no drift


def test_without_outcomes_beliefs_are_the_prior_and_say_so(server):
    (result,) = call(server, ("query_bayesian_beliefs", {"ai_id": "nobody"}))
    beliefs = ok(result)
    assert beliefs["tasks"] == 0
    assert all(b["evidence"] == 0 and not b["credible"] for b in beliefs["beliefs"])
    assert {b["direction"] for b in beliefs["beliefs"]} == {"none"}


@pytest.mark.parametrize("action", list(Action))
def test_every_decision_comes_with_a_next_step_naming_a_tool(action):
    decision = Decision(
        action=action, confidence=0.5, threshold=0.7, rule="r", reason="x", gaps=("know",)
    )
    step = _next_step(Phase.CHECK, decision)
    assert re.search(r"\b(submit|execute)_\w+|explain", step), step
    assert _next_step(Phase.POSTFLIGHT, decision).endswith("call record_outcome")


@pytest.mark.subprocess
def test_p_success_and_an_adversarial_review_over_mcp(server):
    steps = [("bootstrap_session", {"ai_id": "p"})]
    for i, review in enumerate(("standard", "adversarial")):
        steps += [
            ("submit_preflight_assessment", {"task": f"t{i}", "vectors": GOOD, "p_success": 0.8}),
            ("execute_postflight", {"review": review}),
            (
                "submit_postflight_assessment",
                {"vectors": GOOD, "p_success": 0.9 - 0.3 * i, "review": review},
            ),
            ("record_outcome", {"score": 0.0, "source": "test"}),
        ]
    steps.append(("get_calibration_report", {"ai_id": "p", "by": "agent"}))
    results = [ok(r) for r in call(server, *steps)]
    standard_prompt, adversarial_prompt = results[2], results[6]
    assert "find bugs" not in standard_prompt["prompt"]
    assert "find bugs" in adversarial_prompt["prompt"]
    assert "review='adversarial'" in adversarial_prompt["next_step"]
    report = results[-1]["outcomes"]
    assert report["stated"] == "p_success" and report["summary"]["mean_stated"] == 0.8
    assert report["by_phase"]["postflight"]["mean_stated"] == 0.9
    assert report["by_phase"]["adversarial_review"]["mean_stated"] == pytest.approx(0.6)
    assert report["reviews"][0]["difference"]["value"] == pytest.approx(0.3)
    assert [g["value"] for g in report["groups"]] == ["p"]
