"""The autonomous CASCADE: a model drives PREFLIGHT → THINK → PLAN → INVESTIGATE ⇄ CHECK → ACT
→ POSTFLIGHT, and Noetic records every step.

The state machine, in one place (each arrow is a model call):

    PREFLIGHT ─ decision ─┬─ PROCEED ───────────────────────────────┐
                          ├─ INVESTIGATE ─→ THINK → [PLAN] → INVESTIGATE ⇄ CHECK
                          ├─ CLARIFY  → the model's questions; run ends "clarify"
                          ├─ DELEGATE → the reason and what it needs; run ends "delegate"
                          └─ RESET    → back to THINK, once; a second RESET ends "reset_refused"
    INVESTIGATE ⇄ CHECK leaves on PROCEED (exit "proceed") or at the profile's max rounds
    (exit "max_rounds"); CHECK can also CLARIFY / DELEGATE / RESET as above.
    ACT → output;  POSTFLIGHT → a genuine model reassessment → delta and calibration.

THINK always runs (the strategy is chosen there, by the model); PLAN runs when the model judged
the task complex. Assessments go through the :class:`Tracker` (SQLite + JSON + reflex logs);
THINK, PLAN, ACT and the run summary go into the cascade's record; every phase is an event with
its duration. A reply that stays unusable after its repair round, a provider failure, or a
Sentinel stop ends the run with a clear status, keeping what was recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable
from contextlib import AsyncExitStack
from enum import StrEnum
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from noetic.assessment import Action, Assessment, Phase
from noetic.cascade.offer import Strategy, allowed, offer
from noetic.errors import NoeticError, ParseError, ProviderError, UsageError
from noetic.events import DecisionMade, EventKind, PhaseCompleted, PhaseEntered, Timer, ToolCalled
from noetic.frozen import Frozen
from noetic.llm.assessment_reply import assess_with_model
from noetic.llm.base import (
    TOOL_NAME,
    Request,
    ToolSpec,
    UsageTotals,
    complete_streaming,
    supports_tools,
)
from noetic.llm.structured import complete_structured
from noetic.profiles import Profile
from noetic.runtime.context import RunContext
from noetic.runtime.sentinel import SentinelStop
from noetic.runtime.tracker import Recorded
from noetic.tools.base import Tool, Toolset
from noetic.vectors import VECTOR_NAMES

M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")


class RunStatus(StrEnum):
    COMPLETED = "completed"
    CLARIFY = "clarify"
    DELEGATE = "delegate"
    RESET_REFUSED = "reset_refused"
    TIMEOUT = "timeout"
    TOOL_LIMIT = "tool_limit"
    PARSE_FAILURE = "parse_failure"
    PROVIDER_FAILURE = "provider_failure"


class Think(BaseModel):
    approach: str = Field(description="How you will approach the task, in a few sentences.")
    strategy: Strategy = Field(description="code, research, creative or general work")
    complex: bool = Field(description="True if the task needs breaking into subgoals first.")


class Plan(BaseModel):
    subgoals: list[str] = Field(min_length=1, max_length=10)


class ToolCall(BaseModel):
    tool: str
    arguments: dict[str, Any] = {}
    purpose: str = ""
    target_vector: str | None = None


class InvestigationStep(BaseModel):
    calls: list[ToolCall] = Field(default_factory=list, max_length=5)
    notes: str = ""


class Questions(BaseModel):
    questions: list[str] = Field(min_length=1)


class Delegation(BaseModel):
    reason: str
    needs: list[str] = []


class ToolUse(Frozen):
    round: int
    tool: str
    purpose: str
    target_vector: str | None
    success: bool
    information: str


class ToolGain(Frozen):
    """What a tool declared it would add to confidence, beside what the next CHECK showed: the
    round's change in confidence, shared by every tool that succeeded in the round
    (``shared_by``)."""

    round: int
    tool: str
    declared: float
    observed: float
    shared_by: int


class TrajectoryPoint(Frozen):
    phase: str
    seq: int
    vectors: dict[str, float]
    confidence: float
    action: str


class RunSettings(Frozen):
    """CASCADE's own settings; time and tool limits come from the run context."""

    max_resets: int = Field(1, ge=0)
    max_tokens: int = Field(2048, gt=0)


class CascadeRun(BaseModel):
    session_id: str
    cascade_id: str | None = None
    task: str
    profile: str
    status: RunStatus
    detail: str = ""
    output: str | None = None
    questions: list[str] = []
    delegation: Delegation | None = None
    think: list[Think] = []
    plan: list[str] = []
    rounds: int = 0
    loop_exit: str | None = None
    resets: int = 0
    tool_uses: list[ToolUse] = []
    tool_gains: list[ToolGain] = []
    trajectory: list[TrajectoryPoint] = []
    calibration: dict[str, Any] | None = None
    phases: list[dict[str, Any]] = []
    usage: UsageTotals | None = None


class _Ended(Exception):
    """Internal: the run reached an end other than completion."""

    def __init__(self, status: RunStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def run_cascade(
    ctx: RunContext, task: str, *, settings: RunSettings | None = None
) -> CascadeRun:
    """Run one task through the CASCADE on the context's model; see the module docstring.

    ``ctx`` needs a session and a provider. Its tools (and those of its MCP servers) are the
    whole list offered to the model: to add one to the built-ins, pass
    ``[*discover(workspace), yours]``.
    """
    settings = settings or RunSettings()
    if ctx.session_id is None:
        raise UsageError(
            "a CASCADE run needs a session", fix="build_context(..., session_id=session.id)"
        )
    session = ctx.store.get_session(ctx.session_id)
    profile = ctx.profile or ctx.tracker.profile_of(session)
    run = CascadeRun(session_id=session.id, task=task, profile=profile.name, status="completed")
    engine = _Engine(ctx, task, profile, settings, run)
    with ctx.scope():
        async with AsyncExitStack() as stack:
            engine.tools = Toolset(await ctx.open_tools(stack))
            try:
                await engine.go()
            except _Ended as end:
                engine.close(end.status, end.detail)
            except SentinelStop as stop:
                status = RunStatus.TIMEOUT if stop.rule == "timeout" else RunStatus.TOOL_LIMIT
                engine.close(status, f"Sentinel stopped the run: {stop}")
            except ParseError as exc:
                engine.close(RunStatus.PARSE_FAILURE, f"unusable model reply: {exc.message}")
            except ProviderError as exc:
                engine.close(RunStatus.PROVIDER_FAILURE, str(exc))
    run.usage = engine.usage()
    return run


class _Engine:
    def __init__(
        self, ctx: RunContext, task: str, profile: Profile, settings: RunSettings, run: CascadeRun
    ) -> None:
        self.ctx = ctx
        self.task = task
        self.provider = ctx.model
        self.tracker = ctx.tracker
        self.session_id = run.session_id
        self.profile = profile
        self.sentinel = ctx.sentinel
        self.settings = settings
        self.run = run
        self.tools = Toolset([])
        self.findings: list[str] = []
        self.last: Recorded | None = None
        self._usage_from = ctx.usage()

    # the state machine ----------------------------------------------------------------

    async def go(self) -> None:
        decision = await self.assess(Phase.PREFLIGHT)
        while True:
            await self.handle_stop(decision.action)
            think = await self.phase("THINK", self.think())
            if think.complex:
                await self.phase("PLAN", self.plan(think))
            decision = await self.investigate_until_ready(think.strategy)
            if decision.action in (Action.CLARIFY, Action.DELEGATE, Action.RESET):
                continue  # handle_stop at the top ends the run or restarts from THINK
            break
        output = await self.phase("ACT", self.act())
        self.run.output = output
        await self.assess(Phase.POSTFLIGHT, findings=f"Your output:\n{output}")

    async def handle_stop(self, action: Action) -> None:
        if action == Action.CLARIFY:
            asked = await self.structured(
                "List the questions whose answers you need before you can do this task well.",
                Questions,
            )
            self.run.questions = asked.questions
            raise _Ended(RunStatus.CLARIFY, "the model needs clarification")
        if action == Action.DELEGATE:
            self.run.delegation = await self.structured(
                "Explain why this task is beyond you, and what (people, tools, access, "
                "information) it would need.",
                Delegation,
            )
            raise _Ended(RunStatus.DELEGATE, self.run.delegation.reason)
        if action == Action.RESET:
            if self.run.resets >= self.settings.max_resets:
                raise _Ended(
                    RunStatus.RESET_REFUSED,
                    f"a RESET was asked after {self.run.resets} already; refused",
                )
            self.run.resets += 1
            self.findings.append("You decided to RESET: start your thinking over from scratch.")
            self.decide("RESET", f"restarting from THINK ({self.run.resets})")

    async def investigate_until_ready(self, strategy: Strategy) -> Any:
        decision = self.last.decision  # type: ignore[union-attr]  # set by PREFLIGHT
        max_rounds = self.profile.investigation.max_rounds
        restarting = decision.action == Action.RESET  # after a RESET, investigate afresh
        while restarting or decision.action == Action.INVESTIGATE:
            restarting = False
            if max_rounds is not None and self.run.rounds >= max_rounds:
                self.run.loop_exit = "max_rounds"
                return decision
            self.run.rounds += 1
            before = decision.confidence
            await self.phase("INVESTIGATE", self.investigate(strategy, decision.gaps))
            decision = await self.assess(Phase.CHECK, findings="\n\n".join(self.findings))
            self.compare_gains(decision.confidence - before)
        if decision.rule == "max_rounds":  # the tracker's CHECK at the profile's last round
            self.run.loop_exit = "max_rounds"
        else:
            self.run.loop_exit = "proceed" if decision.action == Action.PROCEED else None
        return decision

    # phases -----------------------------------------------------------------------------

    async def assess(self, phase: Phase, findings: str = "") -> Any:
        name = phase.value.upper()
        previous = self.last.assessment.assessment if self.last else None

        async def work() -> Recorded:
            a: Assessment = await self.call(
                assess_with_model(
                    self.provider, self.task, phase, self.profile,
                    previous if phase != Phase.PREFLIGHT else None, findings=findings,
                    review=self.profile.postflight_review if phase == Phase.POSTFLIGHT else None,
                    record=self.tracker.record_for(self.session_id),
                )
            )  # fmt: skip
            if phase == Phase.PREFLIGHT:
                recorded = self.tracker.preflight(self.session_id, self.task, a)
                self.run.cascade_id = recorded.cascade.id
                self.ctx.start_task(recorded.cascade.id)
                return recorded
            if phase == Phase.CHECK:
                return self.tracker.check(self.session_id, a)
            done = self.tracker.postflight(
                self.session_id, a, extra={"run": self.summary(RunStatus.COMPLETED)}
            )
            self.run.calibration = done.calibration.model_dump(mode="json")
            return done

        self.last = await self.phase(name, work())
        rec = self.last.assessment
        self.sentinel.observe(self.last.decision, rec.assessment.vectors)
        self.run.trajectory.append(
            TrajectoryPoint(
                phase=name,
                seq=rec.seq,
                vectors=rec.assessment.vectors,
                confidence=rec.decision.confidence,
                action=rec.decision.action.value,
            )
        )
        return self.last.decision

    async def think(self) -> Think:
        result = await self.structured(
            "Think about how to approach this task before doing it. Say which kind of work it is "
            "(code, research, creative or general) and whether it is complex enough to break "
            "into subgoals.",
            Think,
        )
        self.run.think.append(result)
        return result

    async def plan(self, think: Think) -> None:
        plan = await self.structured(
            f"Your approach: {think.approach}\nBreak the task into 2 to 7 concrete subgoals.",
            Plan,
        )
        self.run.plan = plan.subgoals
        for goal in plan.subgoals:
            self.tracker.store.add_goal(
                self.session_id, goal, source="llm", cascade_id=self.run.cascade_id
            )

    async def investigate(self, strategy: Strategy, gaps: tuple[str, ...]) -> None:
        tools = list(self.tools)
        brief = offer(tools, self.profile, gaps, strategy)
        runnable = Toolset(allowed(tools, self.profile))
        problems: dict[int, str] = {}  # native calls that cannot run, by position, and why
        step: InvestigationStep | None = None
        if supports_tools(self.provider) and len(runnable):
            try:
                step, problems = await self.native_step(brief, list(runnable), gaps)
            except ProviderError as exc:
                if exc.kind != "unsupported":
                    raise  # the endpoint refused tools: ask for the JSON object instead
        if step is None:
            step = await self.structured(
                f"{brief}\n\nChoose up to 5 tool calls that would close your gaps (tool name, "
                "arguments, purpose, the vector it targets), or none if reasoning alone will do.",
                InvestigationStep,
            )
        if step.notes:
            self.findings.append(step.notes)
        for i, call in enumerate(step.calls):
            self.sentinel.tool_call()
            if i in problems:
                self.record_tool(call, False, f"error: {problems[i]}")
                continue
            if call.tool in self.tools.tools and call.tool not in runnable.tools:
                why = (
                    f"refused: {call.tool!r} is not an approved tool under profile "
                    f"{self.profile.name!r}"
                )
                self.record_tool(call, False, why)
                continue
            try:
                result = await asyncio.wait_for(
                    runnable.call(call.tool, call.arguments), self.sentinel.remaining()
                )
            except TimeoutError:
                self.sentinel.timed_out()
            self.record_tool(call, result.ok, result.for_model(), ms=result.ms)

    async def native_step(
        self, brief: str, tools: list[Tool], gaps: tuple[str, ...]
    ) -> tuple[InvestigationStep, dict[int, str]]:
        """The investigation step as native tool calls: the runnable tools offered in the
        provider's own format (names made wire-safe), up to 5 of the calls the model makes, and
        the problems of those that cannot run (malformed arguments, an unknown tool)."""
        wire = wire_names([t.name for t in tools])
        specs = tuple(
            ToolSpec(name=wire[t.name], description=t.description, parameters=t.parameters)
            for t in tools
        )
        real = {w: name for name, w in wire.items()}
        prompt = (
            f"TASK: {self.task}\n\n{brief}\n\nCall up to 5 of the tools that would close your "
            "gaps, or none if reasoning alone will do; say in a sentence what you expect to "
            "learn."
        )
        if self.findings:
            prompt += "\n\nSo far:\n" + "\n\n".join(self.findings[-10:])
        request = Request.of(
            prompt, max_tokens=self.settings.max_tokens, tools=specs, tool_choice="auto"
        )
        reply = await self.call(self.provider.complete(request))
        by_name = {t.name: t for t in tools}
        calls = []
        made = reply.tool_calls[:5]
        problems = {i: c.error for i, c in enumerate(made) if c.error is not None}
        for c in made:
            name = real.get(c.name, c.name)
            hints = by_name[name].improves_vectors if name in by_name else ()
            target = next((v for v in hints if v in gaps), None)
            calls.append(
                ToolCall(
                    tool=name,
                    arguments=c.arguments,
                    purpose=reply.text.strip()[:300],
                    target_vector=target,
                )
            )
        return InvestigationStep(calls=calls, notes=reply.text.strip()), problems

    async def act(self) -> str:
        plan = "\n".join(f"- {g}" for g in self.run.plan)
        prompt = (
            f"Now do the task.\nTASK: {self.task}\n"
            + (f"Your plan:\n{plan}\n" if plan else "")
            + ("What you found:\n" + "\n\n".join(self.findings) if self.findings else "")
            + "\nGive the complete result."
        )
        request = Request.of(prompt, max_tokens=self.settings.max_tokens)
        reply = await self.call(complete_streaming(self.provider, request, self.ctx.on_text))
        return reply.text

    # plumbing ---------------------------------------------------------------------------

    def decide(self, action: str, reason: str) -> None:
        self.ctx.emit(EventKind.DECISION, DecisionMade(action=action, reason=reason))

    def compare_gains(self, observed: float) -> None:
        """Set what each tool that succeeded this round declared beside the change in
        confidence the CHECK after it showed, and say so as a decision."""
        declared = {t.name: t.confidence_gain for t in self.tools}
        used = list(
            dict.fromkeys(
                u.tool
                for u in self.run.tool_uses
                if u.round == self.run.rounds and u.success and u.tool in declared
            )
        )
        shared = {"round": self.run.rounds, "observed": round(observed, 6), "shared_by": len(used)}
        self.run.tool_gains += [ToolGain(tool=n, declared=declared[n], **shared) for n in used]
        if used:
            said = ", ".join(f"{n} +{declared[n]:.2f}" for n in used)
            self.decide(
                "tool-gain",
                f"round {self.run.rounds}: declared {said}; the CHECK moved confidence by "
                f"{observed:+.2f}",
            )

    def record_tool(
        self, call: ToolCall, success: bool, information: str, ms: float | None = None
    ) -> None:
        use = ToolUse(
            round=self.run.rounds,
            tool=call.tool,
            purpose=call.purpose,
            target_vector=call.target_vector if call.target_vector else None,
            success=success,
            information=information,
        )
        self.run.tool_uses.append(use)
        self.findings.append(f"[{call.tool} {json.dumps(call.arguments)}] {information}")
        target = use.target_vector if use.target_vector in VECTOR_NAMES else None
        self.tracker.store.add_investigation(
            self.session_id,
            cascade_id=self.run.cascade_id,
            round=use.round,
            note=call.purpose,
            tool=call.tool,
            purpose=call.purpose,
            target_vector=target,
            success=success,
            information_gained=information[:2000],
        )
        self.ctx.emit(
            EventKind.TOOL_CALL,
            ToolCalled(tool=call.tool, success=success, round=use.round, ms=ms),
        )

    async def structured(self, instruction: str, model_cls: type[M]) -> M:
        prompt = f"TASK: {self.task}\n\n{instruction}"
        if self.findings:
            prompt += "\n\nSo far:\n" + "\n\n".join(self.findings[-10:])
        request = Request.of(prompt, max_tokens=self.settings.max_tokens)
        return await self.call(complete_structured(self.provider, request, model_cls))

    async def call(self, awaitable: Awaitable[T]) -> T:
        """A model call bounded by the Sentinel's remaining time."""
        try:
            return await asyncio.wait_for(awaitable, self.sentinel.remaining())
        except TimeoutError:
            self.sentinel.timed_out()

    async def phase(self, name: str, awaitable: Any) -> Any:
        self.sentinel.remaining()
        timer = Timer()
        self.ctx.emit(EventKind.PHASE_ENTERED, PhaseEntered(phase=name))
        result = await awaitable
        self.run.phases.append({"phase": name, "ms": timer.ms})
        self.ctx.emit(EventKind.PHASE_COMPLETED, PhaseCompleted(phase=name, ms=timer.ms))
        return result

    def usage(self) -> UsageTotals | None:
        """This run's model calls so far: tokens and cost (None for an unrecorded provider)."""
        return self.ctx.usage_since(self._usage_from)

    def summary(self, status: RunStatus) -> dict[str, Any]:
        self.run.usage = self.usage()
        data = self.run.model_dump(mode="json", exclude={"trajectory", "calibration"})
        return {**data, "status": status.value}

    def close(self, status: RunStatus, detail: str) -> None:
        self.run.status = status
        self.run.detail = detail
        if self.run.cascade_id is None:
            return
        with contextlib.suppress(NoeticError):  # already closed by a POSTFLIGHT
            self.tracker.end_task(self.session_id, status.value, {"run": self.summary(status)})


def wire_names(names: list[str]) -> dict[str, str]:
    """A name each wire format accepts for every tool (``guide.get_workflow_guidance`` →
    ``guide_get_workflow_guidance``), unique among them."""
    out: dict[str, str] = {}
    used: set[str] = set()
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_-]", "_", name)[:60] or "tool"
        candidate, n = base, 1
        while candidate in used or not TOOL_NAME.match(candidate):
            n += 1
            candidate = f"{base}_{n}"
        used.add(candidate)
        out[name] = candidate
    return out
