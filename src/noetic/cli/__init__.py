"""The ``noetic`` command line. Commands live in small modules; heavy imports stay inside them."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer

from noetic.cli import (
    agent,
    calibration,
    cascade,
    doctor,
    goals,
    hooks,
    logs,
    mcp,
    nova,
    observe,
    profiles,
    recall,
    run,
    sessions,
    setup,
    where,
    workflow,
)
from noetic.cli._common import help_when_bare, refuse_undecodable_argv
from noetic.cli.demo import demo

app = typer.Typer(
    name="noetic",
    help="Epistemic infrastructure for LLM agents: assess, investigate, act, calibrate.\n\n"
    'Start with `noetic demo`, or `noetic bootstrap` then `noetic preflight "your task"`.',
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _show_version(value: bool) -> None:
    if value:
        from noetic import __version__

        typer.echo(f"noetic {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
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
    from noetic.cli._common import close_stores

    ctx.call_on_close(close_stores)
    help_when_bare(ctx)


for command in (
    workflow.bootstrap,
    workflow.preflight,
    workflow.investigate,
    workflow.check,
    workflow.postflight,
    workflow.state,
    sessions.rebuild,
    demo,
    mcp.mcp,
    mcp.serve,
    calibration.outcome,
    recall.recall,
    where.where,
    recall.reindex,
    logs.logs,
    hooks.hook,
    run.run,
    doctor.doctor,
):
    app.command()(command)
app.add_typer(sessions.app, name="sessions")
app.add_typer(profiles.app, name="profile")
app.add_typer(calibration.app, name="calibration")
app.add_typer(observe.app, name="observe")
app.add_typer(cascade.app, name="cascade")
app.add_typer(nova.app, name="nova")
app.add_typer(goals.app, name="goals")
app.add_typer(recall.checkpoint_app, name="checkpoint")
app.add_typer(agent.app, name="agent")
app.add_typer(setup.app, name="setup")


def main() -> None:
    # Noetic registers no pydantic plugins; skipping the entry-point scan saves ~15 ms a command.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    refuse_undecodable_argv(sys.argv[1:])
    app()


__all__ = ["app", "main"]
