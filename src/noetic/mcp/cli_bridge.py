"""``execute_cli_command`` and ``cli_help``: ``noetic`` subcommands run in-process, never a shell.

The command line is split with :mod:`shlex` and checked against an allow-list; what passes runs
through the same typer app as the terminal, with ``--store`` pinned to the server's store so a
client cannot point it elsewhere. Left out on purpose: commands and options that serve, start
other servers, read or write files outside the store (``--vectors-file``, ``--plot``,
``--qdrant``, exports and imports), or call a model (``--provider``: the server's event loop is
already running, and ``query_ai``, ``create_cascade`` and ``observe`` are the tools for that).

An agent reads the output, so by default the command runs with ``--json`` and the parsed
document comes back as ``data`` (the box-drawn tables are for people at a terminal); with
``output="text"`` it gets the text a pipe would get, never wrapped.

Commands act on the calling client's current session: a command that takes ``--session`` and
is given none gets the client's (the one its ``bootstrap_session`` started), and without one it
is refused rather than falling back to a session some other agent started. ``bootstrap`` is left
out for the same reason: ``bootstrap_session`` starts the client's session.

Commands run under click's ``CliRunner``, which swaps stdin, stdout and stderr for buffers while
the command runs: a command can neither read the protocol's stdin nor write onto its stdout.
"""

from __future__ import annotations

import json
import shlex
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from noetic.errors import ValidationError
from noetic.limits import COMMAND_CHARS

_RUNNER = threading.Lock()
"""``CliRunner`` swaps the process's stdin, stdout and stderr while a command runs, so commands
run one at a time (on worker threads, never on the server's event loop)."""

ALLOWED: dict[str, frozenset[str] | None] = {
    "preflight": None,
    "investigate": None,
    "check": None,
    "postflight": None,
    "state": None,
    "outcome": None,
    "recall": None,
    "sessions": frozenset({"list", "show"}),
    "profile": frozenset({"list", "show"}),
    "calibration": frozenset({"report", "beliefs", "drift"}),
    "goals": frozenset({"list", "show", "generate"}),
    "checkpoint": frozenset({"list", "show", "load"}),
    "observe": frozenset({"stats"}),
}
"""Top-level command → allowed subcommands (``None``: the command has none)."""

BLOCKED_OPTIONS = ("--store", "--vectors-file", "--plot", "--qdrant", "--provider")


class CliResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    command: list[str]
    exit_code: int
    stdout: str
    stderr: str
    data: Any = None
    """The JSON document the command printed (``output="json"``), else None."""


def describe_allowed() -> str:
    """The allow-list as an agent reads it: ``sessions list|show, state, ...``."""
    return ", ".join(
        f"{cmd} {'|'.join(sorted(subs))}" if subs else cmd for cmd, subs in sorted(ALLOWED.items())
    )


def _split(command: str) -> list[str]:
    """The command line split as a shell would, once it is within ``command_chars`` (``shlex``
    is slow on long input: the limit keeps one call from costing seconds)."""
    COMMAND_CHARS.check(len(command), "the command")
    try:
        return shlex.split(command)
    except ValueError as exc:
        raise ValidationError(f"cannot parse the command: {exc}", field="command") from None


def parse_command(command: str) -> list[str]:
    """Split and check a command line against the allow-list; return the arguments."""
    try:
        args = _split(command)
    except ValueError as exc:
        raise ValidationError(f"cannot parse the command: {exc}", field="command") from None
    if args and args[0] == "noetic":
        args = args[1:]
    if not args:
        raise ValidationError(
            "empty command", field="command", fix=f"allowed: {describe_allowed()}"
        )
    if args[0] == "bootstrap":
        raise ValidationError(
            "start a session with the bootstrap_session tool, not through the CLI",
            field="command",
            value=args[0],
            fix="call bootstrap_session; later commands here act on the session it returns",
        )
    if args[0] not in ALLOWED:
        raise ValidationError(
            f"'{args[0]}' is not an allowed noetic command",
            field="command",
            value=args[0],
            fix=f"allowed: {describe_allowed()}",
        )
    subs = ALLOWED[args[0]]
    if subs is not None and (len(args) < 2 or args[1] not in subs):
        raise ValidationError(
            f"'noetic {args[0]}' allows only: {', '.join(sorted(subs))}",
            field="command",
            value=" ".join(args[:2]),
        )
    for arg in args:
        option = arg.split("=", 1)[0]
        if option in BLOCKED_OPTIONS:
            raise ValidationError(
                f"{option} cannot be used through MCP", field="command", value=option
            )
    return args


def run_cli(
    command: str,
    store: Path,
    output: Literal["json", "text"] = "json",
    *,
    session_id: str | None = None,
) -> CliResult:
    """Run an allowed command against ``store``, on the client's current session
    ``session_id``: its output and exit code, and with ``output="json"`` the JSON document it
    printed, parsed."""
    from typer.testing import CliRunner

    from noetic.cli import app

    args = [*parse_command(command), "--store", str(store)]
    if _takes_session(args) and not _names_session(args):
        if session_id is None:
            raise ValidationError(
                f"'noetic {args[0]}' acts on a session and this client has none",
                field="command",
                fix="call bootstrap_session first, or pass --session ID",
            )
        args += ["--session", session_id]
    as_json = output == "json"
    if as_json and "--json" not in args:
        args.append("--json")
    # The server's own environment must not choose the agent or the session.
    with _RUNNER:
        result = CliRunner().invoke(
            app, args, input="", env={"NOETIC_SESSION": None, "NOETIC_AI_ID": None}
        )
    data = None
    if as_json and result.stdout.strip():
        try:
            data = json.loads(result.stdout)
        except json.JSONDecodeError:
            data = None
    return CliResult(
        command=["noetic", *args],
        exit_code=result.exit_code,
        stdout=result.stdout,
        stderr=result.stderr,
        data=data,
    )


def _takes_session(args: list[str]) -> bool:
    """Whether the (sub)command named by ``args`` has a ``--session`` option."""
    import typer

    from noetic.cli import app

    command: Any = typer.main.get_command(app)
    for name in args:
        subcommands = getattr(command, "commands", None)
        if subcommands is None or name not in subcommands:
            break
        command = subcommands[name]
    return any(param.name == "session" for param in command.params)


def _names_session(args: list[str]) -> bool:
    return any(a in ("--session", "-s") or a.startswith("--session=") for a in args)


def cli_help(command: str | None = None) -> str:
    """``noetic [command] --help``, as text."""
    from typer.testing import CliRunner

    from noetic.cli import app

    args = _split(command) if command else []
    if args and args[0] == "noetic":
        args = args[1:]
    with _RUNNER:
        result = CliRunner().invoke(app, [*args, "--help"])
    if result.exit_code != 0:
        raise ValidationError(f"no help for {command!r}: {result.output.strip()}", field="command")
    return result.stdout
