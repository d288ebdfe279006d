"""``execute_cli_command`` and ``cli_help``: allow-listed ``noetic`` subcommands, each run in a
child process, never a shell (docs/mcp.md, "`execute_cli_command` is not a shell").

The command line is split with :mod:`shlex`, checked against :data:`ALLOWED` and run through the
same typer app as the terminal, with ``--store`` pinned to the server's store and, for a command
that takes ``--session`` and is given none, the calling client's current session (never a
session some other agent started). The child (this interpreter running ``noetic``) gets an empty
stdin and its output captured, so it can neither read the protocol's stdin nor write onto its
stdout, and at :data:`BRIDGE_TIMEOUT_S` it is killed with everything it started: the work really
ends, rather than a thread being abandoned with a lock held. ``cli_help`` reads ``--help`` from
such a child too: the CLI is never imported into the server.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Literal

from noetic.errors import InvalidValueError
from noetic.frozen import Frozen
from noetic.limits import COMMAND_CHARS
from noetic.store.writer import WRITER

BRIDGE_TIMEOUT_S = 100.0
"""How long one bridged command may run before it is killed (under the MCP server's own
120-second limit for a tool, so the caller hears why)."""
MAX_CAPTURED_BYTES = 4_000_000
"""Output kept from one command, per stream."""

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
    "eval": frozenset({"report", "list", "compare"}),
}
"""Top-level command → allowed subcommands (``None``: the command has none)."""

BLOCKED_OPTIONS = ("--store", "--vectors-file", "--plot", "--qdrant", "--provider")


class CliResult(Frozen):
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
    """The command line split as a shell would, without a leading ``noetic``, once it is within
    ``command_chars`` (``shlex`` is slow on long input: the limit keeps one call from costing
    seconds)."""
    COMMAND_CHARS.check(len(command), "the command")
    try:
        args = shlex.split(command)
    except ValueError as exc:
        raise InvalidValueError(f"cannot parse the command: {exc}", field="command") from None
    return args[1:] if args[:1] == ["noetic"] else args


def parse_command(command: str) -> list[str]:
    """Split and check a command line against the allow-list; return the arguments."""
    args = _split(command)
    if not args:
        raise InvalidValueError(
            "empty command", field="command", fix=f"allowed: {describe_allowed()}"
        )
    if args[0] == "bootstrap":
        raise InvalidValueError(
            "start a session with the bootstrap_session tool, not through the CLI",
            field="command",
            value=args[0],
            fix="call bootstrap_session; later commands here act on the session it returns",
        )
    if args[0] not in ALLOWED:
        raise InvalidValueError(
            f"'{args[0]}' is not an allowed noetic command",
            field="command",
            value=args[0],
            fix=f"allowed: {describe_allowed()}",
        )
    subs = ALLOWED[args[0]]
    if subs is not None and (len(args) < 2 or args[1] not in subs):
        raise InvalidValueError(
            f"'noetic {args[0]}' allows only: {', '.join(sorted(subs))}",
            field="command",
            value=" ".join(args[:2]),
        )
    for arg in args:
        option = arg.split("=", 1)[0]
        if option in BLOCKED_OPTIONS:
            raise InvalidValueError(
                f"{option} cannot be used through MCP", field="command", value=option
            )
    return args


def run_cli(
    command: str,
    store: Path,
    output: Literal["json", "text"] = "json",
    *,
    session_id: str | None = None,
    timeout_s: float = BRIDGE_TIMEOUT_S,
) -> CliResult:
    """Run an allowed command against ``store``, on the client's current session
    ``session_id``: its output and exit code, and with ``output="json"`` the JSON document it
    printed, parsed. Past ``timeout_s`` the command is killed and a :class:`InvalidValueError`
    says so."""
    args = [*parse_command(command), "--store", str(store)]
    if _takes_session(args) and not _names_session(args):
        if session_id is None:
            raise InvalidValueError(
                f"'noetic {args[0]}' acts on a session and this client has none",
                field="command",
                fix="call bootstrap_session first, or pass --session ID",
            )
        args += ["--session", session_id]
    as_json = output == "json"
    if as_json and "--json" not in args:
        args.append("--json")
    code, stdout, stderr = _run_child(args, timeout_s)
    data = None
    if as_json and stdout.strip():
        with contextlib.suppress(json.JSONDecodeError):
            data = json.loads(stdout)
    return CliResult(
        command=["noetic", *args], exit_code=code, stdout=stdout, stderr=stderr, data=data
    )


_CHILD = (
    "import sys; from noetic.store.writer import WRITER; WRITER.set(sys.argv.pop(1) or None); "
    "from noetic.cli import main; main()"
)
"""The child's program: its first argument is the token the calling request was made with
(empty for none), so what the command writes records it as the tool's own writes do."""


def _run_child(args: list[str], timeout_s: float) -> tuple[int, str, str]:
    """``noetic ARGS`` in a child process in a session of its own, writing as the calling
    request's token; killed, with what it started, at ``timeout_s``."""
    # The server's own environment must not choose the agent or the session.
    env = {k: v for k, v in os.environ.items() if k not in ("NOETIC_SESSION", "NOETIC_AI_ID")}
    env.update(NO_COLOR="1", PYTHONIOENCODING="utf-8", COLUMNS=env.get("COLUMNS", "100"))
    with subprocess.Popen(
        [sys.executable, "-c", _CHILD, WRITER.get() or "", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    ) as child:
        try:
            out, err = child.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _kill_group(child)
            raise InvalidValueError(
                f"'noetic {' '.join(args[:2])}' ran longer than {timeout_s:g} s and was stopped "
                "(it and everything it started were killed)",
                field="command",
                fix="a command that reads a file waits on nothing here: check the paths given",
            ) from None
        finally:
            _kill_group(child)  # anything the command left running in its group
    return child.returncode, _text(out), _text(err)


def _kill_group(child: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def _text(data: bytes) -> str:
    return data[:MAX_CAPTURED_BYTES].decode("utf-8", "replace")


def _takes_session(args: list[str]) -> bool:
    """Whether the (sub)command named by ``args`` has a ``--session`` option: its own help,
    read from a child as the command itself runs (the CLI is not imported into the server)."""
    code, text = _help(args)
    return code == 0 and "--session" in text


def _names_session(args: list[str]) -> bool:
    return any(a in ("--session", "-s") or a.startswith("--session=") for a in args)


def cli_help(command: str | None = None) -> str:
    """``noetic [command] --help``, as text."""
    args = _split(command) if command else []
    code, text = _help(args)
    if code != 0:
        raise InvalidValueError(f"no help for {command!r}: {text.strip()}", field="command")
    return text


def _help(args: list[str]) -> tuple[int, str]:
    """The exit code and text of ``noetic ARGS --help`` (what failed, on stderr, when it did)."""
    words = list(itertools.takewhile(lambda a: not a.startswith("-"), args))[:2]
    code, out, err = _run_child([*words, "--help"], BRIDGE_TIMEOUT_S)
    return code, out if code == 0 else (err or out)
