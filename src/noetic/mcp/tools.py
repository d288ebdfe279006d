"""The tools: the seed's 21, plus ``record_outcome``, ``generate_goals`` and ``observe``.

Each tool is a module-level async function whose first argument is the server's
:class:`~noetic.mcp.state.ServerState`; :data:`TOOLS` is the table the server's tools are built
from (:func:`build_tool`), binding that argument, so a test can call any tool alone. Each calls
the operation the matching CLI command calls and returns a pydantic model, so clients get
``structuredContent`` and a schema for it. A tool's docstring is its description, written for
the agent reading the tool list: what the tool does, and what to call next.
"""

from __future__ import annotations

import inspect
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from pydantic import Field

from noetic.assessment import Assessment, Phase
from noetic.calibration import (
    BeliefsReport,
    DriftReport,
    RecordedOutcome,
    basic_calibration_report,
)
from noetic.calibration import check_drift_monitor as drift_report
from noetic.calibration import query_bayesian_beliefs as beliefs_report
from noetic.cascade.engine import CascadeRun
from noetic.errors import InvalidValueError
from noetic.evaluation.engine import EvalRun
from noetic.mcp import cli_bridge, guidance
from noetic.mcp.progress import reporting
from noetic.mcp.results import (
    AiAnswer,
    Bootstrapped,
    CalibrationOut,
    Finished,
    Goals,
    PromptOut,
    Resumed,
    Submitted,
    Text,
    described,
)
from noetic.mcp.schemas import (
    ProviderSpec,
    PSuccess,
    RequestId,
    ReviewKind,
    Scores,
    SessionId,
    TaskText,
    YourAction,
    lean_schema,
)
from noetic.mcp.state import ServerState
from noetic.mcp.tool_calls import ToolFunction, bind, tool_errors
from noetic.nova.models import NovaRun
from noetic.observer.chain import ChainResult
from noetic.operations import calibrating
from noetic.operations import workflow as phases
from noetic.operations.goal_setting import generate_goals as add_threshold_goals
from noetic.operations.goal_setting import list_goals
from noetic.operations.once import Replayed, answered
from noetic.operations.session_view import SessionSummary, session_summary
from noetic.runtime.tracker import EpistemicState, Recorded

R = TypeVar("R", bound=Recorded)


def _prompt_for(
    n: ServerState,
    ctx: Context | None,
    phase: Phase,
    session_id: str | None,
    task: str | None,
    review: str | None = None,
) -> PromptOut:
    sid = n.session_id(session_id, ctx)
    also = f" with review={review!r}" if review else ""
    return PromptOut(
        session_id=sid,
        phase=phase.value,
        prompt=phases.prompt(n.tracker, sid, phase, task, review),
        next_step=f"answer it, then call submit_{phase.value}_assessment{also}",
    )


def _assessment(
    phase: Phase,
    vectors: dict[str, Any],
    action: str | None,
    note: str,
    p_success: float | None,
    review: str | None = None,
) -> Any:
    optional = {"recommended_action": action or None, "p_success": p_success, "review": review}
    data = {"vectors": vectors, "note": note} | {k: v for k, v in optional.items() if v is not None}
    return Assessment.from_input(phase, data)


def _recorded(result: R | phases.AssessmentPrompt | Replayed[R]) -> R:
    """A phase given scores records them, or a call with the same request id did before
    (only a phase without scores returns a prompt)."""
    if isinstance(result, phases.AssessmentPrompt):
        raise TypeError("an assessment with scores was not recorded")  # a bug, never the caller's
    return answered(result)


async def bootstrap_session(
    n: ServerState,
    ai_id: str = "agent",
    session_type: str | None = None,  # the seed's label (development, review…), kept
    profile: str | None = None,
    ai_model: str | None = None,
    domain: str | None = None,
    project: str | None = None,
    request_id: RequestId = None,
    ctx: Context | None = None,
) -> Bootstrapped:
    """Open a Noetic session and choose its profile (explicit name, else by ai_model, else by
    domain). Call once per working session; keep the returned session id."""
    done = answered(
        phases.bootstrap(
            n.tracker, ai_id=ai_id, profile=profile, ai_model=ai_model, domain=domain,
            project=project, session_type=session_type, remember=False, request_id=request_id,
        )
    )  # fmt: skip
    n.set_current(ctx, done.session.id)
    return Bootstrapped(
        session=done.session,
        profile=done.profile,
        next_step="call execute_preflight with the task you are about to attempt",
        record=done.record,
    )


async def resume_previous_session(
    n: ServerState,
    task: str | None = None,
    ai_id: str | None = None,
    limit: Annotated[
        int | None, Field(description="At most this many tasks; default: by your need.")
    ] = None,
    budget: Annotated[int | None, Field(description="Token budget for the recall.")] = None,
    all_projects: Annotated[bool, Field(description="Search every project.")] = False,
    explain: Annotated[
        bool, Field(description="Also return the top 50 candidates with their scores.")
    ] = False,
    ctx: Context | None = None,
) -> Resumed:
    """Pick up where you left off: given the task you are about to start, recall the most relevant
    earlier tasks of this project (semantic match, well-calibrated only, within a token budget;
    nothing when none is close) as a context block with what was chosen and why; without a task,
    list your recent sessions."""
    if limit is not None and not 1 <= limit <= 100:
        raise InvalidValueError("limit must be between 1 and 100", field="limit", value=limit)
    recalled = None
    if task:
        from noetic.operations.recalling import recall

        recalled = recall(
            n.store, task, session_id=n.current(ctx), ai_id=ai_id, limit=limit, budget=budget,
            all_projects=all_projects, explain=explain,
        )  # fmt: skip
    sessions = n.store.list_sessions(limit=limit or 5, ai_id=ai_id)
    return Resumed(sessions=sessions, recall=recalled)


async def get_session_summary(
    n: ServerState,
    session_id: SessionId = None,
    ctx: Context | None = None,
) -> SessionSummary:
    """Summarise a session: its tasks, how many assessments and investigations each had, the last
    decision and the calibration of finished tasks."""
    return session_summary(n.store, n.session_id(session_id, ctx))


State = described(EpistemicState)
Outcome = described(RecordedOutcome)


async def get_epistemic_state(
    n: ServerState,
    session_id: SessionId = None,
    ctx: Context | None = None,
) -> State:  # type: ignore[valid-type]
    """Where a session stands: the open task, the latest assessment and decision, and what to do
    next."""
    return phases.state(n.tracker, n.session_id(session_id, ctx))


async def execute_preflight(
    n: ServerState,
    session_id: SessionId = None,
    prompt: TaskText = None,
    task: Annotated[str | None, Field(description="The same as prompt.")] = None,
    ctx: Context | None = None,
) -> PromptOut:
    """Get the PREFLIGHT self-assessment prompt for a task (give it as prompt or task). Records
    nothing; answer it and call submit_preflight_assessment, which takes the task from here."""
    if prompt is not None and task is not None and prompt != task:
        raise InvalidValueError(
            "prompt and task disagree: give the task once",
            field="prompt",
            value={"prompt": prompt, "task": task},
        )
    the_task = prompt if prompt is not None else task
    if the_task is None:
        raise InvalidValueError(
            "execute_preflight needs the task", field="prompt", fix="pass prompt='the task'"
        )
    out = _prompt_for(n, ctx, Phase.PREFLIGHT, session_id, the_task)
    n.remember_task(out.session_id, the_task)
    return out


async def submit_preflight_assessment(
    n: ServerState,
    vectors: Scores,
    session_id: SessionId = None,
    task: Annotated[
        str | None, Field(description="The task (default: the one given to execute_preflight).")
    ] = None,
    recommended_action: YourAction = None,
    note: str = "",
    abandon_open: Annotated[
        bool, Field(description="Close a task still open in this session as abandoned.")
    ] = False,
    p_success: PSuccess = None,
    request_id: RequestId = None,
    ctx: Context | None = None,
) -> Submitted:
    """Record your PREFLIGHT (all 13 vectors) for a task; opens the task and returns the decision:
    INVESTIGATE, PROCEED, CLARIFY, DELEGATE or RESET."""
    a = _assessment(Phase.PREFLIGHT, vectors, recommended_action, note, p_success)
    sid = n.session_id(session_id, ctx)
    the_task = task if task is not None else n.pending_tasks.get(sid)
    if the_task is None:
        raise InvalidValueError(
            f"no task for session {sid}: none given and no execute_preflight before",
            field="task",
            fix="pass task='…', or call execute_preflight with the task first",
        )

    done = phases.preflight(
        n.tracker, sid, the_task, a, abandon_open=abandon_open, request_id=request_id
    )
    out = Submitted.of(_recorded(done))
    n.pending_tasks.pop(sid, None)
    return out


async def execute_check(
    n: ServerState, session_id: SessionId = None, ctx: Context | None = None
) -> PromptOut:
    """Get the CHECK prompt for the open task (after investigating). Records nothing."""
    return _prompt_for(n, ctx, Phase.CHECK, session_id, None)


async def submit_check_assessment(
    n: ServerState,
    vectors: Scores,
    session_id: SessionId = None,
    recommended_action: YourAction = None,
    note: str = "",
    p_success: PSuccess = None,
    request_id: RequestId = None,
    ctx: Context | None = None,
) -> Submitted:
    """Record a CHECK: only the vectors that changed are needed; the rest carry over. Returns the
    decision."""
    a = _assessment(Phase.CHECK, vectors, recommended_action, note, p_success)
    sid = n.session_id(session_id, ctx)
    return Submitted.of(_recorded(phases.check(n.tracker, sid, a, request_id=request_id)))


async def execute_postflight(
    n: ServerState,
    session_id: SessionId = None,
    review: ReviewKind = None,
    ctx: Context | None = None,
) -> PromptOut:
    """Get the POSTFLIGHT prompt for the open task (review='adversarial': look for bugs first)."""
    return _prompt_for(n, ctx, Phase.POSTFLIGHT, session_id, None, review)


async def submit_postflight_assessment(
    n: ServerState,
    vectors: Scores,
    session_id: SessionId = None,
    recommended_action: YourAction = None,
    note: str = "",
    p_success: PSuccess = None,
    review: ReviewKind = None,
    request_id: RequestId = None,
    ctx: Context | None = None,
) -> Finished:
    """Record your POSTFLIGHT (all 13 vectors, a genuine reassessment); closes the task and returns
    the deltas and the calibration. Then call record_outcome once you know whether the work really
    succeeded."""
    a = _assessment(Phase.POSTFLIGHT, vectors, recommended_action, note, p_success, review)
    sid = n.session_id(session_id, ctx)
    done = _recorded(phases.postflight(n.tracker, sid, a, request_id=request_id))
    return Finished.of(done, calibration=done.calibration)


async def get_calibration_report(
    n: ServerState,
    ai_id: str | None = None,
    profile: Annotated[str | None, Field(description="Only tasks under this profile.")] = None,
    domain: Annotated[str | None, Field(description="Only sessions in this domain.")] = None,
    since_days: Annotated[float | None, Field(gt=0, description="Only the last N days.")] = None,
    at: Annotated[
        Literal["preflight", "check", "postflight", "adversarial_review"],
        Field(description="The phase the summary and metrics score."),
    ] = "preflight",
    bins: Annotated[int, Field(ge=1, le=50, description="Equal-mass reliability bins.")] = 10,
    by: Literal["phase", "agent", "model", "engine", "persona", "profile"] = "phase",
) -> CalibrationOut:
    """Your calibration: outcome-based metrics (Brier score, ECE, reliability, signed bias, AUROC,
    with 95% intervals) over tasks with recorded outcomes, and how POSTFLIGHT confidence moved
    against PREFLIGHT over finished tasks."""
    return CalibrationOut(
        outcomes=calibrating.report(
            n.store,
            ai_id=ai_id,
            profile=profile,
            domain=domain,
            since_days=since_days,
            at=at,
            bins=bins,
            by=by,
        ),
        self_consistency=basic_calibration_report(n.store, ai_id),
    )


async def record_outcome(
    n: ServerState,
    score: Annotated[float, Field(ge=0, le=1)],
    source: Annotated[str, Field(description="test, human or check.")] = "check",
    evidence: Annotated[str, Field(description="What the verdict rests on.")] = "",
    task_id: Annotated[
        str | None, Field(description="A cascade id, or a session id (its latest task).")
    ] = None,
    request_id: RequestId = None,
    ctx: Context | None = None,
) -> Outcome:  # type: ignore[valid-type]
    """Record the verified outcome of a task (a test run, a human verdict, a checked answer): score
    1.0 success, 0.0 failure, or in between. Default task: the current session's latest. This is
    what makes calibration real."""
    target = task_id or n.session_id(None, ctx)
    return answered(
        calibrating.outcome(
            n.store, target, score=score, source=source, evidence=evidence, request_id=request_id
        )
    )


async def query_bayesian_beliefs(n: ServerState, ai_id: str | None = None) -> BeliefsReport:
    """Bayesian beliefs about your calibration bias (overall and per vector), learned from recorded
    outcomes, each with mean, variance, evidence count and whether it is credible."""
    return beliefs_report(n.store, ai_id)


async def check_drift_monitor(
    n: ServerState,
    ai_id: str | None = None,
    window: Annotated[int, Field(description="Recent outcomes to compare (5-1000).")] = 20,
) -> DriftReport:
    """Check for calibration drift (a sequential test whose false-alarm rate, 5%, holds however
    often it is checked) and sycophancy-style drift (confidence rising while outcomes do not)."""
    if not 5 <= window <= 1000:
        raise InvalidValueError("window must be between 5 and 1000", field="window", value=window)
    return drift_report(n.store, ai_id, window=window)


async def query_goal_orchestrator(
    n: ServerState, session_id: SessionId = None, ctx: Context | None = None
) -> Goals:
    """List the goals of a session (from generate_goals), with status and priority."""
    sid = n.session_id(session_id, ctx)
    return Goals(session_id=sid, goals=list_goals(n.store, sid))


async def get_empirica_introduction(n: ServerState) -> Text:
    """What Noetic is and how to use it well. Read this first."""
    return Text(text=guidance.INTRODUCTION)


async def get_workflow_guidance(n: ServerState, phase: str | None = None) -> Text:
    """Step-by-step guidance for the workflow, or for one phase (bootstrap, preflight, investigate,
    check, act, postflight, outcome)."""
    return Text(text=guidance.workflow_guidance(phase))


async def cli_help(n: ServerState, command: str | None = None) -> Text:
    """Help text of the noetic CLI, or of one command (e.g. 'preflight')."""
    return Text(text=cli_bridge.cli_help(command))


async def execute_cli_command(
    n: ServerState,
    command: str,
    output: Annotated[
        Literal["json", "text"],
        Field(description="'json' (default): the parsed document in 'data'; 'text': prose."),
    ] = "json",
    ctx: Context | None = None,
) -> cli_bridge.CliResult:
    """Run one allow-listed noetic CLI command in-process (no shell; --store is pinned to this
    server's store), e.g. 'sessions list'. By default it runs with --json and the parsed document is
    in 'data'; output='text' gives the plain text instead."""
    _ = n.store  # opened (created if new) on first use: the command finds it, as it would
    return cli_bridge.run_cli(command, n.home, output, session_id=n.current(ctx))


async def query_ai(
    n: ServerState,
    question: str,
    ctx: Context,
    provider: ProviderSpec = None,
    system: Annotated[str | None, Field(description="A system prompt.")] = None,
    max_tokens: Annotated[int, Field(ge=1, le=32000)] = 1024,
) -> AiAnswer:
    """Ask a model a question: a configured provider (e.g. 'ollama:llama3.2'), or, when none is
    given or configured, your own model through MCP sampling."""
    from noetic.llm.base import Request

    if not question.strip():
        raise InvalidValueError("the question is empty", field="question")
    reply = await n.recorded(n.provider(provider, ctx)).complete(
        Request.of(question, system=system, max_tokens=max_tokens)
    )
    return AiAnswer(answer=reply.text, provider=reply.provider, model=reply.model)


async def generate_goals(
    n: ServerState,
    session_id: SessionId = None,
    mode: Literal["threshold", "llm"] = "threshold",
    provider: str | None = None,
    ctx: Context | None = None,
) -> Goals:
    """Turn the gaps in the session's latest assessment into goals: threshold mode (one per vector
    under the gap threshold) or llm mode."""
    sid = n.session_id(session_id, ctx)
    if mode == "llm" or provider:
        from noetic.operations.goal_setting import generate_model_goals

        # a client's own model by sampling needs its connection; without one, the named or
        # the configured provider
        choice = provider if ctx is None else (lambda: n.provider(provider, ctx))
        await generate_model_goals(n.tracker, sid, provider=choice)
    else:
        add_threshold_goals(n.tracker, sid)
    return Goals(session_id=sid, goals=list_goals(n.store, sid))


async def create_cascade(
    n: ServerState,
    task: str,
    ctx: Context,
    provider: ProviderSpec = None,
    profile: Annotated[str | None, Field(description="Default: chosen by model.")] = None,
    timeout: Annotated[float, Field(gt=0, le=3600, description="Seconds.")] = 900,
    max_tool_calls: Annotated[int, Field(ge=0, le=200)] = 30,
) -> CascadeRun:
    """Run a whole CASCADE autonomously on a model (PREFLIGHT, THINK, PLAN, INVESTIGATE and CHECK
    with workspace tools, ACT, POSTFLIGHT) in a new session; returns the output, the 13-vector
    trajectory and the calibration. Uses the given provider, else the configured one, else your own
    model through MCP sampling."""
    from noetic.operations.runs import start_cascade

    return await reporting(ctx, lambda progress: start_cascade(
        n.tracker, task, provider=lambda: n.provider(provider, ctx), profile=profile,
        workspace=n.workspace, timeout=timeout, max_tool_calls=max_tool_calls, remember=False,
        on_start=lambda run: n.set_current(ctx, run.session_id), on_event=progress,
    ))  # fmt: skip


async def observe(
    n: ServerState,
    query: str,
    ctx: Context,
    provider: ProviderSpec = None,
    adaptive: Annotated[
        bool, Field(description="Let stage 1's predicted confidence set the stage budget.")
    ] = False,
) -> ChainResult:
    """Reason about a query in stages (Explore, Refine, Integrate, Crystallize) that stop as soon as
    the answer has crystallized; known answers come from the pattern cache with no model call. Uses
    the given provider, else the configured one, else your own model through MCP sampling."""
    from noetic.operations.runs import start_chain

    return await reporting(ctx, lambda progress: start_chain(
        n.tracker, query, provider=lambda: n.provider(provider, ctx), adaptive=adaptive,
        on_event=progress,
    ))  # fmt: skip


async def nova_process(
    n: ServerState,
    ctx: Context,
    question: Annotated[str, Field(description="The question to deliberate on.")] = "",
    provider: ProviderSpec = None,
    experts: Annotated[
        list[str] | None, Field(description="A fixed panel (default: the DCE chooses).")
    ] = None,
    max_rounds: Annotated[int, Field(ge=1, le=20)] = 5,
    gate: Annotated[
        float | None, Field(ge=0, le=1, description="CHECK gate on uncertainty.")
    ] = None,
    run_id: Annotated[
        str | None, Field(description="Resume this run instead (escalated, failed or killed).")
    ] = None,
    input: Annotated[
        str | None, Field(description="With run_id: a person's decision or guidance.")
    ] = None,
) -> NovaRun:
    """Deliberate on a question with a panel of personas (NovaProcess): the DCE unpacks it and picks
    experts, they analyse concurrently, the DCE synthesises, a CHECK gate on uncertainty and the
    CAE's critique loop back when needed, and the DCE recommends, with confidence, trade-offs and
    dissent. An escalated run waits for a person: call again with run_id and input. Runs on the
    given provider, else the configured one, else your model by MCP sampling."""
    from noetic.operations.runs import resume_nova, start_nova

    model = lambda: n.provider(provider, ctx)  # noqa: E731 (resolved once the input is checked)
    if run_id is not None:
        return await reporting(ctx, lambda progress: resume_nova(
            n.tracker, run_id, input=input, provider=model, on_event=progress
        ))  # fmt: skip
    return await reporting(ctx, lambda progress: start_nova(
        n.tracker, question, provider=model, experts=tuple(experts or ()),
        max_rounds=max_rounds, gate=gate, on_event=progress,
    ))  # fmt: skip


async def evaluate(
    n: ServerState,
    ctx: Context,
    tasks: Annotated[str, Field(description="humaneval, or a .jsonl path")] = "humaneval",
    provider: Annotated[str | None, Field(description="As create_cascade's")] = None,
    limit: Annotated[int | None, Field(ge=1)] = None,
    review: Literal["profile", "standard", "adversarial", "split"] = "profile",
    run_id: Annotated[str | None, Field(description="Resume this run")] = None,
) -> EvalRun:
    """Calibration offline: per problem the model states P(success), writes the function and
    reassesses; the tests judge it. Report: execute_cli_command 'eval report RUN'."""
    from noetic.operations.evaluating import resume_eval, start_eval

    model = lambda: n.provider(provider, ctx)  # noqa: E731 (resolved once the input is checked)
    if run_id is not None:
        return await reporting(ctx, lambda progress: resume_eval(
            n.tracker, run_id, provider=model if provider else None, fallback=model,
            on_task=progress.task,
        ))  # fmt: skip
    built_in = tasks.strip().lower() in ("", "humaneval")
    return await reporting(ctx, lambda progress: start_eval(
        n.tracker, "humaneval" if built_in else None,
        tasks_file=None if built_in else n.workspace / tasks, provider=model, limit=limit,
        review=review, on_task=progress.task,
    ))  # fmt: skip


# every public coroutine function above is a tool, listed to clients in the order it is defined;
# each tool's description, for the agent reading the tool list, is its docstring
TOOLS: list[ToolFunction] = [
    fn
    for name, fn in list(globals().items())
    if inspect.iscoroutinefunction(fn) and fn.__module__ == __name__ and not name.startswith("_")
]

execute_cli_command.__doc__ = (
    f"{execute_cli_command.__doc__} Allowed: {cli_bridge.describe_allowed()}."
)


def description(fn: ToolFunction) -> str:
    """The tool's description: its docstring as one paragraph."""
    return " ".join((fn.__doc__ or "").split())


def build_tool(n: ServerState, name: str) -> Tool:
    """The SDK's tool for the function called ``name`` in :data:`TOOLS`, acting on ``n``'s
    store: its input and output schemas generated from the signature and return type."""
    fn = next((f for f in TOOLS if f.__name__ == name), None)
    if fn is None:
        raise ToolError(f"unknown tool {name!r}")
    tool = Tool.from_function(tool_errors(bind(fn, n)), name=name, description=description(fn))
    tool.parameters = lean_schema(tool.parameters)
    return tool


def build_tools(n: ServerState) -> list[Tool]:
    """Every tool in :data:`TOOLS`, in order, built the SDK's way."""
    return [build_tool(n, fn.__name__) for fn in TOOLS]
