"""`noetic cascade run "task" --provider P`: the whole CASCADE on a model, shown live: each
phase as it ends, tool calls, and ACT's reply as the model writes it (on stderr; stdout gets the
result, which repeats the reply unless stdout is the same terminal)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.exits import exit_for_run, handled
from noetic.cli.options import JsonOpt, ProviderOpt, StoreOpt, group
from noetic.cli.output import emit, esc, session_used, stderr, stdout
from noetic.cli.render import table, vector_table
from noetic.runtime.opening import open_tracker

app = group("Autonomous CASCADE runs on a model.")


@app.command()
def run(
    task: Annotated[str, typer.Argument(help="The task to carry out.")],
    provider: ProviderOpt = None,
    profile: Annotated[str | None, typer.Option(help="Profile (default: chosen by model).")] = None,
    workspace: Annotated[
        Path, typer.Option(help="Folder the built-in tools may read.", file_okay=False)
    ] = Path("."),
    timeout: Annotated[float, typer.Option(min=1, help="Wall-clock limit, seconds.")] = 900,
    max_tool_calls: Annotated[int, typer.Option(min=0, help="Tool-call limit.")] = 30,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Run PREFLIGHT → THINK → PLAN → INVESTIGATE ⇄ CHECK → ACT → POSTFLIGHT on a model.

    Exits 0 when the run completed, 5 when it stopped for a person (clarify, delegate) and 3
    when it failed (an unreadable reply, a provider failure, a limit, a refused reset)."""
    import asyncio

    from noetic.events import EventKind
    from noetic.operations.runs import Started, start_cascade

    streamed: list[str] = []
    err = stderr()
    started: list[Started] = []

    def show_text(delta: str) -> None:
        """ACT's reply, as the model writes it (stderr, so stdout stays the result)."""
        if not streamed:
            sys.stderr.write("\n")
        streamed.append(delta)
        sys.stderr.write(delta)
        sys.stderr.flush()

    def live(event: Any) -> None:
        d = event.data
        if streamed and not streamed[-1].endswith("\n"):
            streamed.append("\n")
            sys.stderr.write("\n\n")
        if event.kind == EventKind.PHASE_COMPLETED:
            err.print(f"[bold]{d['phase']:<11}[/] {d['ms']:8.0f} ms")
        elif event.kind == EventKind.DECISION and d.get("rule"):
            err.print(f"            → {d['action']}: {esc(d['reason'])}")
        elif event.kind == EventKind.TOOL_CALL:
            ok = "ok" if d["success"] else "failed"
            err.print(f"            tool {esc(d['tool'])} ({ok})")
        elif event.kind == EventKind.CONSTRAINT_ENFORCED:
            err.print(f"[red]Sentinel[/] {d['rule']}: {d['value']} (limit {d['limit']})")

    def announce(run: Started) -> None:
        started.append(run)
        if not json:
            err.print(
                f"[bold]CASCADE[/] {esc(repr(task))} · profile {esc(run.profile.name)} · "
                f"{esc(run.provider)}"
            )

    with handled(json):
        result = asyncio.run(
            start_cascade(
                open_tracker(store, create=True), task, provider=provider, profile=profile,
                workspace=workspace, timeout=timeout, max_tool_calls=max_tool_calls,
                on_start=announce, on_event=live, on_text=None if json else show_text,
            )
        )  # fmt: skip
    run = started[0]

    def render() -> None:
        out = stdout()
        out.print(
            f"\n[bold]status[/] {result.status.value}"
            + (f" · {esc(result.detail)}" if result.detail else "")
        )
        if result.loop_exit == "max_rounds":
            out.print(_round_limit(result, run.profile.investigation.max_rounds), markup=False)
        if result.output and not (streamed and sys.stdout.isatty()):  # not shown twice
            out.print(result.output, markup=False)
        for q in result.questions:
            out.print(f"? {q}", markup=False)
        if handed := result.delegation:
            out.print(esc(f"delegate: {handed.reason}; needs: {', '.join(handed.needs)}"))
        if result.trajectory:
            first, last = result.trajectory[0], result.trajectory[-1]
            title = f"trajectory: {_phases(result.trajectory)}"
            out.print(vector_table(last.vectors, title, first.vectors))
            out.print(
                " → ".join(f"{p.phase} {p.confidence:.2f} {p.action}" for p in result.trajectory)
            )
        for g in result.tool_gains:
            out.print(
                f"round {g.round} · {esc(g.tool)}: declared +{g.declared:.2f}, the CHECK moved "
                f"confidence {g.observed:+.2f}" + (f" (shared by {g.shared_by} tools)"
                                                    if g.shared_by > 1 else "")
            )  # fmt: skip
        if result.calibration:
            out.print(
                "against itself (PREFLIGHT → POSTFLIGHT; outcomes judge it): "
                f"{result.calibration['classification']}"
            )
        if result.usage is not None:
            out.print(esc(result.usage.line()))
        out.print(session_used(run.session_id, esc(run.ai_id)))

    emit(result, json, render)
    exit_for_run(result.status.value)


@app.command()
def tools(
    ai_id: Annotated[str | None, typer.Option(help="Only this agent's runs.")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Which investigation tools really help: each tool's declared confidence gain beside the
    change in confidence the CHECK after it showed, over every CASCADE run."""
    from noetic.operations.tool_gains import tool_gains
    from noetic.store import open_store

    with handled(json):
        gains = tool_gains(open_store(store), ai_id)

    def render() -> None:
        if not gains:
            stdout().print("no investigation rounds with a tool yet · noetic cascade run …")
            return
        shown = table("tool", "rounds", "declared", "observed", "difference", "alone",
                          "observed alone")  # fmt: skip
        for g in gains:
            shown.add_row(
                esc(g.tool), str(g.rounds), f"+{g.declared:.2f}", f"{g.observed:+.2f}",
                f"{g.difference:+.2f}", str(g.alone),
                "-" if g.observed_alone is None else f"{g.observed_alone:+.2f}",
            )  # fmt: skip
        stdout().print(shown)

    emit([{**g.model_dump(), "difference": g.difference} for g in gains], json, render)


def _phases(trajectory: Any) -> str:
    """``PREFLIGHT → CHECK ×2 → POSTFLIGHT``: every phase the run went through, in order."""
    from itertools import groupby

    runs = [(phase, len(list(same))) for phase, same in groupby(p.phase for p in trajectory)]
    return " → ".join(f"{phase} ×{n}" if n > 1 else phase for phase, n in runs)


def _round_limit(result: Any, max_rounds: int | None) -> str:
    """Why the run acted while still short of ready: the profile's round limit."""
    checks = [p for p in result.trajectory if p.phase == "CHECK"]
    where = f"; confidence {checks[-1].confidence:.2f} at the last CHECK" if checks else ""
    return (
        f"investigation stopped at the round limit ({result.rounds} of {max_rounds} rounds, the "
        f"profile's max_rounds) before the model was ready{where}; it acted on what it had"
    )
