"""The ``noetic`` command line (docs/architecture.md, "The command line"): :func:`main` runs the
workflow commands through the fast path and everything else through typer;
``noetic.cli.app`` as an attribute is the whole typer application (for tests and embedding).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# Noetic uses no pydantic plugin: unless the user says otherwise, pydantic is told so, which
# spares the scan of every installed package's entry points at the first model a command
# builds (about 5 ms) and keeps a plugin installed for other programs out of Noetic's own
# validation. A command Noetic runs for the user gets the environment as the user gave it.
_PLUGINS = "PYDANTIC_DISABLE_PLUGINS"
_set_here: set[str] = set()


def main() -> None:
    if _PLUGINS not in os.environ:
        os.environ[_PLUGINS] = "__all__"
        _set_here.add(_PLUGINS)
    args = sys.argv[1:]
    fast_path = os.environ.get("NOETIC_CLI_FAST") != "0"
    if fast_path and args == ["--help"]:  # before anything else is imported
        from noetic.cli import help_cache

        help_cache.show(args, _typer)
        return
    from noetic.cli import fast
    from noetic.cli.exits import refuse_undecodable_argv

    refuse_undecodable_argv(args)
    if fast_path and fast.run(args):
        return
    _typer(args[0] if args else None)


program = False
"""True in ``noetic`` run as a program (:func:`entry`): the process ends as its command answers,
so what it starts in the background is left to the system rather than waited for."""


def entry() -> None:
    """``noetic`` as a program (the console script, ``python -m noetic``): :func:`main`, and
    then the process ends as the interpreter would end it, without tearing the interpreter down
    first (freeing each of its objects one by one, about 5 ms of every command, memory the
    system takes back at once) when that is all that is left: :func:`main` returned or raised
    :class:`SystemExit` with a number, no thread but this one runs, the ``atexit`` handlers
    have run, stdout and stderr are flushed, and no descriptor the command opened is still
    open. Otherwise (or where ``/proc/self/fd`` cannot be read) the interpreter ends as usual.
    Whoever calls :func:`main` in a process of its own (a test, an embedding) keeps it."""
    import gc

    global program
    program = True
    # a command the fast path runs (a workflow command, a hook) is short and builds little that
    # refers to itself in a circle: the cyclic collector, about 25 passes and 2 ms of each as
    # its modules load, is turned back on only for what runs on (typer's commands, the MCP
    # server; see noetic.cli.fast)
    gc.disable()
    opened = _descriptors()
    try:
        main()
    except SystemExit as exc:
        _end(exc.code, opened)
        raise
    finally:
        gc.enable()  # not ended here: the interpreter ends as it always has, collector on
    _end(0, opened)


def _descriptors() -> list[str] | None:
    try:
        return sorted(os.listdir("/proc/self/fd"))
    except OSError:
        return None


def _end(code: object, opened: list[str] | None) -> None:
    """``os._exit(code)`` if nothing but the interpreter's teardown is left (see :func:`entry`);
    otherwise return, and the interpreter ends as usual."""
    code = 0 if code is None else code
    if opened is None or not isinstance(code, int):
        return  # a message to print, or no way to see what is open: the interpreter's way
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return  # the interpreter waits for them
    import atexit

    atexit._run_exitfuncs()  # what the interpreter runs first (and then not again)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # the interpreter reports it, as it always has
    if _descriptors() != opened:
        return  # a file, a database or a pipe still open: closing it is the interpreter's
    os._exit(code)


def users_environment() -> dict[str, str]:
    """This process's environment without what :func:`main` set for Noetic alone: for a
    command Noetic runs on the user's behalf (``noetic run``)."""
    return {k: v for k, v in os.environ.items() if k not in _set_here}


def _typer(command: str | None = None) -> None:
    import gc

    gc.enable()  # typer's commands include servers and long runs (see entry)
    from noetic.cli.application import build

    build(command)()


def __getattr__(name: str) -> Any:
    if name == "app":
        from noetic.cli.application import build

        app = build()
        globals()["app"] = app
        return app
    raise AttributeError(f"module 'noetic.cli' has no attribute {name!r}")


__all__ = ["app", "entry", "main", "users_environment"]
