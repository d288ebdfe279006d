"""The ``noetic`` command line. Commands live in small modules; heavy imports stay inside them."""

from __future__ import annotations

import os

import typer

from noetic.cli import (
    calibration,
    cascade,
    goals,
    mcp,
    observe,
    profiles,
    recall,
    sessions,
    workflow,
)
from noetic.cli.demo import demo

app = typer.Typer(
    name="noetic",
    help="Epistemic infrastructure for LLM agents: assess, investigate, act, calibrate.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

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
):
    app.command()(command)
app.add_typer(sessions.app, name="sessions")
app.add_typer(profiles.app, name="profile")
app.add_typer(calibration.app, name="calibration")
app.add_typer(observe.app, name="observe")
app.add_typer(cascade.app, name="cascade")
app.add_typer(goals.app, name="goals")
app.add_typer(recall.checkpoint_app, name="checkpoint")


def main() -> None:
    # Noetic registers no pydantic plugins; skipping the entry-point scan saves ~15 ms a command.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    app()


__all__ = ["app", "main"]
