"""The cognitive agent: open one, run it on a query, resume an interrupted task.

:class:`noetic.agent.Agent` is the engine's own Python API (it builds a run context per run);
these operations add what every interface repeats around it: the options checked with errors
that name them, the store located, the run streamed to the caller and the background memory
work settled before the result is returned.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from noetic.errors import InvalidValueError, UsageError

if TYPE_CHECKING:
    from noetic.agent import Agent
    from noetic.agent.api import StreamItem
    from noetic.agent.loop import AgentResult
    from noetic.agent.state import State
    from noetic.llm.base import Provider

MODES = ("fast", "adapt", "deep")
APPROVALS = (None, "ask", "never", "always")


def open_agent(
    *,
    provider: str | Provider | None = None,
    workspace: Path = Path("."),
    mode: str = "adapt",
    sandbox: str = "auto",
    memory: bool = True,
    max_iterations: int = 10,
    max_tokens: int | None = None,
    timeout: float = 900,
    policy_files: tuple[Path, ...] = (),
    store: Path | None = None,
    user: str = "default",
    approve: str | None = None,
    ask: Callable[[str], Awaitable[bool]] | None = None,
) -> Agent:
    """An agent working in ``workspace`` and recording in the store (``store``, else the
    project's, else ``$NOETIC_HOME``). ``approve`` (ask, never, always) wraps each run in
    CASCADE and holds irreversible actions until a CHECK clears them or ``ask`` says yes. Sync;
    one agent serves many runs (a chat keeps its conversation in it)."""
    from noetic.agent import Agent
    from noetic.store import locate_store

    if mode not in MODES:
        raise InvalidValueError(
            f"unknown mode {mode!r}", field="mode", fix="use fast, adapt or deep"
        )
    if not workspace.is_dir():
        raise InvalidValueError(f"no folder {workspace}", field="workspace", value=str(workspace))
    if approve not in APPROVALS:
        raise InvalidValueError(
            f"unknown approval {approve!r}", field="approve", fix="use ask, never or always"
        )
    home = locate_store(store).home
    if provider is None or isinstance(provider, str):  # no model: say so now, not at the first
        from noetic.llm.registry import resolve_provider_spec  # line a chat reads

        resolve_provider_spec(provider, home)
    return Agent(
        approve=approve,
        ask=ask,
        provider=provider,
        workspace=workspace,
        memory=memory,
        mode=mode,  # type: ignore[arg-type]
        max_iterations=max_iterations,
        max_tokens=max_tokens,
        timeout_s=timeout,
        sandbox=sandbox,
        policy_files=tuple(policy_files),
        home=home,
        user_id=user,
    )


async def start_agent(
    agent: Agent,
    query: str,
    *,
    state: State | None = None,
    on_item: Callable[[StreamItem], None] | None = None,
) -> AgentResult | None:
    """Run the agent on ``query``: each streamed item (a typed event, a piece of the answer,
    the result) goes to ``on_item`` as it comes; the memory work started in the background is
    finished before the result is returned. Async."""
    from noetic.agent import Finished

    result = None
    async for item in agent.stream(query, state=state):
        if isinstance(item, Finished):
            result = item.result
        if on_item is not None:
            on_item(item)
    await agent.settle()
    return result


async def resume_agent(
    agent: Agent,
    task_id: str,
    *,
    on_start: Callable[[State], None] | None = None,
    on_item: Callable[[StreamItem], None] | None = None,
) -> AgentResult | None:
    """Resume an interrupted task (``task_id`` or a unique prefix) from its saved workspace;
    a task that is not running is refused, with its status. ``on_start`` gets the saved state
    before the run goes on. Async."""
    state, status = agent.memory_for(agent.context().store).load_task(task_id)
    if status != "running":
        raise UsageError(
            f"task {state.task_id} is not interrupted (its status is {status})",
            fix="resume a task listed as running by noetic agent tasks",
        )
    if on_start is not None:
        on_start(state)
    return await start_agent(agent, state.query, state=state, on_item=on_item)
