"""`noetic doctor`: check the store, the schema, the provider, the embedder, git notes and the
installed host integrations, and say what to fix."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt
from noetic.cli.output import emit, esc, stdout

_MARK = {"ok": "[green]ok  [/]", "warn": "[yellow]warn[/]", "fail": "[bold red]fail[/]"}


def doctor(
    call: Annotated[
        bool, typer.Option("--call", help="Also send the configured provider one short request.")
    ] = False,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Check everything Noetic relies on here and say what to fix; exits 1 when something
    must be fixed (warnings alone exit 0). Writes nothing."""
    from noetic.hosts.setup.doctor import diagnose

    with handled(json):
        report = diagnose(store=store, project=Path.cwd(), home=Path.home(), call=call)

    def render() -> None:
        out = stdout()
        for c in report.checks:
            out.print(f"{_MARK[c.status]} {esc(c.name)}: {esc(c.detail)}")
            if c.fix and c.status != "ok":
                out.print(f"      [dim]fix:[/] {esc(c.fix)}")

    emit(report, json, render)
    if report.failed:
        raise typer.Exit(1)
