"""``Agent``: the cognitive agent for Python callers.

::

    agent = Agent("assistant", provider="ollama:llama3.2", workspace=".", memory=True)
    result = agent.run("What does this project's Makefile do?")
    async for item in agent.stream("Fix the failing test"):
        ...  # StepEvent (typed events), TextDelta (the answer's text), Finished (the result)
    agent.logs(mode="summary" | "performance" | "errors")

Tools register themselves: the agent offers the file and shell built-ins, every tool under the
``noetic.tools`` entry points and the configured MCP servers' tools, and triage picks the ones
each query needs; ``tools=[…]`` gives an explicit list instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from noetic.agent.loop import AgentResult, run_agent
from noetic.agent.state import AgentSettings, Mode, State
from noetic.events import Event
from noetic.frozen import Frozen
from noetic.llm.base import Provider
from noetic.runtime.context import Limits, RunContext, build_context
from noetic.tools.base import Tool

if TYPE_CHECKING:
    from noetic.agent.epistemic import Asker
    from noetic.agent.memory import AgentMemory
    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore

CHAT_TURNS = 8
CHAT_CHARS = 12_000


class StepEvent(Frozen):
    """A typed event of the run (a node entered or completed, a tool call, a decision…)."""

    type: Literal["event"] = "event"
    event: Event


class TextDelta(Frozen):
    """A piece of the answer's text."""

    type: Literal["text"] = "text"
    text: str


class Finished(Frozen):
    """The run's result; always the last item of a stream."""

    type: Literal["finished"] = "finished"
    result: AgentResult


StreamItem = StepEvent | TextDelta | Finished


def builtin_tools(
    workspace: Path,
    *,
    sandbox: str = "auto",
    policy_files: tuple[Path, ...] = (),
    home: Path | None = None,
) -> tuple[list[Tool], str]:
    """The agent's built-ins and the auto-registered tools, and the sandbox notice: files,
    shell, retrieve, search and scrape (as configured in ``home``'s config.toml), then every
    ``noetic.tools`` entry point."""
    from noetic.tools.discovery import discover
    from noetic.tools.documents import retrieve_tool
    from noetic.tools.file_tools import file_tools
    from noetic.tools.shell import ShellRunner, shell_tool
    from noetic.tools.shellgate import load_policy
    from noetic.tools.web import agent_config, scrape_tool, search_tool
    from noetic.untrusted import check_regular_file

    for named in policy_files:  # a FIFO or a device would hang the policy's read
        check_regular_file(named, f"the shell policy {named}")
    policy = load_policy(*policy_files)
    runner = ShellRunner(workspace, policy=policy, sandbox=sandbox)
    config = agent_config(home) if home is not None else {}
    tools = [
        *file_tools(workspace, policy),
        shell_tool(runner),
        retrieve_tool(workspace),
        search_tool(config.get("search")),
        scrape_tool(config.get("scrape")),
    ]
    taken = {t.name for t in tools}
    tools += [t for t in discover(workspace) if t.name not in taken]
    return tools, runner.notice


def recall_tool(store: BaseStore) -> Tool:
    """The ``recall`` tool over ``store``'s completed tasks, every project: the agent's past
    tasks, through Noetic's recall (semantic and epistemic)."""
    from noetic.errors import InvalidValueError
    from noetic.recall.selection import recall_default
    from noetic.tools.base import tool

    def recall(query: str) -> str:
        """Recall past tasks like this one: what was done, how confident it was, what was
        learned.

        Args:
            query: the task or question to find earlier work for
        """
        if not query.strip():
            raise InvalidValueError("the query is empty", field="query")
        found = recall_default(store, query, all_projects=True)
        if not found.context.strip():
            left = ", ".join(f"{k}: {v}" for k, v in found.left_out.items() if v)
            return (
                f"no past task matches ({found.considered} considered{'; ' + left if left else ''})"
            )
        return found.context

    return tool(recall, improves_vectors=("know", "context"), confidence_gain=0.1)


class Agent:
    """A tool-using agent: triage → reason → act → synthesize on a run context."""

    def __init__(
        self,
        name: str = "assistant",
        *,
        provider: str | Provider | None = None,
        workspace: Path | str = ".",
        memory: bool = False,
        mode: Mode = "adapt",
        tools: list[Tool] | None = None,
        max_iterations: int = 10,
        max_tokens: int | None = None,
        timeout_s: float = 900.0,
        sandbox: str = "auto",
        policy_files: tuple[Path, ...] = (),
        home: Path | None = None,
        user_id: str = "default",
        approve: str | None = None,
        ask: Asker | None = None,
        scratch: str | None = None,
        ctx: RunContext | None = None,
    ) -> None:
        """``approve`` (ask, never, always) wraps every run in CASCADE and holds irreversible
        actions until a CHECK clears them or ``ask`` (an async function of the question,
        returning True to allow) says yes; None runs without the epistemic gate."""
        self.workspace = Path(workspace).resolve()
        self.settings = AgentSettings(
            name=name,
            workspace=self.workspace,
            mode=mode,
            max_iterations=max_iterations,
            max_tokens=max_tokens,
            tools_fixed=tools is not None,
            user_id=user_id,
            epistemic=approve is not None,
            approve=approve or "never",
            scratch=scratch,
            policy_files=tuple(policy_files),
        )
        self._ask = ask
        self.notice: str | None = None
        self._home = home
        self._builtins = tools is None
        if tools is None:
            tools, self.notice = builtin_tools(
                self.workspace, sandbox=sandbox, policy_files=policy_files, home=self.home
            )
        self._tools = tools
        self._provider = provider
        self._limits = Limits(timeout_s=timeout_s, max_tool_calls=max(30, max_iterations * 8))
        self._ctx = ctx
        self._tracker: Tracker | None = None
        self._memory_on = memory
        self._memory: AgentMemory | None = None
        self.events: list[Event] = []
        self.history: list[tuple[str, str]] = []
        self.background: set[asyncio.Task[Any]] = set()

    # the run context: one per run, so the Sentinel's clock and counts start fresh
    def context(self) -> RunContext:
        if self._ctx is not None:
            ctx = self._ctx
            ctx.tools = list(self._tools)
            return ctx
        from noetic.tools.mcp_servers import configured_servers

        tracker = self._opened_tracker()
        tools = list(self._tools)
        if self._builtins:
            tools.append(recall_tool(tracker.store))
        return build_context(
            "agent",
            tracker=tracker,
            provider=self._provider,
            limits=self._limits,
            tools=tools,
            mcp_servers=configured_servers(self.home),
            needs_model=True,
        )

    def _opened_tracker(self) -> Tracker:
        """The tracker of this agent's store, opened once for all of its runs."""
        if self._tracker is None:
            from noetic.runtime.opening import open_tracker

            self._tracker = open_tracker(self.home, create=True)
        return self._tracker

    @property
    def home(self) -> Path:
        """The store this agent records in (``home=``, else the project's, else $NOETIC_HOME)."""
        if self._home is None:
            from noetic.store import locate_store

            self._home = locate_store(None).home
        return self._home

    def memory(self, ctx: RunContext) -> AgentMemory:
        return self.memory_for(ctx.store)

    def memory_for(self, store: BaseStore) -> AgentMemory:
        """The store's memory: workspaces always (so tasks resume), profiles when asked."""
        if self._memory is None or self._memory.store is not store:
            from noetic.agent.memory import AgentMemory

            self._memory = AgentMemory(store, profiles=self._memory_on, background=self.background)
        return self._memory

    def forget(self, user_id: str | None = None) -> list[str]:
        """Make the agent forget a user (this agent's ``user_id`` by default): their profile and
        every task workspace of theirs are deleted from the store. The task ids deleted."""
        return self.memory_for(self._opened_tracker().store).forget_user(
            user_id or self.settings.user_id
        )

    async def arun(self, query: str, *, state: State | None = None) -> AgentResult:
        result: AgentResult | None = None
        async for item in self.stream(query, state=state):
            if isinstance(item, Finished):
                result = item.result
        assert result is not None
        return result

    def run(self, query: str, *, state: State | None = None) -> AgentResult:
        """Run from synchronous code; memory work finishes before this returns."""

        async def both() -> AgentResult:
            result = await self.arun(query, state=state)
            await self.settle()
            return result

        return asyncio.run(both())

    def close(self) -> None:
        """Close the store this agent opened (its files are written)."""
        if self._tracker is not None:
            self._tracker.store.close()
            self._tracker = None

    async def settle(self) -> None:
        """Wait for the memory work started in the background."""
        while self.background:
            await asyncio.gather(*list(self.background), return_exceptions=True)

    async def stream(self, query: str, *, state: State | None = None) -> AsyncIterator[StreamItem]:
        """The run as it happens: typed events, the answer's text, then the result."""
        ctx = self.context()
        queue: asyncio.Queue[StreamItem | None] = asyncio.Queue()

        def on_event(event: Event) -> None:
            self.events.append(event)
            queue.put_nowait(StepEvent(event=event))

        def say(text: str) -> None:
            queue.put_nowait(TextDelta(text=text))

        async def go() -> None:
            try:
                result = await run_agent(
                    ctx,
                    query,
                    self.settings,
                    state=state,
                    memory=self.memory(ctx),
                    say=say,
                    background=self.background,
                    ask=self._ask,
                )
                queue.put_nowait(Finished(result=result))
            finally:
                queue.put_nowait(None)

        unsubscribe = ctx.bus.subscribe(on_event)
        task = asyncio.ensure_future(go())
        try:
            while (item := await queue.get()) is not None:
                yield item
            await task  # a bug in the run surfaces here
        finally:
            unsubscribe()
            if not task.done():  # the caller stopped listening: stop the run cleanly
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def aresume(self, task_id: str) -> AgentResult:
        """Continue an interrupted task from its saved workspace."""
        from noetic.errors import UsageError

        ctx = self.context()
        state, status = self.memory_for(ctx.store).load_task(task_id)
        if status != "running":
            raise UsageError(
                f"task {state.task_id} is not interrupted (its status is {status})",
                fix="resume a task listed as running by noetic agent tasks",
            )
        self._ctx = ctx
        try:
            return await self.arun(state.query, state=state)
        finally:
            self._ctx = None

    # the chat: earlier turns ride along with each new query, bounded
    def conversation(self, query: str) -> str:
        if not self.history:
            return query
        turns = "\n".join(f"user: {q}\nassistant: {a}" for q, a in self.history[-CHAT_TURNS:])
        return f"Earlier in this conversation:\n{turns[-CHAT_CHARS:]}\n\nNow: {query}"

    def remember(self, query: str, result: AgentResult | None) -> None:
        if result is not None:
            self.history.append((query, result.answer[:2000]))

    def logs(self, mode: str = "summary") -> list[str]:
        """The runs' events read back: ``summary`` (one line a step), ``performance`` (time
        per node and tool, model calls and tokens) or ``errors`` (failures and refusals)."""
        from noetic.agent.logs import render_logs

        return render_logs(self.events, mode)


__all__ = ["Agent", "Finished", "StepEvent", "StreamItem", "TextDelta", "builtin_tools"]
