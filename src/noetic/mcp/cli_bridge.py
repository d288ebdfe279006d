"""``execute_cli_command``: ``noetic`` subcommands run in-process, never through a shell.

The command line is split with :mod:`shlex`; only allow-listed subcommands run, through the
same typer app as the terminal, with ``--store`` pinned to the server's store so a client cannot
point it elsewhere. Commands that serve, start servers or write files outside the store are not
on the list.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from noetic.errors import ValidationError

ALLOWED: dict[str, frozenset[str] | None] = {
    "state": None,
    "bootstrap": None,
    "preflight": None,
    "check": None,
    "investigate": None,
    "postflight": None,
    "sessions": frozenset({"list", "show"}),
    "profile": frozenset({"list", "show"}),
}


class CliResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    command: list[str]
    exit_code: int
    stdout: str
    stderr: str


def parse_command(command: str) -> list[str]:
    """Split and check a command line against the allow-list; return the arguments."""
    try:
        args = shlex.split(command)
    except ValueError as exc:
        raise ValidationError(f"cannot parse the command: {exc}", field="command") from None
    if args and args[0] == "noetic":
        args = args[1:]
    allowed = ", ".join(sorted(ALLOWED))
    if not args:
        raise ValidationError("empty command", field="command", fix=f"allowed: {allowed}")
    sub = ALLOWED.get(args[0], False)
    if sub is False:
        raise ValidationError(
            f"'{args[0]}' is not an allowed noetic command",
            field="command",
            fix=f"allowed: {allowed}",
        )
    if sub is not None and (len(args) < 2 or args[1] not in sub):
        raise ValidationError(
            f"'noetic {args[0]}' allows only: {', '.join(sorted(sub))}", field="command"
        )
    if any(a == "--store" or a.startswith("--store=") for a in args):
        raise ValidationError("--store cannot be set from MCP", field="command")
    if any(a in ("--vectors-file",) or a.startswith("--vectors-file=") for a in args):
        raise ValidationError(
            "--vectors-file cannot be used from MCP; pass --vectors", field="command"
        )
    return args


def run_cli(command: str, store: Path) -> CliResult:
    from typer.testing import CliRunner

    from noetic.cli import app

    args = [*parse_command(command), "--store", str(store)]
    result = CliRunner().invoke(app, args, input="")
    return CliResult(
        command=["noetic", *args],
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
    )


def cli_help(command: str | None = None) -> str:
    from typer.testing import CliRunner

    from noetic.cli import app

    args = shlex.split(command) if command else []
    if args and args[0] == "noetic":
        args = args[1:]
    result = CliRunner().invoke(app, [*args, "--help"])
    if result.exit_code != 0:
        raise ValidationError(f"no help for {command!r}: {result.output.strip()}", field="command")
    return result.stdout
