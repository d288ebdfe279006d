"""The agent's four nodes and its modes, with a scripted model deciding by what it is asked."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from noetic.agent import AgentSettings, modes, run_agent
from noetic.agent.loop import EDGES, mermaid
from noetic.errors import ProviderError
from noetic.events import Event, EventKind
from noetic.llm.base import Completion, Request, ToolCall
from noetic.llm.scripted import ScriptedProvider, calling
from noetic.runtime.context import Limits, build_context
from noetic.tools.base import Tool, tool
from noetic.tools.file_tools import file_tools


def triage(tools: list[str] = (), mode: str = "fast", answer: str | None = None, safe: bool = True,
           reason: str = "") -> str:  # fmt: skip
    return json.dumps(
        {
            "safe": safe,
            "safety_reason": reason,
            "tools": list(tools),
            "mode": mode,
            "answer": answer,
        }
    )


def is_triage(request: Request) -> bool:
    return (request.system or "").startswith("You triage")


class Script:
    """Triage's reply, then reason replies in order; every request kept."""

    def __init__(self, triage_reply: str, *steps: Any) -> None:
        self.triage_reply = triage_reply
        self.steps = list(steps)
        self.reason_requests: list[Request] = []

    def __call__(self, request: Request) -> Any:
        if is_triage(request):
            return self.triage_reply
        self.reason_requests.append(request)
        if not self.steps:
            raise AssertionError(f"unexpected reason request {len(self.reason_requests)}")
        step = self.steps.pop(0)
        return step(request) if callable(step) else step


def make(store, script: Script, tools: list[Tool], **settings: Any):
    provider = ScriptedProvider(script)
    limits = settings.pop("limits", Limits())
    ctx = build_context("agent", home=store.home, provider=provider, tools=tools, limits=limits)
    events: list[Event] = []
    ctx.bus.subscribe(events.append)
    return ctx, events, AgentSettings(**settings)


def run(ctx, query, settings, **kw):
    return asyncio.run(run_agent(ctx, query, settings, **kw))


def phases(events: list[Event]) -> list[str]:
    return [e.data["phase"] for e in events if e.kind == EventKind.PHASE_ENTERED]


def decisions(events: list[Event]) -> list[tuple[str, str | None]]:
    return [(e.data["action"], e.data["rule"]) for e in events if e.kind == EventKind.DECISION]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("the answer is 42\n")
    return tmp_path / "ws"


def test_the_flow_is_data_a_reader_can_print() -> None:
    assert set(EDGES) == {"triage", "reason", "act", "synthesize"}
    assert "reason -->|tool calls| act" in mermaid()


def test_a_simple_query_is_answered_in_triage(store, ws) -> None:
    script = Script(triage(answer="2 + 2 = 4"))
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws)
    result = run(ctx, "What is 2+2?", settings)
    assert (result.answer, result.status, result.iterations) == ("2 + 2 = 4", "done", 0)
    assert phases(events) == ["triage", "synthesize"]
    assert script.reason_requests == []
    finished = [e for e in events if e.kind == EventKind.RUN_FINISHED]
    assert finished[0].data["status"] == "done"


def test_an_unsafe_intent_is_refused_before_any_tool(store, ws) -> None:
    ran: list[str] = []

    def wipe(path: str) -> str:
        """Delete a folder.

        Args:
            path: the folder
        """
        ran.append(path)
        return "deleted"

    script = Script(triage(tools=["wipe"], safe=False, reason="it destroys someone else's data"))
    ctx, events, settings = make(store, script, [tool(wipe)], workspace=ws)
    result = run(ctx, "wipe the backups of my coworker", settings)
    assert result.status == "refused"
    assert "destroys someone else's data" in result.answer
    assert ("refuse", "semantic-safety") in decisions(events)
    assert ran == [] and script.reason_requests == []


def test_an_unusable_triage_reply_stops_the_run_closed(store, ws) -> None:
    script = Script("I think this is fine, go ahead")
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws)
    result = run(ctx, "delete build/", settings)
    assert result.status == "failed"
    assert "could not be triaged" in result.answer
    assert ("stop", "triage-unusable") in decisions(events)
    assert script.reason_requests == [] and result.tool_calls == []


def test_tools_picked_by_triage_are_offered_called_and_results_returned(store, ws) -> None:
    def answer_from_result(request: Request) -> str:
        results = request.messages[-1].tool_results
        return "From the notes: " + results[0].content.split("the answer is ")[1].strip()

    script = Script(
        triage(tools=["file_read", "no_such_tool"]),
        calling(("file_read", {"path": "notes.txt"})),
        answer_from_result,
    )
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws)
    result = run(ctx, "What do my notes say?", settings)
    assert result.answer == "From the notes: 42"
    first = script.reason_requests[0]
    assert [t.name for t in first.tools] == ["file_read", modes.SWITCH_TOOL]
    assert result.tools_offered == ["file_read"]
    assert ("mode:fast", "triage") in decisions(events)
    assert "ignored unknown tools: no_such_tool" in next(
        e.data["reason"] for e in events if e.kind == EventKind.DECISION
    )
    assert phases(events) == ["triage", "reason", "act", "reason", "synthesize"]
    (call,) = [e for e in events if e.kind == EventKind.TOOL_CALL]
    assert (call.data["tool"], call.data["success"], call.data["round"]) == ("file_read", True, 1)


def test_failures_go_back_to_the_model_as_structured_results(store, ws) -> None:
    def flaky(n: int) -> str:
        """Fail.

        Args:
            n: a number
        """
        raise RuntimeError("disk on fire")

    script = Script(
        triage(tools=["flaky", "file_read"]),
        calling(("flaky", {"n": "not a number"}), ("flaky", {"n": 1}), ("file_read", '{"path": ')),
        "gave up",
    )
    ctx, events, settings = make(store, script, [tool(flaky), *file_tools(ws)], workspace=ws)
    result = run(ctx, "try it", settings)
    assert result.answer == "gave up"
    results = script.reason_requests[1].messages[-1].tool_results
    assert [r.is_error for r in results] == [True, True, True]
    assert "argument 'n'" in results[0].content
    assert "RuntimeError: disk on fire" in results[1].content
    assert "not valid JSON" in results[2].content
    assert [e.data["success"] for e in events if e.kind == EventKind.TOOL_CALL] == [False] * 3


@pytest.mark.subprocess
def test_independent_reads_run_together_and_acting_calls_in_order(store, ws) -> None:
    started: list[str] = []
    both = asyncio.Event()

    async def probe(name: str) -> str:
        """Wait until both probes run at once.

        Args:
            name: which probe
        """
        started.append(name)
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 2)  # sequential calls would time out here
        return f"{name} saw both"

    script = Script(
        triage(tools=["probe", "file_write"]),
        calling(
            ("probe", {"name": "a"}),
            ("probe", {"name": "b"}),
            ("file_write", {"path": "out.txt", "content": "first"}),
            ("file_write", {"path": "out.txt", "content": "second"}),
        ),
        "done",
    )
    ctx, _, settings = make(store, script, [tool(probe), *file_tools(ws)], workspace=ws)
    run(ctx, "probe and write", settings)
    results = script.reason_requests[1].messages[-1].tool_results
    assert [r.content for r in results[:2]] == ["a saw both", "b saw both"]
    assert (ws / "out.txt").read_text() == "second"


def test_the_circuit_breaker_stops_calls_to_a_failing_tool(store, ws) -> None:
    runs: list[int] = []

    def broken(n: int) -> str:
        """Always fails.

        Args:
            n: attempt
        """
        runs.append(n)
        raise OSError("backend down")

    script = Script(
        triage(tools=["broken"]),
        *[calling(("broken", {"n": i})) for i in range(1, 5)],
        lambda r: f"deep={('Mode: deep' in (r.system or ''))}",
    )
    ctx, events, settings = make(
        store, script, [tool(broken)], workspace=ws, breaker_threshold=3, max_iterations=10
    )
    result = run(ctx, "use the backend", settings)
    assert runs == [1, 2, 3]  # the 4th call never reached the tool
    fourth = script.reason_requests[4].messages[-1].tool_results[0]
    assert "disabled for the rest of this run after 3 failures" in fourth.content
    enforced = [e.data for e in events if e.kind == EventKind.CONSTRAINT_ENFORCED]
    assert enforced == [{"rule": "circuit_breaker", "value": 3.0, "limit": 3.0}]
    assert ("mode:deep", "circuit-breaker") in decisions(events)
    # the open tool is no longer offered, and the switch shows in what the model is asked
    assert "broken" not in [t.name for t in script.reason_requests[4].tools]
    assert result.answer == "deep=True"


def test_the_model_switching_depth_changes_the_next_request(store, ws) -> None:
    script = Script(
        triage(tools=["file_read"], mode="fast"),
        calling(("switch_mode", {"mode": "deep", "reason": "needs a plan"})),
        calling(("switch_mode", {"mode": "sideways"})),
        "planned answer",
    )
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws)
    result = run(ctx, "refactor the project", settings)
    before, after, _ = script.reason_requests
    assert "Mode: fast" in before.system and before.max_tokens == modes.FAST.max_tokens
    assert "Mode: deep" in after.system and after.max_tokens == modes.DEEP.max_tokens
    assert ("mode:deep", "model") in decisions(events)
    bad = script.reason_requests[2].messages[-1].tool_results[0]
    assert bad.is_error and "must be 'fast' or 'deep'" in bad.content
    assert result.depth == "deep" and result.answer == "planned answer"


def test_adapt_deepens_a_fast_run_that_reaches_its_cap(store, ws) -> None:
    loop = [calling(("file_list", {})) for _ in range(4)]
    script = Script(triage(tools=["file_list"], mode="fast"), *loop, "found it")
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws)
    result = run(ctx, "look around", settings)
    assert ("mode:deep", "iteration-cap") in decisions(events)
    systems = [r.system or "" for r in script.reason_requests]
    assert ["Mode: deep" in s for s in systems] == [False, False, False, True, True]
    assert result.iterations == 5 and result.status == "done"


def test_fast_mode_is_fixed_and_capped_with_a_forced_final_answer(store, ws) -> None:
    loop = [calling(("file_list", {})) for _ in range(3)]
    final = lambda r: "best so far" if not r.tools else "tools were offered"  # noqa: E731
    script = Script(triage(tools=["file_list"], mode="deep"), *loop, final)
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws, mode="fast")
    result = run(ctx, "look around", settings)
    assert all(modes.SWITCH_TOOL not in [t.name for t in r.tools] for r in script.reason_requests)
    assert all("Mode: fast" in (r.system or "") for r in script.reason_requests)
    assert (result.status, result.answer, result.iterations) == ("max_iterations", "best so far", 3)
    assert "no steps left" in script.reason_requests[-1].messages[-1].content
    assert {"rule": "max_iterations", "value": 3.0, "limit": 3.0} in [
        e.data for e in events if e.kind == EventKind.CONSTRAINT_ENFORCED
    ]


def test_deep_mode_starts_deep_whatever_triage_says(store, ws) -> None:
    script = Script(triage(mode="fast", tools=["file_read"]), "answer")
    ctx, _, settings = make(store, script, file_tools(ws), workspace=ws, mode="deep")
    result = run(ctx, "analyse", settings)
    assert "Mode: deep" in script.reason_requests[0].system
    assert result.depth == "deep"


def test_the_token_budget_ends_the_run(store, ws) -> None:
    script = Script(triage(tools=["file_list"]), *[calling(("file_list", {})) for _ in range(5)])
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws, max_tokens=40)
    result = run(ctx, "list " + "word " * 30, settings)
    assert result.status == "budget"
    assert result.tokens >= 40
    assert any(
        e.data["rule"] == "token_budget" for e in events if e.kind == EventKind.CONSTRAINT_ENFORCED
    )


def test_a_provider_failure_ends_the_run_with_its_message(store, ws) -> None:
    down = ProviderError("connection refused", provider="x", model="y", kind="connection")
    script = Script(triage(tools=["file_list"]), down)

    def raising(request: Request) -> Any:
        reply = script(request)
        if isinstance(reply, BaseException):
            raise reply
        return reply

    provider = ScriptedProvider(raising)
    ctx = build_context("agent", home=store.home, provider=provider, tools=file_tools(ws))
    ctx.provider.policy = ctx.provider.policy.model_copy(update={"max_attempts": 1})
    result = run(ctx, "list", AgentSettings(workspace=ws))
    assert result.status == "error"
    assert "connection refused" in result.answer


def test_every_node_is_an_event_with_its_timing(store, ws) -> None:
    script = Script(triage(tools=["file_list"]), calling(("file_list", {})), "ok")
    ctx, events, settings = make(store, script, file_tools(ws), workspace=ws)
    run(ctx, "list", settings)
    entered = [e for e in events if e.kind == EventKind.PHASE_ENTERED]
    completed = [e for e in events if e.kind == EventKind.PHASE_COMPLETED]
    assert [e.data["phase"] for e in entered] == [e.data["phase"] for e in completed]
    assert all(e.engine == "agent" for e in events)
    assert all(e.data["ms"] >= 0 for e in completed)
    stored = store.events(kind="phase_completed")
    assert len(stored) == len(completed)


def test_an_empty_or_huge_query_is_refused(store, ws) -> None:
    from noetic.errors import ValidationError

    ctx, _, settings = make(store, Script(triage()), [], workspace=ws)
    with pytest.raises(ValidationError, match="empty"):
        run(ctx, "   ", settings)
    with pytest.raises(ValidationError):
        run(ctx, "x" * 1_000_000, settings)


def test_a_tool_call_scripted_as_completion_with_text_keeps_the_text(store, ws) -> None:
    reply = Completion(
        text="Let me look.",
        tool_calls=(ToolCall(id="c1", name="file_list", arguments={}),),
        stop_reason="tool_use",
        model="m",
        provider="p",
    )
    script = Script(triage(tools=["file_list"]), reply, "done")
    ctx, _, settings = make(store, script, file_tools(ws), workspace=ws)
    run(ctx, "list", settings)
    assistant = script.reason_requests[1].messages[-2]
    assert assistant.content == "Let me look." and assistant.tool_calls[0].id == "c1"


def test_a_provider_without_native_tool_calls_gets_a_json_object_path(store, ws) -> None:
    seen: list[Request] = []

    def model(request: Request) -> str:
        if is_triage(request):
            return triage(tools=["file_read"])
        seen.append(request)
        assert not request.tools  # nothing the provider cannot take
        if len(seen) == 1:
            assert "- file_read:" in request.system and '"tool_calls"' in request.system
            return json.dumps(
                {"tool_calls": [{"name": "file_read", "arguments": {"path": "notes.txt"}}]}
            )
        results = request.messages[-1].content
        assert results.startswith("Tool results:\n[json_1_1]")
        return json.dumps({"answer": "notes: " + results.split("the answer is ")[1].split()[0]})

    provider = ScriptedProvider(model, native_tools=False)
    ctx = build_context("agent", home=store.home, provider=provider, tools=file_tools(ws))
    result = run(ctx, "What do my notes say?", AgentSettings(workspace=ws))
    assert result.answer == "notes: 42"
    assert [c["tool"] for c in result.tool_calls] == ["file_read"]
    assert seen[1].messages[-2].content.startswith('{"tool_calls"')


def test_a_refusal_says_it_was_the_models_verdict_why_and_how_to_go_on(store, ws) -> None:
    for given, said in [("it reads another user's mail", "it reads another user's mail"),
                        ("", "it gave no reason")]:  # fmt: skip
        script = Script(triage(tools=[], safe=False, reason=given))
        ctx, _, settings = make(store, script, [], workspace=ws)
        result = run(ctx, "open Bob's inbox", settings)
        assert result.status == "refused"
        model = f"{ctx.model.name}:{ctx.model.model}"
        assert result.answer.startswith(
            f"Refused: the model ({model}) judged this request unsafe at triage: {said}. "
            "Nothing was run."
        )
        assert "rephrase it" in result.answer and "--approve ask" in result.answer
        assert "the request's intent is unsafe" not in result.answer
