"""The CASCADE engine on scripted model replies: every path, checked against the record."""

import asyncio
import json

import pytest

from noetic.cascade.engine import RunStatus, run_cascade
from noetic.events import EventKind
from noetic.llm.scripted import ScriptedProvider
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import Limits, build_context
from noetic.runtime.tracker import Tracker
from noetic.tools import tool
from noetic.tools.discovery import discover

from ..conftest import uniform


def scores(value, **kw):
    vectors = {k: {"score": v, "evidence": "seen"} for k, v in
               uniform(value, **{"engagement": 0.9, "coherence": 0.9, **kw}).items()}  # fmt: skip
    return json.dumps({"vectors": vectors, "note": "learned"})


def think(complex_=False, strategy="code"):
    return json.dumps({"approach": "look, then fix", "strategy": strategy, "complex": complex_})


def step(*calls, notes=""):
    return json.dumps({"calls": list(calls), "notes": notes})


def call(tool, purpose="look", target="know", **arguments):
    return {"tool": tool, "arguments": arguments, "purpose": purpose, "target_vector": target}


@pytest.fixture
def tracker(store):
    return Tracker(store, ProfileRegistry(store.home / "profiles"))


def go(tracker, replies, *, profile="balanced", tools=(), limits=None, task="fix the bug",
       native_tools=False):  # fmt: skip
    """A run on scripted replies; by default a model without native tool calls, so the
    investigation step is the JSON object ``step()`` writes (test_native_investigation.py
    covers the native path)."""
    session, _ = tracker.bootstrap(ai_id="m", profile=profile)
    provider = ScriptedProvider(replies, native_tools=native_tools)
    ctx = build_context(
        "cascade", tracker=tracker, provider=provider, session_id=session.id,
        tools=list(tools), limits=limits,
    )  # fmt: skip
    run = asyncio.run(run_cascade(ctx, task))
    return run, provider, session


def events(tracker, session, kind):
    return [e.data for e in tracker.store.events(session_id=session.id, kind=kind)]


@pytest.mark.subprocess
def test_straight_proceed(tracker):
    run, provider, session = go(tracker, [scores(0.9), think(), "DONE", scores(0.9)])
    assert run.status is RunStatus.COMPLETED and run.output == "DONE"
    assert (run.rounds, run.loop_exit) == (0, "proceed")
    assert [p.phase for p in run.trajectory] == ["PREFLIGHT", "POSTFLIGHT"]
    assert run.calibration["classification"] == "well_calibrated"
    assert provider.remaining == 0 and len(provider.calls) == 4
    cascade = tracker.store.get_cascade(run.cascade_id)
    assert cascade.status == "completed" and cascade.result["run"]["output"] == "DONE"
    phases = [e["phase"] for e in events(tracker, session, EventKind.PHASE_COMPLETED)]
    assert phases == ["PREFLIGHT", "THINK", "ACT", "POSTFLIGHT"]
    assert all(p["ms"] >= 0 for p in run.phases)


@pytest.mark.subprocess
def test_several_investigation_rounds_with_workspace_tools(tracker, tmp_path):
    (tmp_path / "app.py").write_text("def parse(x):\n    return int(x)  # crashes on ''\n")
    replies = [
        scores(0.5), think(),
        step(call("search_text", pattern="def parse")),
        scores(0.55),
        step(call("read_file", path="app.py")),
        scores(0.9),
        "Guard the empty string.", scores(0.9),
    ]  # fmt: skip
    run, provider, session = go(tracker, replies, tools=discover(tmp_path))
    assert run.status is RunStatus.COMPLETED and (run.rounds, run.loop_exit) == (2, "proceed")
    assert [u.tool for u in run.tool_uses] == ["search_text", "read_file"]
    assert "app.py:1: def parse(x):" in run.tool_uses[0].information
    second_check = provider.calls[5].messages[0].content
    assert "crashes on ''" in second_check  # the CHECK rests on what was found
    rows = tracker.store.investigations(session_id=session.id)
    assert [(r.tool, r.round, r.success, r.target_vector) for r in rows] == [
        ("search_text", 1, True, "know"),
        ("read_file", 2, True, "know"),
    ]


@pytest.mark.subprocess
def test_max_rounds_reached_is_said(tracker, tmp_path):
    profile = tmp_path / "quick.yaml"
    profile.write_text(
        "name: quick\ninvestigation:\n  max_rounds: 1\n  confidence_threshold: 0.65\n"
    )
    tracker.registry.import_file(profile)
    replies = [scores(0.5), think(), step(), scores(0.5), "best effort", scores(0.6)]
    run, _, _ = go(tracker, replies, profile="quick")
    assert run.status is RunStatus.COMPLETED
    assert (run.rounds, run.loop_exit) == (1, "max_rounds")
    # The tracker's CHECK at the last round proceeds on what the model has, under max_rounds.
    assert run.trajectory[1].action == "PROCEED"
    checks = tracker.store.assessments(cascade_id=run.cascade_id)
    assert checks[1].decision.rule == "max_rounds"


@pytest.mark.subprocess
def test_clarify_ends_with_the_models_questions(tracker):
    replies = [scores(0.8, clarity=0.3), json.dumps({"questions": ["Which bug?", "Where?"]})]
    run, _, _ = go(tracker, replies)
    assert run.status is RunStatus.CLARIFY and run.questions == ["Which bug?", "Where?"]
    assert tracker.store.get_cascade(run.cascade_id).status == "clarify"


@pytest.mark.subprocess
def test_delegate_ends_with_the_reason_and_needs(tracker):
    delegation = json.dumps({"reason": "needs production access", "needs": ["db credentials"]})
    run, _, _ = go(tracker, [scores(0.8, do=0.2), delegation])
    assert run.status is RunStatus.DELEGATE
    assert run.delegation.needs == ["db credentials"]
    assert tracker.store.get_cascade(run.cascade_id).result["run"]["status"] == "delegate"


@pytest.mark.subprocess
def test_reset_once_then_completes(tracker):
    replies = [scores(0.8, coherence=0.4), think(), step(), scores(0.9), "done", scores(0.9)]
    run, provider, session = go(tracker, replies)
    assert run.status is RunStatus.COMPLETED and run.resets == 1
    assert "RESET" in provider.calls[1].messages[0].content
    assert any(e.get("action") == "RESET" for e in events(tracker, session, EventKind.DECISION))


@pytest.mark.subprocess
def test_a_second_reset_is_refused(tracker):
    replies = [scores(0.8, coherence=0.4), think(), step(), scores(0.8, coherence=0.3)]
    run, _, session = go(tracker, replies)
    assert run.status is RunStatus.RESET_REFUSED and run.resets == 1
    gates = events(tracker, session, EventKind.CONSTRAINT_ENFORCED)
    assert [g["rule"] for g in gates] == ["coherence_minimum", "coherence_minimum"]
    assert gates[1]["value"] == 0.3 and gates[1]["limit"] == 0.5


@pytest.mark.subprocess
def test_engagement_gate_is_enforced_and_recorded(tracker):
    run, _, session = go(tracker, [scores(0.9, engagement=0.4), json.dumps({"questions": ["?"]})])
    assert run.status is RunStatus.CLARIFY
    (gate,) = events(tracker, session, EventKind.CONSTRAINT_ENFORCED)
    assert gate == {"rule": "engagement_gate", "value": 0.4, "limit": 0.6}


def web_search(q: str) -> str:
    """Search the web."""
    return "results"


@pytest.mark.subprocess
def test_prescribed_mode_refuses_unapproved_tools(tracker, tmp_path):
    (tmp_path / "dose.md").write_text("max 4 g/day")
    web = tool(web_search, improves_vectors=("know",))
    replies = [
        scores(0.7), think(strategy="research"),
        step(call("web_search", q="paracetamol"), call("read_file", path="dose.md")),
        scores(0.95), "Max 4 g a day.", scores(0.95),
    ]  # fmt: skip
    run, provider, _ = go(tracker, replies, profile="critical_domain",
                          tools=[web, *discover(tmp_path)])  # fmt: skip
    assert run.status is RunStatus.COMPLETED
    refused, read = run.tool_uses
    assert not refused.success and "not an approved tool" in refused.information
    assert read.success and "max 4 g/day" in read.information
    offered = provider.calls[2].messages[0].content
    assert "Only these approved tools" in offered and "web_search" not in offered


def jira(q: str) -> str:
    """Search tickets."""
    raise RuntimeError("JIRA is down")


@pytest.mark.subprocess
def test_a_plugin_that_raises_is_recorded_and_the_run_continues(tracker):
    replies = [scores(0.5), think(), step(call("jira", q="bug")), scores(0.9), "ok", scores(0.9)]
    run, _, session = go(tracker, replies, tools=[tool(jira)])
    assert run.status is RunStatus.COMPLETED
    (use,) = run.tool_uses
    assert not use.success and "RuntimeError: JIRA is down" in use.information
    assert tracker.store.investigations(session_id=session.id)[0].success is False


async def crawl() -> str:
    """Crawl slowly."""
    await asyncio.sleep(5)
    return "late"


@pytest.mark.subprocess
def test_sentinel_timeout_ends_the_run_with_a_status(tracker):
    replies = [scores(0.5), think(), step(call("crawl"))]
    run, _, session = go(tracker, replies, tools=[tool(crawl)], limits=Limits(timeout_s=0.5))
    assert run.status is RunStatus.TIMEOUT and "timeout" in run.detail
    (stop,) = events(tracker, session, EventKind.CONSTRAINT_ENFORCED)
    assert stop["rule"] == "timeout" and stop["limit"] == 0.5
    assert tracker.store.get_cascade(run.cascade_id).status == "timeout"


@pytest.mark.subprocess
def test_sentinel_tool_limit(tracker, tmp_path):
    (tmp_path / "a.txt").write_text("a")
    replies = [scores(0.5), think(), step(call("read_file", path="a.txt"),
                                          call("read_file", path="a.txt"))]  # fmt: skip
    run, _, session = go(
        tracker, replies, tools=discover(tmp_path), limits=Limits(max_tool_calls=1)
    )
    assert run.status is RunStatus.TOOL_LIMIT
    (stop,) = events(tracker, session, EventKind.CONSTRAINT_ENFORCED)
    assert (stop["rule"], stop["value"], stop["limit"]) == ("tool_limit", 2, 1)


@pytest.mark.subprocess
def test_a_reply_unparseable_twice_ends_cleanly_keeping_the_record(tracker):
    replies = [scores(0.5), think(), "let me look around", "I will look around"]
    run, _, session = go(tracker, replies)
    assert run.status is RunStatus.PARSE_FAILURE and "after one repair round" in run.detail
    cascade = tracker.store.get_cascade(run.cascade_id)
    assert cascade.status == "parse_failure"
    assert [a.assessment.phase for a in tracker.store.assessments(session_id=session.id)] == [
        "preflight"
    ]


@pytest.mark.subprocess
def test_complex_tasks_are_planned_into_llm_goals(tracker):
    plan = json.dumps({"subgoals": ["reproduce", "fix", "add a test"]})
    replies = [scores(0.9), think(complex_=True), plan, "done", scores(0.9)]
    run, _, session = go(tracker, replies)
    assert run.plan == ["reproduce", "fix", "add a test"]
    goals = tracker.store.goals(session_id=session.id)
    assert [(g.description, g.source) for g in goals] == [
        ("reproduce", "llm"), ("fix", "llm"), ("add a test", "llm")
    ]  # fmt: skip


def test_workspace_tools_cannot_escape(tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "secret.txt").write_text("s")
    read = {p.name: p for p in discover(tmp_path / "ws")}["read_file"]
    result = asyncio.run(read.call({"path": "../secret.txt"}))
    assert not result.ok and "outside the workspace" in result.error
    assert result.argument == "path" and result.retry
