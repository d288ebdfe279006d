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


def main() -> None:
    # Noetic registers no pydantic plugins; skipping the entry-point scan saves ~10 ms a command.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
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


__all__ = ["app", "main"]
