"""The typer application: every command and group, registered in the order ``--help`` lists them.

:func:`build` registers only the command being run when it is named, so a command pays for its
own options and imports, not for the other thirty; ``--help``, completion and an unknown name
get the whole application (and typer's suggestions).
"""

from __future__ import annotations

from importlib import import_module
from typing import Annotated

import typer

from noetic.cli.options import help_when_bare

# name → (module, attribute, is a group). Order is the order of `noetic --help`.
COMMANDS: dict[str, tuple[str, str, bool]] = {
    "bootstrap": ("noetic.cli.typer_commands", "bootstrap", False),
    "preflight": ("noetic.cli.typer_commands", "preflight", False),
    "investigate": ("noetic.cli.typer_commands", "investigate", False),
    "check": ("noetic.cli.typer_commands", "check", False),
    "postflight": ("noetic.cli.typer_commands", "postflight", False),
    "state": ("noetic.cli.typer_commands", "state", False),
    "rebuild": ("noetic.cli.sessions", "rebuild", False),
    "demo": ("noetic.cli.demo", "demo", False),
    "mcp": ("noetic.cli.typer_commands", "mcp", False),
    "serve": ("noetic.cli.mcp", "serve", False),
    "dashboard": ("noetic.cli.dashboard", "dashboard", False),
    "outcome": ("noetic.cli.typer_commands", "outcome", False),
    "recall": ("noetic.cli.recall", "recall", False),
    "where": ("noetic.cli.where", "where", False),
    "migrate": ("noetic.cli.migrate", "migrate", False),
    "reindex": ("noetic.cli.recall", "reindex", False),
    "logs": ("noetic.cli.logs", "logs", False),
    "hook": ("noetic.cli.typer_commands", "hook", False),
    "run": ("noetic.cli.run", "run", False),
    "doctor": ("noetic.cli.doctor", "doctor", False),
    "sessions": ("noetic.cli.sessions", "app", True),
    "profile": ("noetic.cli.profiles", "app", True),
    "calibration": ("noetic.cli.calibration", "app", True),
    "observe": ("noetic.cli.observe", "app", True),
    "cascade": ("noetic.cli.cascade", "app", True),
    "nova": ("noetic.cli.nova", "app", True),
    "goals": ("noetic.cli.goals", "app", True),
    "checkpoint": ("noetic.cli.recall", "checkpoint_app", True),
    "agent": ("noetic.cli.agent", "app", True),
    "eval": ("noetic.cli.evaluate", "app", True),
    "setup": ("noetic.cli.setup", "app", True),
    "token": ("noetic.cli.access_tokens", "app", True),
}


def _show_version(value: bool) -> None:
    if value:
        from noetic import __version__

        typer.echo(f"noetic {__version__}")
        raise typer.Exit()


def _root(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_show_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Bare `noetic` prints this help and succeeds; `noetic --version` prints the version."""
    from noetic.store import close_stores, command_stores

    command_stores()
    ctx.call_on_close(close_stores)
    help_when_bare(ctx)


def build(command: str | None = None) -> typer.Typer:
    """The application with every command, or with only ``command`` when it is one of them."""
    app = typer.Typer(
        name="noetic",
        help="Epistemic infrastructure for LLM agents: assess, investigate, act, calibrate.\n\n"
        'Start with `noetic demo`, or `noetic bootstrap` then `noetic preflight "your task"`.',
        add_completion=True,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
    )
    app.callback(invoke_without_command=True)(_root)
    names = [command] if command in COMMANDS else list(COMMANDS)
    for name in names:
        module, attribute, is_group = COMMANDS[name]
        target = getattr(import_module(module), attribute)
        if is_group:
            app.add_typer(target, name=name)
        else:
            app.command(name=name)(target)
    return app
