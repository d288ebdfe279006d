"""`noetic agent "query"`, the chat loop, `resume`, `tasks`, and `gate -- "COMMAND"`.

`noetic agent "query"` runs the agent once, its steps on stderr as they happen and the answer on
stdout; bare `noetic agent` opens a chat that keeps the conversation's memory; `noetic agent
resume TASK` picks up a task that was interrupted; `noetic agent gate` judges one shell command
without running it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.default_command import DefaultCommandGroup
from noetic.cli.exits import exit_for_run, handled
from noetic.cli.options import JsonOpt, ProviderOpt, StoreOpt, with_options
from noetic.cli.output import emit, esc, stderr, stdout
from noetic.cli.render import table
from noetic.errors import InvalidValueError, UsageError


class _AgentGroup(DefaultCommandGroup):
    """`noetic agent "query"` runs it; `noetic agent` alone (or with options only) chats."""

    def route(self, args: list[str]) -> list[str]:
        if not args or (args[0].startswith("-") and args[0] not in ("--help", "-h")):
            return ["chat", *args]
        return super().route(args)


app = typer.Typer(
    help='The cognitive agent: noetic agent "query", or noetic agent to chat.',
    cls=_AgentGroup,
    no_args_is_help=False,
)

PolicyOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--policy",
        help="A policy file extending the built-in one (repeatable; default: "
        "$NOETIC_SHELL_POLICY).",
        show_default=False,
    ),
]


def policy_files(given: list[Path] | None) -> list[Path]:
    """The policy files named on the command line, else the one in $NOETIC_SHELL_POLICY; each
    must be a regular file (a FIFO or a device would hang the policy's read)."""
    from noetic.untrusted import check_regular_file

    env = os.environ.get("NOETIC_SHELL_POLICY")
    files = given or ([Path(env)] if env else [])
    for named in files:
        check_regular_file(named, f"the shell policy {named}")
    return files


@app.command()
def gate(
    command: Annotated[
        list[str],
        typer.Argument(help="The shell command, after `--` (several words are joined by spaces)."),
    ],
    workspace: Annotated[
        Path, typer.Option(help="The folder the command would run in.", file_okay=False)
    ] = Path("."),
    policy: PolicyOpt = None,
    sandboxed: Annotated[
        bool,
        typer.Option(
            "--sandboxed",
            help="Judge it as run inside the OS sandbox, which contains code the gate cannot read.",
        ),
    ] = False,
    json: JsonOpt = False,
) -> None:
    """Judge a shell command as the agent's gate would: exit 0 when allowed, 1 when refused."""
    from noetic.tools.shellgate import check_command, load_policy

    with handled(json):
        if not workspace.is_dir():
            raise InvalidValueError(
                f"no folder {workspace}", field="workspace", value=str(workspace)
            )
        verdict = check_command(
            " ".join(command), workspace, load_policy(*policy_files(policy)), sandboxed=sandboxed
        )

    def render() -> None:
        out = stdout()
        if verdict.allowed:
            out.print("[bold green]allowed[/]")
            return
        out.print("[bold red]refused[/]")
        for v in verdict.violations:
            out.print(f"  [bold]{v.rule}[/] · {esc(v.reason)}")
            if v.detail:
                out.print(f"    {esc(v.detail)}")
            out.print(f"    [dim]at[/] {esc(v.part)}")

    emit({**verdict.as_dict(), "rule": verdict.rule}, json, render)
    if not verdict.allowed:
        raise typer.Exit(1)


@with_options
def _agent_options(
    provider: ProviderOpt = None,
    workspace: Annotated[
        Path, typer.Option(help="The folder the agent works in (its tools cannot leave it).")
    ] = Path("."),
    mode: Annotated[str, typer.Option(help="fast, adapt (switches as needed) or deep.")] = "adapt",
    sandbox: Annotated[
        str,
        typer.Option(help="required (refuse without one), auto (use one when there is) or off."),
    ] = "auto",
    memory: Annotated[bool, typer.Option(help="Keep and use a profile of the user.")] = True,
    max_iterations: Annotated[int, typer.Option(min=1, max=100, help="Reason steps at most.")] = 10,
    max_tokens: Annotated[
        int | None, typer.Option(min=1, help="Token budget of the run.", show_default=False)
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Wall-clock limit, seconds.")] = 900,
    policy: PolicyOpt = None,
    user: Annotated[str, typer.Option(help="Whose profile the agent keeps.")] = "default",
    approve: Annotated[
        str | None,
        typer.Option(
            help="Wrap the run in CASCADE and hold irreversible actions until a CHECK clears them: "
            "never (CHECK alone), ask (ask you when CHECK does not), always (ask you every time).",
            show_default=False,
        ),
    ] = None,
    store: StoreOpt = None,
) -> None:
    """The options of every command that runs the agent (run, resume, chat)."""


async def _ask_person(question: str) -> bool:
    """Ask on the terminal; with no terminal the answer is no."""
    import asyncio

    if not sys.stdin.isatty():
        return False
    stderr().print(f"[bold yellow]{esc(question)}[/] Allow? [y/N] ", end="")
    answer = await asyncio.to_thread(sys.stdin.readline)
    return answer.strip().lower() in ("y", "yes")


def _agent(*, policy: list[Path] | None, **options: Any) -> Any:
    from noetic.operations.agent_runs import open_agent

    return open_agent(ask=_ask_person, policy_files=tuple(policy_files(policy)), **options)


def _shown(as_json: bool) -> Any:
    """What to do with each streamed item: the answer's text on stdout, the steps on stderr
    (nothing under ``--json``: the result is the one document)."""
    from noetic.agent import StepEvent, TextDelta
    from noetic.events import EventKind

    err = stderr()

    def show(item: Any) -> None:
        if as_json:
            return
        if isinstance(item, TextDelta):
            sys.stdout.write(item.text)
            sys.stdout.flush()
        if not isinstance(item, StepEvent):
            return
        e, d = item.event, item.event.data
        if e.kind == EventKind.PHASE_ENTERED and d["phase"] == "reason":
            err.print(f"[bold]reason[/] {d['stage'] + 1}")
        elif e.kind == EventKind.DECISION:
            err.print(f"[cyan]{esc(d['action'])}[/] · {esc(d['reason'])}")
        elif e.kind == EventKind.TOOL_CALL:
            mark = "[green]ok[/]" if d["success"] else f"[red]failed[/] {esc(d.get('error') or '')}"
            err.print(f"  [bold]{esc(d['tool'])}[/] {mark} [dim]{d.get('ms') or 0:.0f} ms[/]")
        elif e.kind == EventKind.CONSTRAINT_ENFORCED:
            err.print(f"[yellow]limit[/] {esc(d['rule'])} ({d['value']:g} of {d['limit']:g})")

    return show


def _end_line(result: Any, as_json: bool) -> Any:
    """The streamed answer ends with a newline."""
    if result is not None and not as_json and result.answer and not result.answer.endswith("\n"):
        sys.stdout.write("\n")
    return result


async def _stream(agent: Any, query: str, state: Any, as_json: bool) -> Any:
    from noetic.operations.agent_runs import start_agent

    result = await start_agent(agent, query, state=state, on_item=_shown(as_json))
    return _end_line(result, as_json)


def _report(result: Any, agent: Any, as_json: bool) -> None:
    if as_json:
        emit({**result.model_dump(mode="json"), "sandbox": agent.notice}, True)
        return
    stderr().print(
        f"[dim]{result.status} · depth {result.depth} · {result.iterations} step(s) · "
        f"{len(result.tool_calls)} tool call(s) · {result.tokens} tokens · task {result.task_id}[/]"
    )


@app.command("run", hidden=True)
@_agent_options
def run(
    query: Annotated[str, typer.Argument(help="What to ask or do.")],
    options: dict[str, Any],
    json: JsonOpt = False,
) -> None:
    """Run the agent on one query: steps on stderr as they happen, the answer on stdout."""
    import asyncio

    with handled(json):
        agent = _agent(**options)
        if not json and agent.notice:
            stderr().print(f"[dim]sandbox: {esc(agent.notice)}[/]")
        result = asyncio.run(_stream(agent, query, None, json))
    _report(result, agent, json)
    exit_for_run(result.status)


@app.command()
@_agent_options
def resume(
    task: Annotated[str, typer.Argument(help="The task id (or a unique prefix).")],
    options: dict[str, Any],
    json: JsonOpt = False,
) -> None:
    """Resume an interrupted task from its saved workspace."""
    import asyncio

    from noetic.operations.agent_runs import resume_agent

    def resuming(state: Any) -> None:
        if not json:
            stderr().print(f"[dim]resuming {state.task_id}: {esc(state.query)}[/]")

    with handled(json):
        agent = _agent(**options)
        result = _end_line(
            asyncio.run(resume_agent(agent, task, on_start=resuming, on_item=_shown(json))), json
        )
    _report(result, agent, json)
    exit_for_run(result.status)


@app.command()
def tasks(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The agent's recent tasks and their status (running ones can be resumed)."""
    from noetic.store import open_store
    from noetic.store.agent_memory import list_workspaces

    with handled(json):
        listed = list_workspaces(open_store(store))

    def render() -> None:
        out = stdout()
        if not listed:
            out.print("no agent tasks yet")
            return
        shown = table("task", "status", "updated", "user", "query")
        for t in listed:
            shown.add_row(t["task_id"], t["status"], t["updated_at"][:19], esc(t["user_id"]),
                          esc(t["query"][:70]))  # fmt: skip
        out.print(shown)

    emit(listed, json, render)


@app.command()
def forget(
    user: Annotated[
        str | None, typer.Option(help="Forget this user: their profile and all their tasks.")
    ] = None,
    task: Annotated[
        str | None, typer.Option(help="Forget one task's workspace (or prefix).")
    ] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Make the agent forget a user (--user) or one task (--task): the rows are deleted."""
    from noetic.agent.memory import AgentMemory
    from noetic.store import open_store

    with handled(json):
        if (user is None) == (task is None):
            raise UsageError("name what to forget", fix="pass --user NAME or --task ID")
        memory = AgentMemory(open_store(store))
        tasks = memory.forget_user(user) if user is not None else [memory.forget_task(task or "")]
    data = {"user_id": user, "tasks": tasks}
    who = f"user {user!r}: their profile and " if user is not None else ""
    said = f"forgot {who}{len(tasks)} task workspace(s)" + (
        f": {', '.join(tasks)}" if tasks else ""
    )
    emit(data, json, lambda: stdout().print(esc(said)))


@app.command("chat", hidden=True)
@_agent_options
def chat(
    options: dict[str, Any],
    json: JsonOpt = False,
) -> None:
    """Chat with the agent: each line is a query; the conversation and memory carry over."""
    import asyncio

    with handled(json):
        agent = _agent(**options)
        err = stderr()
        if not json:
            err.print("[dim]noetic agent: one request per line; an empty line or Ctrl-D ends[/]")
            if agent.notice:
                err.print(f"[dim]sandbox: {esc(agent.notice)}[/]")

        async def loop() -> None:
            while True:
                if not json and sys.stdin.isatty():
                    err.print("[bold]›[/] ", end="")
                line = await asyncio.to_thread(sys.stdin.readline)
                if not line.strip():
                    return
                result = await _stream(agent, agent.conversation(line.strip()), None, json)
                agent.remember(line.strip(), result)
                _report(result, agent, json)

        asyncio.run(loop())
