"""The fast path: the commands an agent or its host runs several times a task, parsed without
typer (docs/architecture.md, "The command line").

A typer invocation spends most of its time importing typer and building parameters before any
work starts. Anything this parser is not sure of — ``--help``, an unknown or misspelt option, a
missing value, ``--``, a value that looks like an option, an empty value — goes to typer
unchanged, so help and error messages are always typer's; ``tests/cli/test_fast_path.py``
checks that whatever this parser accepts it reads exactly as typer does.
"""

from __future__ import annotations

import errno
import os
import re
import sys
from pathlib import Path

from noetic.cli.declared import COMMANDS, Opt

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# compiled by re at its first use (an option that takes a number), not as the module loads
_NUMBER = r"\+?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?"


def parse(args: list[str]) -> tuple[str, dict[str, Any]] | None:
    """``(command, keyword arguments)`` for a plain invocation of a workflow command; None for
    anything typer should see. The values are those given on the command line or by an
    environment variable; :func:`run` adds the declared defaults of the rest."""
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
    required = sum(a.required for a in command.arguments)
    if not required <= len(positional) <= len(command.arguments):
        return None
    values.update(zip((a.dest for a in command.arguments), positional, strict=False))
    for opt in command.options:
        if opt.dest not in values and opt.envvar and os.environ.get(opt.envvar):
            values[opt.dest] = os.environ[opt.envvar]
        if opt.required and opt.dest not in values:
            return None
        if opt.kind is Path and opt.dest in values:
            values[opt.dest] = Path(values[opt.dest])
        if opt.kind is float and opt.dest in values:
            # a plain decimal number only; anything else (inf, 1_000, a space) is typer's
            if not re.fullmatch(_NUMBER, values[opt.dest]):
                return None
            values[opt.dest] = float(values[opt.dest])
    return name, values


def invoke(name: str, *arguments: str, **values: Any) -> None:
    """Run a command with ``values`` (the positional arguments by position or by name): every
    option not given takes its declared default; environment variables are not read here (the
    fast path's parser has read them). ``noetic demo`` walks the workflow this way."""
    command = COMMANDS[name]
    given = dict(zip((a.dest for a in command.arguments), arguments, strict=False))
    # __import__ rather than importlib.import_module: importlib (and the warnings it loads) is
    # not needed for a module named in full
    __import__(command.module)
    getattr(sys.modules[command.module], name)(**{**command.defaults(), **given, **values})


def run(args: list[str]) -> bool:
    """Run a plain workflow command and return True; False when typer should handle ``args``.
    Ends as typer would: Ctrl-C prints ``Aborted!`` and exits 1, a closed pipe exits 1."""
    parsed = parse(args)
    if parsed is None:
        return False
    name, kwargs = parsed
    if name == "mcp":
        import gc

        gc.enable()  # a server runs on: its cyclic garbage is collected (see noetic.cli.entry)
    from noetic.store import close_stores, command_stores

    command_stores()
    try:
        try:
            invoke(name, **kwargs)
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
