"""The agent's loop: four nodes and the edges between them, as data.

::

    triage ──▶ reason ──▶ act ──▶ reason … ──▶ synthesize
       │          │                                ▲
       └──────────┴──── an answer, a refusal, a stop ┘

:data:`EDGES` is the whole flow; :func:`mermaid` prints it. :func:`run_agent` walks it, emitting
``phase_entered``/``phase_completed`` for every node (the iteration as the stage), and bounds it
by the iteration cap, the token budget, the run's wall clock and tool-call limit. A model
provider failure or a limit ends the run with a status and the best answer so far, never a
traceback; a bug in Noetic raises.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, Literal

from pydantic import BaseModel, Field

from noetic.agent import nodes
from noetic.agent.epistemic import Asker, EpistemicGate
from noetic.agent.memory import AgentMemory
from noetic.agent.nodes import Run
from noetic.agent.state import AgentSettings, State, add_message
from noetic.agent.toolbox import Toolbox
from noetic.errors import InvalidValueError, ProviderError
from noetic.events import EventKind, PhaseCompleted, PhaseEntered, RunFinished, Timer
from noetic.limits import TEXT_CHARS
from noetic.llm.base import Message
from noetic.runtime.context import RunContext
from noetic.runtime.sentinel import SentinelStop
from noetic.tools.file_tools import SandboxRoot
from noetic.tools.shellgate import load_policy

Node = Literal["triage", "reason", "act", "synthesize"]

NODES: dict[str, Callable[[Run], Awaitable[None]]] = {
    "triage": nodes.triage,
    "reason": nodes.reason,
    "act": nodes.act,
    "synthesize": nodes.synthesize,
}

EDGES: dict[str, Callable[[Run], str | None]] = {
    "triage": lambda run: "synthesize" if run.done else "reason",
    "reason": lambda run: "synthesize" if run.done else "act",
    "act": lambda run: "synthesize" if run.done else "reason",
    "synthesize": lambda run: None,
}


def mermaid() -> str:
    """The flow as a Mermaid diagram, from the same table the loop runs."""
    return "\n".join(
        [
            "flowchart LR",
            "  triage -->|answer, refusal| synthesize",
            "  triage --> reason",
            "  reason -->|tool calls| act",
            "  reason -->|answer, limit| synthesize",
            "  act --> reason",
            "  act -->|limit| synthesize",
        ]
    )


class AgentResult(BaseModel):
    """What a run produced."""

    answer: str
    status: str
    task_id: str
    mode: str
    depth: str
    iterations: int
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    tools_offered: list[str] = Field(default_factory=list)
    tokens: int = 0
    ms: float = 0.0


async def run_agent(
    ctx: RunContext,
    query: str,
    settings: AgentSettings | None = None,
    *,
    state: State | None = None,
    memory: AgentMemory | None = None,
    say: Callable[[str], None] | None = None,
    background: set[asyncio.Task[Any]] | None = None,
    ask: Asker | None = None,
) -> AgentResult:
    """Run the agent on ``query``. ``state`` resumes a task; ``say`` receives the answer's text;
    memory work started by synthesize is added to ``background`` and not awaited."""
    settings = settings or AgentSettings()
    if not query.strip():
        raise InvalidValueError("the query is empty", field="query")
    TEXT_CHARS.check(len(query), "the query")
    resumed = state is not None
    state = state or State(query=query, user_id=settings.user_id)
    state.execution.mode = settings.mode
    state.execution.max_iterations = settings.max_iterations
    if memory is not None:
        await memory.settle()  # what the runs before this one learned, this one knows
        state.profile = memory.profile(settings.user_id)
    timer = Timer()
    with ctx.scope():
        async with AsyncExitStack() as stack:
            tools = await ctx.open_tools(stack)
            run = Run(
                ctx=ctx,
                settings=settings,
                state=state,
                toolbox=Toolbox(tools, breaker_threshold=settings.breaker_threshold),
                say=say or (lambda _: None),
                memory=memory,
                resumed=resumed,
            )
            if background is not None:
                run.background = background
            if settings.epistemic:
                run.gate = EpistemicGate(settings.approve, ask)
                run.policy = load_policy(*settings.policy_files)
                run.root = SandboxRoot(settings.workspace, run.policy)
            add_message(state, Message(role="user", content=query))
            await _walk(run)
    result = AgentResult(
        answer=state.execution.response or "",
        status=run.status or "done",
        task_id=state.task_id,
        mode=settings.mode,
        depth=state.execution.depth,
        iterations=state.execution.iteration,
        tool_calls=state.execution.completed_calls,
        tools_offered=state.execution.tools,
        tokens=state.execution.tokens,
        ms=timer.ms,
    )
    ctx.emit(
        EventKind.RUN_FINISHED,
        RunFinished(
            status=result.status,
            ms=result.ms,
            summary={
                "iterations": result.iterations,
                "tool_calls": len(result.tool_calls),
                "tokens": result.tokens,
                "depth": result.depth,
                "task_id": result.task_id,
                "checks": run.gate.checks if run.gate else 0,
                "held": run.gate.held if run.gate else 0,
            },
        ),
    )
    return result


async def _walk(run: Run) -> None:
    node: str | None = "triage"
    while node is not None:
        run.ctx.emit(
            EventKind.PHASE_ENTERED, PhaseEntered(phase=node, stage=run.state.execution.iteration)
        )
        timer = Timer()
        try:
            run.ctx.sentinel.remaining()
            await NODES[node](run)
        except SentinelStop as exc:
            run.stop(exc.rule, nodes._last_text(run) or f"Stopped: {exc}.")
        except TimeoutError:
            run.enforce(
                "timeout", run.ctx.sentinel.limits.timeout_s, run.ctx.sentinel.limits.timeout_s
            )
            run.stop("timeout", nodes._last_text(run) or "Stopped: the run's time ran out.")
        except ProviderError as exc:
            run.decide("stop", f"model call failed: {exc.message}", "provider-error")
            run.stop("error", f"The model could not be reached: {exc.message}")
        run.ctx.emit(
            EventKind.PHASE_COMPLETED,
            PhaseCompleted(phase=node, stage=run.state.execution.iteration, ms=timer.ms),
        )
        if run.memory is not None:
            run.memory.save_workspace(run.state)
        node = EDGES[node](run)
