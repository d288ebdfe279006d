"""The four nodes: triage, reason, act, synthesize. Each reads and changes one :class:`Run`.

* **triage** — the model's semantic safety judgement, the tools this query needs, the first
  depth, and a direct answer when the query is simple; a reply that cannot be used stops the
  run before anything acts (fail closed).
* **reason** — one model step with native tool calls, at the current depth; in adapt mode the
  ``switch_mode`` tool is on offer, and reaching the depth's iteration cap deepens a fast run or
  forces a final answer.
* **act** — runs the calls: independent reading calls together, acting calls (writes, shell) one
  at a time in order; every failure goes back to the model as an error result; the circuit
  breaker disables a tool that keeps failing.
* **synthesize** — settles the answer, saves the workspace, and starts memory work in the
  background, never waiting for it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from noetic.agent import modes, prompts
from noetic.agent.epistemic import irreversible
from noetic.agent.safety import refused_request
from noetic.agent.state import (
    State,
    add_message,
    finish_tools,
    learn_insight,
    record_observation,
    record_thought,
    set_tool_calls,
)
from noetic.agent.toolbox import Toolbox
from noetic.errors import NoeticError, ParseError, ProviderError
from noetic.events import ConstraintEnforced, DecisionMade, EventKind, Timer, ToolCalled
from noetic.llm.base import (
    Completion,
    Message,
    Request,
    ToolCall,
    ToolCallResult,
    complete_streaming,
    parse_tool_call,
    stream_completion,
    supports_tools,
)
from noetic.llm.structured import complete_structured
from noetic.runtime.context import RunContext
from noetic.tools.base import ToolResult
from noetic.tools.shellgate import load_policy

if TYPE_CHECKING:  # loop.py imports this module; memory and the gate are built by it
    from noetic.agent.epistemic import EpistemicGate
    from noetic.agent.memory import AgentMemory
    from noetic.agent.state import AgentSettings
    from noetic.tools.file_tools import SandboxRoot
    from noetic.tools.shellgate import Policy

Say = Callable[[str], None]


@dataclass
class Run:
    """One agent run: its context, settings, state, tools and what it has left to do."""

    ctx: RunContext
    settings: AgentSettings
    state: State
    toolbox: Toolbox
    say: Say
    memory: AgentMemory | None = None  # when memory is on
    background: set[asyncio.Task[Any]] = field(default_factory=set)
    status: str | None = None  # set when the run stops early: refused, budget, timeout…
    resumed: bool = False
    streamed: bool = False  # the answer's text already went out as it was written
    gate: EpistemicGate | None = None  # when the run is wrapped in CASCADE
    policy: Policy | None = None  # the shell gate's, when the run may write or run commands
    root: SandboxRoot | None = None

    @property
    def done(self) -> bool:
        return self.status is not None or self.state.execution.response is not None

    def decide(self, action: str, reason: str, rule: str | None = None) -> None:
        self.ctx.emit(EventKind.DECISION, DecisionMade(action=action, reason=reason, rule=rule))

    def enforce(self, rule: str, value: float, limit: float) -> None:
        self.ctx.emit(
            EventKind.CONSTRAINT_ENFORCED, ConstraintEnforced(rule=rule, value=value, limit=limit)
        )

    def stop(self, status: str, answer: str) -> None:
        self.status = status
        self.state.execution.stop_reason = status
        self.state.execution.response = answer

    @property
    def model(self) -> _Counted:
        """The run's model, every reply's tokens counted against the budget."""
        return _Counted(self.ctx.model, self.state)

    async def ask(
        self, request: Request, on_text: Callable[[str], None] | None = None
    ) -> Completion:
        """One model call under the run's clock; text deltas to ``on_text`` as they arrive."""
        return await asyncio.wait_for(
            complete_streaming(self.model, request, on_text), self.ctx.sentinel.remaining()
        )

    def over_budget(self) -> bool:
        budget = self.settings.max_tokens
        if budget is None or self.state.execution.tokens < budget:
            return False
        self.enforce("token_budget", self.state.execution.tokens, budget)
        return True


class _Counted:
    """A provider whose replies add their tokens to the run's count."""

    def __init__(self, inner: Any, state: State) -> None:
        self.inner = inner
        self.state = state
        self.name = inner.name
        self.model = inner.model
        self.native_tools = getattr(inner, "native_tools", False)

    async def complete(self, request: Request) -> Completion:
        reply: Completion = await self.inner.complete(request)
        self._count(reply)
        return reply

    async def stream(self, request: Request) -> AsyncIterator[str | Completion]:
        async for item in stream_completion(self.inner, request):
            if isinstance(item, Completion):
                self._count(item)
            yield item

    def _count(self, reply: Completion) -> None:
        self.state.execution.tokens += reply.usage.input_tokens + reply.usage.output_tokens


# triage ----------------------------------------------------------------------------------------


async def triage(run: Run) -> None:
    state, settings = run.state, run.settings
    policy = run.policy or load_policy(*settings.policy_files)
    refused = refused_request(state.query, settings.workspace, policy)
    if refused is not None:  # the gate's judgement comes first: no model can overrule it
        run.decide("refuse", f"the shell gate: {refused.explain()}", refused.rule)
        run.stop("refused", prompts.GATE_REFUSAL.format(why=refused.explain()))
        return
    if run.gate is not None:
        try:
            await run.gate.preflight(run)
        except ParseError as exc:
            run.decide("stop", f"PREFLIGHT reply unusable: {exc.message}", "preflight-unusable")
            run.stop("failed", f"The PREFLIGHT assessment could not be read: {exc.message}")
            return
    request = Request.of(
        state.query,
        system=prompts.TRIAGE_SYSTEM.format(tools=run.toolbox.catalogue()) + _about(run),
        max_tokens=1024,
    )
    try:
        decision = await asyncio.wait_for(
            complete_structured(run.model, request, prompts.Triage), run.ctx.sentinel.remaining()
        )
    except ParseError as exc:
        run.decide("stop", f"triage reply unusable: {exc.message}", "triage-unusable")
        run.stop("failed", f"The request could not be triaged, so nothing was run: {exc.message}")
        return
    if not decision.safe:
        reason = decision.safety_reason.strip() or "it gave no reason"
        run.decide("refuse", f"the model's verdict: {reason}", "semantic-safety")
        model = f"{run.model.name}:{run.model.model}"
        run.stop("refused", prompts.UNSAFE_ANSWER.format(model=model, reason=reason))
        return
    known = set(run.toolbox.names)
    chosen = [t for t in dict.fromkeys(decision.tools) if t in known]
    unknown = [t for t in decision.tools if t not in known]
    if settings.tools_fixed:
        chosen = run.toolbox.names  # the caller named the tools: all of them are on offer
    state.execution.tools = chosen
    state.workspace.objective = state.workspace.objective or state.query
    chosen_depth = "deep" if decision.mode == "deep" else "fast"
    depth = chosen_depth if settings.mode == "adapt" else settings.mode
    state.execution.depth = depth  # type: ignore[assignment]
    note = f"tools: {', '.join(chosen) or 'none'}; depth {depth}"
    if unknown:
        note += f"; ignored unknown tools: {', '.join(unknown)}"
    run.decide(f"mode:{depth}", note, "triage")
    if decision.answer and not decision.tools and not run.resumed:
        state.execution.response = decision.answer
        state.execution.stop_reason = "direct"
        run.decide("answer", "simple request answered in triage", "direct-answer")


# reason ----------------------------------------------------------------------------------------


def _about(run: Run) -> str:
    """What the profile says about the user, for the model; empty with memory off or nothing
    known."""
    if run.memory is None or not run.memory.profiles:
        return ""
    about = run.state.profile.summary()
    return f"\nWhat you know about the user:\n{about}" if about else ""


def _system(run: Run, depth: modes.Depth) -> str:
    memory = _about(run)
    if run.resumed and run.state.workspace.summary():
        memory += "\n\n" + prompts.RESUMED.format(progress=run.state.workspace.summary())
    return prompts.REASON_SYSTEM.format(
        name=run.settings.name,
        workspace=run.settings.workspace,
        depth=depth.instruction,
        memory=memory,
    )


def _cap(run: Run) -> int:
    depth = modes.depth_of(run.state.execution.depth)
    return int(min(run.settings.max_iterations, depth.max_iterations))


async def reason(run: Run) -> None:
    ex = run.state.execution
    if run.over_budget():
        spent = f"Stopped: the token budget of {run.settings.max_tokens} is spent."
        run.stop("budget", _last_text(run) or spent)
        return
    if ex.iteration >= _cap(run):
        if (
            run.settings.mode == "adapt"
            and ex.depth == "fast"
            and ex.iteration < run.settings.max_iterations
        ):
            _switch(run, "deep", f"no answer after {ex.iteration} fast iterations", "iteration-cap")
        else:
            run.enforce("max_iterations", ex.iteration, _cap(run))
            await _final_answer(run)
            return
    ex.iteration += 1
    depth = modes.depth_of(ex.depth)
    tools = run.toolbox.specs(t for t in ex.tools if t not in run.toolbox.open)
    if run.settings.mode == "adapt":
        tools = (*tools, modes.SWITCH_SPEC)
    request = Request(
        system=_system(run, depth),
        messages=tuple(ex.messages),
        max_tokens=depth.max_tokens,
        tools=tools,
        tool_choice="auto" if tools else None,
    )
    said: list[str] = []

    def on_text(text: str) -> None:
        said.append(text)
        run.say(text)

    if tools and not supports_tools(run.model):
        reply = await _json_step(run, request)
    else:
        reply = await run.ask(request, on_text)
    add_message(run.state, reply.message())
    record_thought(run.state, ex.iteration, reply.text, ex.depth)
    if reply.tool_calls:
        if said:
            run.say("\n")  # what the model said before its calls, kept apart from what follows
        set_tool_calls(run.state, list(reply.tool_calls))
        return
    run.streamed = bool(said)
    ex.response = reply.text or "(the model gave an empty answer)"
    ex.stop_reason = "max_tokens" if reply.stop_reason == "max_tokens" else "answered"


async def _json_step(run: Run, request: Request) -> Completion:
    """One reason step for a provider without native tool calls: the tools are described in
    the prompt, the reply is one JSON object, and earlier calls and results travel as text."""
    catalogue = "\n".join(
        f"- {t.name}: {t.description}\n  arguments (JSON schema): {json.dumps(t.parameters)}"
        for t in request.tools
    )
    asked = Request(
        system=f"{request.system}\n\n{prompts.JSON_TOOLS.format(tools=catalogue)}",
        messages=tuple(_as_text(m) for m in request.messages),
        max_tokens=request.max_tokens,
    )
    step = await asyncio.wait_for(
        complete_structured(run.model, asked, prompts.JsonStep), run.ctx.sentinel.remaining()
    )
    calls = tuple(
        parse_tool_call(
            f"json_{run.state.execution.iteration}_{i}", c.name, c.arguments, request.tools
        )
        for i, c in enumerate(step.tool_calls, 1)
    )
    return Completion(
        text="" if calls else (step.answer or ""),
        tool_calls=calls,
        stop_reason="tool_use" if calls else "end",
        model=run.model.model,
        provider=run.model.name,
    )


def _as_text(message: Message) -> Message:
    """A turn with tool calls or results, written out for a model that reads only text."""
    if message.tool_calls:
        called = [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ]
        return Message(role="assistant", content=json.dumps({"tool_calls": called}))
    if message.tool_results:
        lines = [
            f"[{r.call_id}] {'error: ' if r.is_error and not r.content.startswith('error') else ''}"
            f"{r.content}"
            for r in message.tool_results
        ]
        text = "Tool results:\n" + "\n".join(lines)
        return Message(role="user", content=f"{text}\n\n{message.content}".strip())
    return message


async def _final_answer(run: Run) -> None:
    ex, depth = run.state.execution, modes.depth_of(run.state.execution.depth)
    now = Message(role="user", content=prompts.FINAL_NOW)
    request = Request(
        system=_system(run, depth), messages=(*ex.messages, now), max_tokens=depth.max_tokens
    )
    reply = await run.ask(request)
    add_message(run.state, now)
    add_message(run.state, reply.message())
    run.stop("max_iterations", reply.text or "(no answer within the iteration limit)")


def _switch(run: Run, depth: str, reason: str, rule: str) -> bool:
    ex = run.state.execution
    if depth not in modes.DEPTHS or depth == ex.depth:
        return False
    ex.depth = depth  # type: ignore[assignment]
    run.decide(f"mode:{depth}", reason, rule)
    return True


# act -------------------------------------------------------------------------------------------


def _groups(run: Run, calls: list[ToolCall]) -> list[list[ToolCall]]:
    """Consecutive reading calls run together; each acting call runs alone, in order."""
    groups: list[list[ToolCall]] = []
    for call in calls:
        if run.toolbox.acting(call.name) or not groups or run.toolbox.acting(groups[-1][0].name):
            groups.append([call])
        else:
            groups[-1].append(call)
    return groups


async def act(run: Run) -> None:
    ex = run.state.execution
    calls = ex.pending_calls
    results: dict[str, ToolCallResult] = {}
    records: list[dict[str, Any]] = []
    for group in _groups(run, calls):
        done = await asyncio.gather(*(_one(run, call) for call in group))
        for call, (result, record) in zip(group, done, strict=True):
            results[call.id] = result
            records.append(record)
        if run.status is not None:
            break
    for call in calls:  # a call not run (the run stopped) still gets an answer
        results.setdefault(
            call.id,
            ToolCallResult(call_id=call.id, content="not run: the run stopped", is_error=True),
        )
    add_message(run.state, Message.results(*(results[c.id] for c in calls)))
    finish_tools(run.state, records)


async def _one(run: Run, call: ToolCall) -> tuple[ToolCallResult, dict[str, Any]]:
    ex = run.state.execution
    timer = Timer()
    record: dict[str, Any] = {"id": call.id, "tool": call.name, "arguments": call.arguments}
    if call.name in run.toolbox.open:  # no longer offered; say why rather than "unknown"
        result, _ = await run.toolbox.call(call.name, call.arguments)
        content, ok = result.for_model(), False
    elif call.error:
        content, ok = f"error: {call.error}", False
    elif call.name == modes.SWITCH_TOOL:
        wanted = str(call.arguments.get("mode", ""))
        if wanted not in modes.DEPTHS:
            content, ok = f"error: mode must be 'fast' or 'deep', not {wanted!r}", False
        else:
            _switch(run, wanted, str(call.arguments.get("reason", "asked by the model")), "model")
            content, ok = f"depth is now {wanted}", True
    else:
        try:
            run.ctx.sentinel.tool_call()
        except Exception:
            run.stop("tool_limit", _last_text(run) or "Stopped: the tool-call limit was reached.")
            return ToolCallResult(
                call_id=call.id, content="not run: tool limit", is_error=True
            ), record
        held = await _held(run, call)
        if held is not None:
            result, opened = ToolResult(tool=call.name, ok=False, error=held), False
        else:
            result, opened = await run.toolbox.call(call.name, call.arguments)
        content, ok = result.for_model(), result.ok
        if result.refused:
            record["refused"] = result.refused
        if run.gate is not None:
            run.gate.investigated(run, call, ok, content)
        if opened:
            run.enforce("circuit_breaker", run.toolbox.failures[call.name], run.toolbox.threshold)
            if run.settings.mode == "adapt":
                _switch(
                    run,
                    "deep",
                    f"{call.name} failed {run.toolbox.threshold} times in a row",
                    "circuit-breaker",
                )
    record.update(ok=ok, ms=timer.ms, result=content[:500])
    run.ctx.emit(
        EventKind.TOOL_CALL,
        ToolCalled(
            tool=call.name,
            success=ok,
            round=ex.iteration,
            ms=timer.ms,
            error=None if ok else content[:300],
        ),
    )
    summary = json.dumps(call.arguments, ensure_ascii=False)[:200]
    record_observation(
        run.state, f"{call.name}({summary}) → {'ok' if ok else 'failed'}: {content[:300]}"
    )
    return ToolCallResult(call_id=call.id, content=content, is_error=not ok), record


async def _held(run: Run, call: ToolCall) -> str | None:
    """The epistemic gate's refusal of an irreversible call, if it holds it."""
    if run.gate is None or run.root is None or run.policy is None:
        return None  # the three are set together, when the run is wrapped in CASCADE
    tool = run.toolbox.by_wire.get(call.name)
    effect = irreversible(
        call.model_copy(update={"name": tool.name}) if tool else call,
        run.root,
        run.settings.scratch,
        run.policy,
    )
    if effect is None:
        return None
    refusal: str | None = await run.gate.allow(run, call, effect)
    return refusal


def _last_text(run: Run) -> str:
    return next(
        (
            m.content
            for m in reversed(run.state.execution.messages)
            if m.role == "assistant" and m.content
        ),
        "",
    )


# synthesize ------------------------------------------------------------------------------------


def _all_refused(run: Run) -> None:
    """A run whose every tool call the shell gate refused did nothing it was asked: refused."""
    ex = run.state.execution
    calls = [c for c in ex.completed_calls if c.get("tool") != modes.SWITCH_TOOL]
    if run.status is not None or not calls or not all(c.get("refused") for c in calls):
        return
    rules = list(dict.fromkeys(str(c["refused"]) for c in calls))
    run.decide(
        "refuse", f"the shell gate refused every tool call ({len(calls)}): {', '.join(rules)}",
        rules[0],
    )  # fmt: skip
    run.status = ex.stop_reason = "refused"


async def synthesize(run: Run) -> None:
    ex = run.state.execution
    _all_refused(run)
    answer = ex.response or ""
    if answer and not run.streamed:
        run.say(answer)
    if run.status is None:
        learn_insight(run.state, f"answered: {answer[:300]}")
    opened = run.ctx.task_id is not None  # a request the shell gate refused opened no task
    if run.gate is not None and opened and run.ctx.session_id and run.status != "failed":
        try:
            await run.gate.postflight(run)
        except (ParseError, NoeticError) as exc:
            run.decide("stop", f"POSTFLIGHT not recorded: {exc}", "postflight-unusable")
    if run.memory is not None and run.memory.profiles:
        task = asyncio.ensure_future(run.memory.after_run(run))
        run.background.add(task)
        task.add_done_callback(run.background.discard)


__all__ = ["ProviderError", "Run", "act", "reason", "synthesize", "triage"]
