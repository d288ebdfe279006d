"""A Claude Code session as one trace: its hooks, each a process of its own, export spans that
name the same parents, and a loopback OTLP receiver gets the whole tree with the evaluations."""

from __future__ import annotations

import pytest

from noetic.assessment import Assessment
from noetic.calibration import record_outcome
from noetic.runtime import telemetry
from noetic.runtime.telemetry import span_id, trace_id

from .._otlp import attributes, spans
from ..conftest import uniform
from .test_hooks import CLAUDE_SESSION, hook, session_of, start, tracker


def _bash(project, name: str, command: str, call: str, **extra):
    return hook(name, name.replace("-", " ").title().replace(" ", ""), project,
                tool_name="Bash", tool_input={"command": command}, tool_use_id=call,
                **extra)  # fmt: skip


@pytest.mark.subprocess
def test_a_claude_code_session_is_one_trace_of_its_tasks_tools_and_evaluations(
    collector, project, home, _isolated_home
):
    start(project)
    sid = session_of(_isolated_home)
    t = tracker(_isolated_home)
    try:
        opened = t.preflight(
            sid, "fix it", Assessment.from_input("preflight", uniform(0.7) | {"p_success": 0.8})
        )
        task = opened.cascade.id
        _bash(project, "pre-tool-use", "ls -la", "toolu_ls")
        _bash(project, "post-tool-use", "ls -la", "toolu_ls", tool_response={"stdout": ""})
        denied = _bash(project, "pre-tool-use", "rm -rf ~", "toolu_rm")
        assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
        record_outcome(t.store, task, score=1.0, source="test", evidence="12 passed")
        t.postflight(sid, Assessment.from_input("postflight", uniform(0.8)))
    finally:
        t.store.close()
    hook("stop", "Stop", project, stop_hook_active=False)
    hook("session-end", "SessionEnd", project, reason="exit")
    assert telemetry.flush()

    found = spans(collector)
    assert {s.trace_id for s in found} == {trace_id(sid).to_bytes(16, "big")}, [
        (s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex()) for s in found
    ]
    by_id = {int.from_bytes(s.span_id, "big"): s for s in found}
    agent = by_id[span_id("agent", sid)]
    assert agent.name == "invoke_agent claude-code" and not agent.parent_span_id
    assert attributes(agent)["noetic.session_id"] == sid
    assert attributes(agent)["gen_ai.conversation.id"] == CLAUDE_SESSION
    assert attributes(agent)["gen_ai.agent.name"] == "claude-code"
    span = by_id[span_id("task", task)]
    assert span.name == "noetic.task"
    assert int.from_bytes(span.parent_span_id, "big") == span_id("agent", sid)
    tools = {
        attributes(s)["gen_ai.tool.call.id"]: s for s in found if s.name == "execute_tool Bash"
    }
    assert set(tools) == {"toolu_ls", "toolu_rm"}
    for call, decision in (("toolu_ls", "allow"), ("toolu_rm", "deny")):
        assert int.from_bytes(tools[call].parent_span_id, "big") == span_id("task", task)
        assert attributes(tools[call])["noetic.gate.decision"] == decision
    assert (
        attributes(tools["toolu_rm"])["noetic.gate.reason"]
        == (denied["hookSpecificOutput"]["permissionDecisionReason"])
    )
    assert tools["toolu_rm"].status.code == tools["toolu_rm"].status.STATUS_CODE_ERROR
    assert tools["toolu_ls"].start_time_unix_nano <= tools["toolu_ls"].end_time_unix_nano
    evaluations = {
        attributes(e)["gen_ai.evaluation.name"]: attributes(e)
        for e in span.events
        if e.name == "gen_ai.evaluation.result"
    }
    assert evaluations["noetic.p_success.preflight"]["gen_ai.evaluation.score.value"] == 0.8
    post = evaluations["noetic.p_success.postflight"]
    assert post["gen_ai.evaluation.explanation"].startswith("no P(success) stated")
    outcome = evaluations["noetic.outcome"]
    assert outcome["gen_ai.evaluation.score.value"] == 1.0
    assert outcome["gen_ai.evaluation.score.label"] == "success"
    assert outcome["gen_ai.evaluation.explanation"] == "test: 12 passed"


@pytest.mark.subprocess
def test_a_task_is_exported_once_and_a_later_outcome_under_it(
    collector, project, home, _isolated_home
):
    start(project)
    sid = session_of(_isolated_home)
    t = tracker(_isolated_home)
    try:
        task = t.preflight(sid, "t", Assessment.from_input("preflight", uniform(0.7))).cascade.id
        t.postflight(sid, Assessment.from_input("postflight", uniform(0.8)))
        hook("stop", "Stop", project, stop_hook_active=False)
        hook("stop", "Stop", project, stop_hook_active=False)
        record_outcome(t.store, task, score=0.0, source="human", evidence="it broke")
    finally:
        t.store.close()
    hook("session-end", "SessionEnd", project, reason="exit")
    assert telemetry.flush()
    found = spans(collector)
    assert [s.name for s in found].count("noetic.task") == 1
    [late] = [s for s in found if s.name == "noetic.outcome"]
    assert int.from_bytes(late.parent_span_id, "big") == span_id("task", task)
    [event] = late.events
    assert attributes(event)["gen_ai.evaluation.score.label"] == "failure"
    assert not (_isolated_home / "traces" / f"{sid}.json").exists()  # the session is done


@pytest.mark.subprocess
def test_no_trace_is_written_without_an_endpoint(project, home, _isolated_home, monkeypatch):
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_ENDPOINT", raising=False)
    start(project)
    _bash(project, "pre-tool-use", "ls", "toolu_1")
    assert not (_isolated_home / "traces").exists()
