"""The options every command shares, and command groups: what typer needs to build the CLI.

Kept apart from :mod:`noetic.cli._common` so that running a workflow command through the fast
path (:mod:`noetic.cli.fast`) never imports typer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
StoreOpt = Annotated[
    Path | None,
    typer.Option(
        "--store",
        help="Store directory (default: .noetic in the project, or $NOETIC_HOME).",
        show_default=False,
    ),
]
SessionOpt = Annotated[
    str | None,
    typer.Option(
        "--session",
        "-s",
        envvar="NOETIC_SESSION",
        help="Session id or prefix (default: $NOETIC_SESSION, else the agent's current session).",
        show_default=False,
    ),
]
AiIdOpt = Annotated[
    str | None,
    typer.Option(
        "--ai-id",
        envvar="NOETIC_AI_ID",
        help="The agent acting: its current session is used (default: $NOETIC_AI_ID, else "
        "'agent').",
        show_default=False,
    ),
]


def help_when_bare(ctx: typer.Context) -> None:
    """A command group run without a subcommand prints its help and succeeds."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit()


def group(help: str, **options: Any) -> typer.Typer:
    """A command group (``noetic sessions``…): without a subcommand it prints its help."""
    return typer.Typer(help=help, callback=help_when_bare, invoke_without_command=True, **options)
