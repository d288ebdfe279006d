"""The fast path: the commands an agent or its host runs several times a task, without typer.

``noetic check --vectors '{…}' --json`` spends most of a typer invocation importing typer, its
pydantic adapters and building parameters, before any work starts. Plain invocations of the
workflow commands (bootstrap, preflight, investigate, check, postflight, state) and of
``noetic hook EVENT`` (a host runs it on every tool call) and ``noetic mcp`` (a host starts
it every session and waits for it) are parsed here instead and call :mod:`noetic.cli.workflow`,
:mod:`noetic.cli.hooks` or :mod:`noetic.cli.mcp_stdio` directly. Anything this parser is not
sure of — ``--help``, an unknown or misspelt option, a missing value, ``--``, a value that
looks like an option, an empty value — goes to typer unchanged, so help and error messages are
always typer's. ``tests/cli/test_fast_path.py`` holds :data:`COMMANDS` to the typer declarations
(:mod:`noetic.cli.declared`): the same options, and the same values for any command
line both accept.
"""

from __future__ import annotations

import errno
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Opt:
    """One option: the parameter it sets, its spellings, and how its value is read."""

    dest: str
    flags: tuple[str, ...]
    kind: type = str  # str, Path, or bool for a flag
    envvar: str | None = None
    off_flags: tuple[str, ...] = ()  # a flag's negative spelling (--no-…)
    required: bool = False


@dataclass(frozen=True)
class Command:
    options: tuple[Opt, ...]
    arguments: tuple[str, ...] = ()  # required positional parameters, in order
    module: str = "noetic.cli.workflow"  # where the function of the command's name lives


_VECTORS = Opt("vectors", ("--vectors",))
_VECTORS_FILE = Opt("vectors_file", ("--vectors-file",), Path)
_PROVIDER = Opt("provider", ("--provider",))
_SESSION = Opt("session", ("--session", "-s"), envvar="NOETIC_SESSION")
_AI_ID = Opt("ai_id", ("--ai-id",), envvar="NOETIC_AI_ID")
_STORE = Opt("store", ("--store",), Path)
_JSON = Opt("json", ("--json",), bool)
_ASSESS = (_VECTORS, _VECTORS_FILE, _PROVIDER, _SESSION, _AI_ID, _STORE, _JSON)

COMMANDS: dict[str, Command] = {
    "bootstrap": Command(
        (
            Opt("profile", ("--profile",)),
            Opt("ai_model", ("--ai-model",)),
            Opt("domain", ("--domain",)),
            _AI_ID,
            Opt("project", ("--project",)),
            Opt("recall", ("--recall",)),
            _VECTORS,
            _STORE,
            _JSON,
        )
    ),
    "preflight": Command(
        (
            _VECTORS,
            _VECTORS_FILE,
            Opt("abandon_open", ("--abandon-open",), bool, off_flags=("--no-abandon-open",)),
            _PROVIDER,
            _SESSION,
            _AI_ID,
            _STORE,
            _JSON,
        ),
        arguments=("task",),
    ),
    "investigate": Command(
        (
            Opt("note", ("--note",), required=True),
            Opt("tool", ("--tool",)),
            Opt("vector", ("--vector",)),
            _SESSION,
            _AI_ID,
            _STORE,
            _JSON,
        )
    ),
    "check": Command(_ASSESS),
    "postflight": Command(_ASSESS),
    "state": Command((_SESSION, _AI_ID, _STORE, _JSON)),
    "hook": Command((_STORE,), arguments=("event",), module="noetic.cli.hooks"),
    # a host starts it at the beginning of every session, and waits for its tool list
    "mcp": Command((_STORE,), module="noetic.cli.mcp_stdio"),
}


def parse(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``(command, keyword arguments)`` for a plain invocation of a workflow command; None for
    anything typer should see. Parameters not given are left to the function's defaults."""
    if not args or args[0] not in COMMANDS:
        return None
    name, command = args[0], COMMANDS[args[0]]
    spelled: dict[str, tuple[Opt, bool]] = {}
    for opt in command.options:
        spelled.update({flag: (opt, True) for flag in opt.flags})
        spelled.update({flag: (opt, False) for flag in opt.off_flags})
    values: dict[str, Any] = {}
    positional: list[str] = []
    rest = iter(args[1:])
    for token in rest:
        if not token.startswith("-"):
            positional.append(token)
            continue
        flag, equals, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if flag not in spelled:
            return None
        opt, on = spelled[flag]
        if opt.kind is bool:
            if equals:
                return None
            values[opt.dest] = on
            continue
        value = inline if equals else next(rest, None)
        if value is None or value == "" or value.startswith("-"):
            return None
        values[opt.dest] = value
    if len(positional) != len(command.arguments):
        return None
    values.update(zip(command.arguments, positional, strict=True))
    for opt in command.options:
        if opt.dest not in values and opt.envvar and os.environ.get(opt.envvar):
            values[opt.dest] = os.environ[opt.envvar]
        if opt.required and opt.dest not in values:
            return None
        if opt.kind is Path and opt.dest in values:
            values[opt.dest] = Path(values[opt.dest])
    return name, values


def run(args: list[str]) -> bool:
    """Run a plain workflow command and return True; False when typer should handle ``args``.
    Ends as typer would: Ctrl-C prints ``Aborted!`` and exits 1, a closed pipe exits 1."""
    parsed = parse(args)
    if parsed is None:
        return False
    name, kwargs = parsed
    from importlib import import_module

    from noetic.cli._common import close_stores

    try:
        try:
            getattr(import_module(COMMANDS[name].module), name)(**kwargs)
        finally:
            close_stores()
    except KeyboardInterrupt:
        print(file=sys.stderr)
        print("Aborted!", file=sys.stderr)
        raise SystemExit(1) from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # Nothing more can reach the closed pipe; what is buffered must not fail at exit.
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (open until the process ends)
        raise SystemExit(1) from None
    return True
