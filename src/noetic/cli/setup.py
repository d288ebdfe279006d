"""`noetic setup HOST`: wire Noetic into an agent host's configuration (or undo it)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli._common import JsonOpt, emit, esc, group, handled, stdout

app = group(
    "Register Noetic in an agent host: its MCP server, and for Claude Code its hooks and "
    "instructions. Existing files are merged and backed up once; --dry-run shows the diff; "
    "--uninstall removes exactly what was added."
)

ScopeOpt = Annotated[
    str,
    typer.Option(
        "--scope",
        help="project: this project's files (shared through the repository); user: your home "
        "directory's, for every project.",
    ),
]
ProjectOpt = Annotated[
    Path | None,
    typer.Option(
        "--project",
        help="The project folder (default: the git repository's root, else the working directory).",
        show_default=False,
    ),
]
DryRunOpt = Annotated[
    bool, typer.Option("--dry-run", help="Print the unified diff; change nothing.")
]
UninstallOpt = Annotated[
    bool, typer.Option("--uninstall", help="Remove what setup added, restoring the originals.")
]


def executable() -> str:
    """``noetic`` when PATH finds it, else the full path of this installation's script."""
    if shutil.which("noetic"):
        return "noetic"
    beside = Path(sys.executable).parent / "noetic"
    return str(beside) if beside.is_file() else "noetic"


def _project(project: Path | None) -> Path:
    if project is not None:
        return project.expanduser().resolve()
    from noetic.store.location import locate_store

    here = Path.cwd().resolve()
    return locate_store(None, cwd=here).git_root or here


def run_setup(
    host: str, changes: list[Any], *, dry_run: bool, uninstall: bool, as_json: bool
) -> None:
    """Show or apply ``changes`` and report them."""
    from noetic.hosts.files import apply, diff

    with handled(as_json):
        patch = diff(changes)
        if not dry_run:
            apply(changes)
    rows = [
        {"path": str(c.path), "change": c.describe().split(": ", 1)[1], "changed": c.changed}
        for c in changes
    ]
    data = {"host": host, "dry_run": dry_run, "uninstall": uninstall, "files": rows, "diff": patch}

    def render() -> None:
        out = stdout()
        if dry_run:
            sys.stdout.write(patch or "nothing to change\n")
            return
        for c in changes:
            out.print(esc(c.describe()))
        if not any(c.changed for c in changes):
            out.print("nothing to change: " + ("not installed" if uninstall else "already set up"))
        elif not uninstall:
            out.print(f"undo with: noetic setup {host} --uninstall (add the same --scope)")

    emit(data, as_json, render)


@app.command("claude-code")
def claude_code(
    scope: ScopeOpt = "project",
    project: ProjectOpt = None,
    instructions: Annotated[
        bool,
        typer.Option(help="Add the instructions block to CLAUDE.md."),
    ] = True,
    dry_run: DryRunOpt = False,
    uninstall: UninstallOpt = False,
    json: JsonOpt = False,
) -> None:
    """Claude Code: the MCP server (.mcp.json or ~/.claude.json), the hooks (.claude/settings.json
    or ~/.claude/settings.json, each a `noetic hook EVENT` command) and a block of instructions
    in CLAUDE.md."""
    from noetic.hosts import claude_code as host

    with handled(json):
        changes = host.plan(
            scope=scope,
            project=_project(project),
            home=Path.home(),
            command=[executable(), "mcp"],
            uninstall=uninstall,
            instructions=instructions,
        )
    run_setup("claude-code", changes, dry_run=dry_run, uninstall=uninstall, as_json=json)
