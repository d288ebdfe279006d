"""`noetic run -- CMD…`: run a command and record its exit status as the open task's outcome."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.options import AiIdOpt, JsonOpt, SessionOpt, StoreOpt
from noetic.cli.output import emit, esc, stderr
from noetic.errors import NoeticError


def run(
    command: Annotated[
        list[str],
        typer.Argument(help="The command and its arguments (after --).", show_default=False),
    ],
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Run a command (its output streamed as it comes) and record its exit status as an
    outcome of the open task when it means pass or fail (pytest 0/1; its 2-5, a signal or a
    command that could not run are not outcomes), the command line as evidence. Exits with
    the command's own status (127 when it cannot be found)."""
    from noetic.cli import users_environment
    from noetic.hosts.testing.recording import CommandNotRunnable, run_command

    try:
        code = run_command(command, stdout=sys.stderr if json else None, env=users_environment())
    except CommandNotRunnable as exc:
        if json:
            emit({"command": command, "exit_code": exc.exit_code, "error": str(exc)}, True)
        else:
            stderr().print(f"[bold red]error:[/] {esc(exc)}")
        raise typer.Exit(exc.exit_code) from None
    record, reason = _record(command, code, session, ai_id, store)
    if json:
        emit(
            {"command": command, "exit_code": code, "outcome": record, "not_recorded": reason}, True
        )
    elif record is not None:
        stderr().print(
            f"[dim]noetic: outcome {record.score:.0f} recorded for task {record.cascade_id} "
            f"(exit {code})[/]"
        )
    else:
        stderr().print(f"[dim]noetic: exit {code} not recorded: {esc(reason)}[/]")
    raise typer.Exit(code)


def _record(
    command: list[str], code: int, session: str | None, ai_id: str | None, store: Path | None
) -> tuple[Any, str | None]:
    """The outcome recorded, or None with the reason (the command's status stands either way)."""
    import shlex

    from noetic.hosts.testing.commands import run_status
    from noetic.hosts.testing.recording import record_exit
    from noetic.runtime.opening import open_tracker, optional_current_session

    status = run_status(command, code, Path.cwd())
    if status.score is None:
        return None, f"not an outcome: {status.meaning}"
    try:
        tracker = open_tracker(store)
        sid = optional_current_session(tracker, session, ai_id)
        if sid is None:
            return None, "no current session (bootstrap one, or pass --session)"
        record = record_exit(
            tracker.store, sid, shlex.join(command), code, status.score, via="noetic run"
        )
    except NoeticError as exc:
        return None, exc.message
    if record is None:
        return None, f"session {sid} has no open task"
    return record, None
