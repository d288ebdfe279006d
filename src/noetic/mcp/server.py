"""The MCP server: the seed's 21 tools, two resources, one prompt.

Every tool is a thin call into the functions the CLI uses (the :class:`Tracker`, the store,
the reports) and returns a pydantic model, so clients get ``structuredContent``. Noetic's errors
come back as tool errors whose text names the problem and the fix.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial, wraps
from pathlib import Path
from typing import Annotated, Any, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, ConfigDict, Field

from noetic.assessment import Assessment, Phase
from noetic.beliefs import DriftReport
from noetic.cascade.engine import CascadeRun
from noetic.cascade.goals import threshold_goals
from noetic.cascade.reports import (
    BasicCalibrationReport,
    SessionSummary,
    basic_calibration_report,
    session_summary,
)
from noetic.cascade.tracker import EpistemicState, Postflight, Recorded, Tracker
from noetic.errors import NoeticError, ValidationError
from noetic.guardian import BeliefsReport, CalibrationReport, Filters, calibration_report
from noetic.guardian import check_drift_monitor as drift_report
from noetic.guardian import query_bayesian_beliefs as beliefs_report
from noetic.guardian import record_outcome as record_task_outcome
from noetic.mcp import cli_bridge, guidance
from noetic.observer.chain import ChainResult
from noetic.profiles import Profile, ProfileRegistry
from noetic.recall.engine import RecallResult
from noetic.store import Store
from noetic.store.files import read_current_session, write_current_session
from noetic.store.outcomes import OutcomeRecord
from noetic.store.records import GoalRecord, SessionRecord

F = TypeVar("F", bound=Callable[..., Any])

Scores = Annotated[
    dict[str, Any],
    Field(
        description='Scores by vector: {"know": 0.8, ...} or {"know": {"score": 0.8, '
        '"rationale": "...", "evidence": "..."}, ...}. Fractions in [0, 1].'
    ),
]
SessionId = Annotated[
    str | None,
    Field(description="Session id from bootstrap_session (default: the current session)."),
]


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class Bootstrapped(Frozen):
    session: SessionRecord
    profile: Profile
    next_step: str


class PromptOut(Frozen):
    session_id: str
    phase: str
    prompt: str
    next_step: str


class Resumed(Frozen):
    sessions: list[SessionRecord]
    recall: RecallResult | None


class Goals(Frozen):
    session_id: str
    goals: list[GoalRecord]


class Text(Frozen):
    text: str


class CalibrationOut(Frozen):
    outcomes: CalibrationReport
    self_consistency: BasicCalibrationReport


class AiAnswer(Frozen):
    answer: str
    provider: str
    model: str


def _tool_errors(fn: F) -> F:
    """Noetic's errors become tool errors the calling agent can read and act on."""

    @wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except NoeticError as exc:
            raise ToolError(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


def build_server(home: Path) -> MCPServer:
    """An MCP server over the store at ``home``."""
    store = Store(home)
    tracker = Tracker(store, ProfileRegistry(home / "profiles"))
    server = MCPServer(
        "noetic",
        instructions=guidance.INTRODUCTION + "\n\n" + guidance.workflow_guidance(),
    )

    def sid(session_id: str | None) -> str:
        if session_id:
            return store.get_session(session_id).id
        remembered = read_current_session(home)
        if remembered is None:
            raise ValidationError(
                "no session_id given and no current session", fix="call bootstrap_session first"
            )
        return store.get_session(remembered).id

    def tool(description: str) -> Callable[[F], F]:
        def register(fn: F) -> F:
            server.add_tool(_tool_errors(fn), name=fn.__name__, description=description)
            return fn

        return register

    def prompt_for(phase: Phase, session_id: str | None, task: str | None) -> PromptOut:
        s = sid(session_id)
        return PromptOut(
            session_id=s,
            phase=phase.value,
            prompt=tracker.prompt(s, phase, task),
            next_step=f"answer it, then call submit_{phase.value}_assessment",
        )

    def assessment(phase: Phase, vectors: dict[str, Any], action: str | None, note: str) -> Any:
        data: dict[str, Any] = {"vectors": vectors, "note": note}
        if action:
            data["recommended_action"] = action
        return Assessment.from_input(phase, data)

    @tool(
        "Open a Noetic session and choose its profile (explicit name, else by ai_model, else "
        "by domain). Call once per working session; keep the returned session id."
    )
    async def bootstrap_session(
        ai_id: str = "agent",
        session_type: str | None = None,
        profile: str | None = None,
        ai_model: str | None = None,
        domain: str | None = None,
        project: str | None = None,
    ) -> Bootstrapped:
        session, chosen = tracker.bootstrap(
            ai_id=ai_id, profile=profile, ai_model=ai_model, domain=domain, project=project
        )
        write_current_session(home, session.id)
        return Bootstrapped(
            session=session,
            profile=chosen,
            next_step="call execute_preflight with the task you are about to attempt",
        )

    @tool(
        "Pick up where you left off: given the task you are about to start, recall the most "
        "relevant earlier tasks (semantic and epistemic match, well-calibrated only, within a "
        "token budget) as a context block; without a task, list your recent sessions."
    )
    async def resume_previous_session(
        task: str | None = None,
        ai_id: str | None = None,
        limit: int = 5,
        budget: int | None = None,
    ) -> Resumed:
        if not 1 <= limit <= 100:
            raise ValidationError("limit must be between 1 and 100", field="limit", value=limit)
        recalled = None
        if task:
            from noetic.cli.recall import recall_for

            recalled = recall_for(tracker, task, ai_id=ai_id, limit=limit, budget=budget)
        return Resumed(sessions=store.list_sessions(limit=limit, ai_id=ai_id), recall=recalled)

    @tool(
        "Summarise a session: its tasks, how many assessments and investigations each had, "
        "the last decision and the calibration of finished tasks."
    )
    async def get_session_summary(session_id: SessionId = None) -> SessionSummary:
        return session_summary(store, sid(session_id))

    @tool(
        "Where a session stands: the open task, the latest assessment and decision, and what "
        "to do next."
    )
    async def get_epistemic_state(session_id: SessionId = None) -> EpistemicState:
        return tracker.state(sid(session_id))

    @tool(
        "Get the PREFLIGHT self-assessment prompt for a task. Records nothing; answer it and "
        "call submit_preflight_assessment."
    )
    async def execute_preflight(task: str, session_id: SessionId = None) -> PromptOut:
        return prompt_for(Phase.PREFLIGHT, session_id, task)

    @tool(
        "Record your PREFLIGHT (all 13 vectors) for a task; opens the task and returns the "
        "decision: INVESTIGATE, PROCEED, CLARIFY, DELEGATE or RESET."
    )
    async def submit_preflight_assessment(
        task: str,
        vectors: Scores,
        session_id: SessionId = None,
        recommended_action: str | None = None,
        note: str = "",
        abandon_open: bool = False,
    ) -> Recorded:
        a = assessment(Phase.PREFLIGHT, vectors, recommended_action, note)
        return tracker.preflight(sid(session_id), task, a, abandon_open=abandon_open)

    @tool("Get the CHECK prompt for the open task (after investigating). Records nothing.")
    async def execute_check(session_id: SessionId = None) -> PromptOut:
        return prompt_for(Phase.CHECK, session_id, None)

    @tool(
        "Record a CHECK: only the vectors that changed are needed; the rest carry over. "
        "Returns the decision."
    )
    async def submit_check_assessment(
        vectors: Scores,
        session_id: SessionId = None,
        recommended_action: str | None = None,
        note: str = "",
    ) -> Recorded:
        a = assessment(Phase.CHECK, vectors, recommended_action, note)
        return tracker.check(sid(session_id), a)

    @tool("Get the POSTFLIGHT prompt for the open task (after the work). Records nothing.")
    async def execute_postflight(session_id: SessionId = None) -> PromptOut:
        return prompt_for(Phase.POSTFLIGHT, session_id, None)

    @tool(
        "Record your POSTFLIGHT (all 13 vectors, a genuine reassessment); closes the task and "
        "returns the deltas and the calibration."
    )
    async def submit_postflight_assessment(
        vectors: Scores,
        session_id: SessionId = None,
        recommended_action: str | None = None,
        note: str = "",
    ) -> Postflight:
        a = assessment(Phase.POSTFLIGHT, vectors, recommended_action, note)
        return tracker.postflight(sid(session_id), a)

    @tool(
        "Your calibration: outcome-based metrics (Brier score, ECE, reliability, signed bias, "
        "AUROC, with 95% intervals) over tasks with recorded outcomes, and how POSTFLIGHT "
        "confidence moved against PREFLIGHT over finished tasks."
    )
    async def get_calibration_report(ai_id: str | None = None) -> CalibrationOut:
        return CalibrationOut(
            outcomes=calibration_report(store, Filters(ai_id=ai_id)),
            self_consistency=basic_calibration_report(store, ai_id),
        )

    @tool(
        "Record the verified outcome of a task (a test run, a human verdict, a checked answer): "
        "score 1.0 success, 0.0 failure, or in between. Default task: the current session's "
        "latest. This is what makes calibration real."
    )
    async def record_outcome(
        score: Annotated[float, Field(ge=0, le=1)],
        source: str = "check",
        evidence: str = "",
        task_id: Annotated[
            str | None, Field(description="A cascade id, or a session id (its latest task).")
        ] = None,
    ) -> OutcomeRecord:
        return record_task_outcome(
            store, task_id or sid(None), score=score, source=source, evidence=evidence
        )

    @tool(
        "Bayesian beliefs about your calibration bias (overall and per vector), learned from "
        "recorded outcomes, each with mean, variance, evidence count and whether it is credible."
    )
    async def query_bayesian_beliefs(ai_id: str | None = None) -> BeliefsReport:
        return beliefs_report(store, ai_id)

    @tool(
        "Check for calibration drift (recent against earlier outcomes, the 0.15 threshold) and "
        "sycophancy-style drift (confidence rising while outcomes do not)."
    )
    async def check_drift_monitor(ai_id: str | None = None, window: int = 20) -> DriftReport:
        if not 5 <= window <= 1000:
            raise ValidationError("window must be between 5 and 1000", field="window")
        return drift_report(store, ai_id, window=window)

    @tool("List the goals of a session (from generate_goals), with status and priority.")
    async def query_goal_orchestrator(session_id: SessionId = None) -> Goals:
        s = sid(session_id)
        return Goals(session_id=s, goals=store.goals(session_id=s))

    @tool("What Noetic is and how to use it well. Read this first.")
    async def get_empirica_introduction() -> Text:
        return Text(text=guidance.INTRODUCTION)

    @tool(
        "Step-by-step guidance for the workflow, or for one phase (bootstrap, preflight, "
        "investigate, check, act, postflight)."
    )
    async def get_workflow_guidance(phase: str | None = None) -> Text:
        return Text(text=guidance.workflow_guidance(phase))

    @tool("Help text of the noetic CLI, or of one command (e.g. 'preflight').")
    async def cli_help(command: str | None = None) -> Text:
        return Text(text=cli_bridge.cli_help(command))

    @tool(
        "Run one allow-listed noetic CLI command in-process (no shell), e.g. "
        "'sessions list --json'. Allowed: " + ", ".join(sorted(cli_bridge.ALLOWED)) + "."
    )
    async def execute_cli_command(command: str) -> cli_bridge.CliResult:
        return cli_bridge.run_cli(command, home)

    @tool(
        "Ask a model a question: a configured provider (e.g. 'ollama:llama3.2'), or, when "
        "none is given or configured, your own model through MCP sampling."
    )
    async def query_ai(question: str, ctx: Context, provider: str | None = None) -> AiAnswer:
        from noetic.llm.base import Request
        from noetic.llm.resilience import ResilientProvider
        from noetic.store.llm_calls import record_llm_call

        model = _provider_for(provider, home, ctx)
        wrapped = ResilientProvider(model, record=partial(record_llm_call, store))
        reply = await wrapped.complete(Request.of(question))
        return AiAnswer(answer=reply.text, provider=reply.provider, model=reply.model)

    @tool(
        "Turn the gaps in the session's latest assessment into goals (threshold mode: one "
        "goal per vector under the profile's gap threshold, weakest first)."
    )
    async def generate_goals(session_id: SessionId = None) -> Goals:
        s = sid(session_id)
        session = store.get_session(s)
        threshold_goals(store, s, tracker.profile_of(session))
        return Goals(session_id=s, goals=store.goals(session_id=s))

    @tool(
        "Run a whole CASCADE autonomously on a model (PREFLIGHT, THINK, PLAN, INVESTIGATE and "
        "CHECK with workspace tools, ACT, POSTFLIGHT) in a new session; returns the output, the "
        "13-vector trajectory and the calibration. Uses the given provider, else the "
        "configured one, else your own model through MCP sampling."
    )
    async def create_cascade(
        task: str, ctx: Context, provider: str | None = None, profile: str | None = None
    ) -> CascadeRun:
        from noetic.cascade.engine import run_cascade
        from noetic.cascade.investigation.tools import discover
        from noetic.llm.resilience import ResilientProvider
        from noetic.store.llm_calls import record_llm_call

        model = ResilientProvider(
            _provider_for(provider, home, ctx), record=partial(record_llm_call, store)
        )
        session, _ = tracker.bootstrap(ai_id="cascade", profile=profile, ai_model=model.model)
        return await run_cascade(task, model, tracker, session.id, tools=discover(Path.cwd()))

    @tool(
        "Reason about a query in stages (Explore, Refine, Integrate, Crystallize) that stop as "
        "soon as the answer has crystallized; known answers come from the pattern cache with no "
        "model call. Uses the given provider, else the configured one, else your own model "
        "through MCP sampling."
    )
    async def observe(query: str, ctx: Context, provider: str | None = None) -> ChainResult:
        from noetic.embeddings import default_embedder
        from noetic.llm.resilience import ResilientProvider
        from noetic.observer.cache import PatternCache
        from noetic.observer.chain import run_chain
        from noetic.store.llm_calls import record_llm_call

        model = ResilientProvider(
            _provider_for(provider, home, ctx), record=partial(record_llm_call, store)
        )
        cache = PatternCache(store, default_embedder())
        return await run_chain(query, model, cache=cache, store=store, bus=tracker.bus)

    @server.resource("noetic://sessions", description="Recent sessions (JSON).")
    async def sessions_resource() -> str:
        return json.dumps([s.model_dump(mode="json") for s in store.list_sessions(limit=50)])

    @server.resource("noetic://profiles", description="Every profile, built-in and yours (JSON).")
    async def profiles_resource() -> str:
        names = tracker.registry.names()
        return json.dumps([tracker.registry.get(n).model_dump(mode="json") for n in names])

    @server.prompt(name="workflow_guidance", description="How to work through a task with Noetic.")
    async def workflow_prompt() -> str:
        return guidance.INTRODUCTION + "\n\n" + guidance.workflow_guidance()

    return server


def _provider_for(spec: str | None, home: Path, ctx: Context) -> Any:
    from noetic.errors import UsageError
    from noetic.llm.registry import parse_provider, resolve_provider_spec
    from noetic.llm.sampling import SamplingProvider

    try:
        return parse_provider(resolve_provider_spec(spec, home))
    except UsageError:
        if spec:
            raise
    caps = ctx.client_capabilities
    if caps is not None and caps.sampling is not None:
        return SamplingProvider(ctx.session)
    raise ValidationError(
        "no provider configured and this client does not support MCP sampling",
        field="provider",
        fix="pass provider='ollama:llama3.2' (or another), or set NOETIC_PROVIDER",
    )
