"""The ``noetic`` command line. Commands live in small modules; heavy imports stay inside them.

:func:`main` runs the workflow commands through the fast path (:mod:`noetic.cli.fast`;
``NOETIC_CLI_FAST=0`` turns it off) and everything else through typer
(:mod:`noetic.cli.application`), building only the command being run; ``noetic --help``
is typer's text replayed from a cache (:mod:`noetic.cli.help_cache`).
``noetic.cli.app`` as an attribute is the whole typer application (for tests and embedding).
"""

from __future__ import annotations

import os
import sys
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


def users_environment() -> dict[str, str]:
    """This process's environment without what :func:`main` set for Noetic alone: for a
    command Noetic runs on the user's behalf (``noetic run``)."""
    return {k: v for k, v in os.environ.items() if k not in _set_here}


def _typer(command: str | None = None) -> None:
    from noetic.cli.application import build

    build(command)()


def __getattr__(name: str) -> Any:
    if name == "app":
        from noetic.cli.application import build

        app = build()
        globals()["app"] = app
        return app
    raise AttributeError(f"module 'noetic.cli' has no attribute {name!r}")


__all__ = ["app", "main", "users_environment"]
