"""`noetic agent gate -- "COMMAND"`: the shell gate's verdict on one command, without running it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from noetic.cli._common import JsonOpt, emit, esc, group, handled, stdout

app = group("The cognitive agent and its shell gate.")

PolicyOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--policy",
        help="A policy file extending the built-in one (repeatable; default: "
        "$NOETIC_SHELL_POLICY).",
        show_default=False,
    ),
]


def policy_files(given: list[Path] | None) -> list[Path]:
    """The policy files named on the command line, else the one in $NOETIC_SHELL_POLICY."""
    if given:
        return given
    env = os.environ.get("NOETIC_SHELL_POLICY")
    return [Path(env)] if env else []


@app.command()
def gate(
    command: Annotated[
        list[str],
        typer.Argument(help="The shell command, after `--` (several words are joined by spaces)."),
    ],
    workspace: Annotated[
        Path, typer.Option(help="The folder the command would run in.", file_okay=False)
    ] = Path("."),
    policy: PolicyOpt = None,
    json: JsonOpt = False,
) -> None:
    """Judge a shell command as the agent's gate would: exit 0 when allowed, 1 when refused."""
    from noetic.errors import ValidationError
    from noetic.tools.shellgate import check_command, load_policy

    with handled(json):
        if not workspace.is_dir():
            raise ValidationError(f"no folder {workspace}", field="workspace", value=str(workspace))
        verdict = check_command(" ".join(command), workspace, load_policy(*policy_files(policy)))

    def render() -> None:
        out = stdout()
        if verdict.allowed:
            out.print("[bold green]allowed[/]")
            return
        out.print("[bold red]refused[/]")
        for v in verdict.violations:
            out.print(f"  [bold]{v.rule}[/] · {esc(v.reason)}")
            out.print(f"    [dim]at[/] {esc(v.part)}")

    emit({**verdict.model_dump(mode="json"), "rule": verdict.rule}, json, render)
    if not verdict.allowed:
        raise typer.Exit(1)
