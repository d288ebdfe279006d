"""`noetic setup HOST`: wire Noetic into an agent host's configuration (or undo it)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, group
from noetic.cli.output import emit, esc, stderr, stdout

app = group(
    "Register Noetic in an agent host: its MCP server, and for Claude Code its hooks and "
    "instructions. Existing files are merged and backed up once; --dry-run shows the diff; "
    "--uninstall removes exactly what was added."
)

ScopeOpt = Annotated[
    str | None,
    typer.Option(
        "--scope",
        help="project: this project's files (shared through the repository); user: your home "
        "directory's, for every project. Default: project (user for codex).",
        show_default=False,
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


def _setup(
    name: str,
    scope: str | None,
    project: Path | None,
    dry_run: bool,
    uninstall: bool,
    as_json: bool,
    notes: list[str] | None = None,
    extra: dict[str, Any] | None = None,
    **options: Any,
) -> None:
    """Plan the host's changes, then show or apply them and report (``notes``: lines printed
    after the files, ``extra``: keys added to the JSON document)."""
    from noetic.hosts import host
    from noetic.hosts.setup.config_edits import apply, diff

    module = host(name)
    command = [executable(), "mcp"]
    with handled(as_json):
        chosen = scope or module.DEFAULT_SCOPE
        changes = module.plan(
            scope=chosen,
            project=_project(project),
            home=Path.home(),
            command=command,
            uninstall=uninstall,
            **options,
        )
        manual = module.manual(chosen, command)
        patch = diff(changes)
        if not dry_run:
            apply(changes)
    rows = [
        {"path": str(c.path), "change": c.describe().split(": ", 1)[1], "changed": c.changed}
        for c in changes
    ]
    data = {
        "host": name,
        "scope": chosen,
        "dry_run": dry_run,
        "uninstall": uninstall,
        "files": rows,
        "diff": patch,
        "manual": manual,
        **(extra or {}),
    }

    def render() -> None:
        if manual is not None:
            if uninstall:
                stderr().print(
                    f"noetic setup {name} writes no file here: remove the entry where you added it",
                    markup=False,
                )
            else:
                sys.stdout.write(manual)
            return
        if dry_run:
            sys.stdout.write(patch or "nothing to change\n")
            return
        out = stdout()
        for c in changes:
            out.print(esc(c.describe()))
        if not any(c.changed for c in changes):
            out.print("nothing to change: " + ("not installed" if uninstall else "already set up"))
        elif not uninstall:
            out.print(f"undo with: noetic setup {name} --uninstall --scope {chosen}")
        for line in notes or []:
            out.print(esc(line))

    emit(data, as_json, render)


@app.command("claude-code")
def claude_code(
    scope: ScopeOpt = None,
    project: ProjectOpt = None,
    instructions: Annotated[
        bool,
        typer.Option(help="Add the instructions block to CLAUDE.md."),
    ] = True,
    tests: Annotated[
        bool,
        typer.Option(
            help="Find the project's test commands and write them to its store's config.toml "
            "(project scope; an existing [outcomes] test_commands is kept)."
        ),
    ] = True,
    hooks: Annotated[
        str,
        typer.Option(
            "--hooks",
            help="command: each hook runs `noetic hook EVENT`; http: each hook posts to "
            "`noetic serve` (--url), which answers at server speed.",
        ),
    ] = "command",
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="With --hooks http: the address of `noetic serve` (default "
            "http://127.0.0.1:8765).",
            show_default=False,
        ),
    ] = None,
    dry_run: DryRunOpt = False,
    uninstall: UninstallOpt = False,
    json: JsonOpt = False,
) -> None:
    """Claude Code: the MCP server (.mcp.json or ~/.claude.json), the hooks (.claude/settings.json
    or ~/.claude/settings.json, each a `noetic hook EVENT` command or an http hook to `noetic
    serve`), a block of instructions in CLAUDE.md, and the project's test commands in its
    store's config.toml."""
    notes: list[str] = []
    extra: dict[str, Any] = {}
    if tests and not uninstall and (scope or "project") == "project":
        from noetic.hosts.setup.claude_code import test_setup

        with handled(json):
            found = test_setup(_project(project))
        notes = found.describe()
        extra["test_commands"] = {
            "config": str(found.config),
            "found": [{"command": f.command, "because": f.because} for f in found.found],
            "kept": list(found.kept) if found.kept is not None else None,
            "configured": found.commands,
        }
    options = {"instructions": instructions, "tests": tests, "hooks": hooks, "url": url}
    _setup("claude-code", scope, project, dry_run, uninstall, json, notes, extra, **options)


def _register(name: str, summary: str) -> None:
    def command(
        scope: ScopeOpt = None,
        project: ProjectOpt = None,
        dry_run: DryRunOpt = False,
        uninstall: UninstallOpt = False,
        json: JsonOpt = False,
    ) -> None:
        _setup(name, scope, project, dry_run, uninstall, json)

    command.__doc__ = summary
    app.command(name)(command)


_register("cursor", "Cursor: the MCP server in .cursor/mcp.json (or ~/.cursor/mcp.json).")
_register(
    "vscode",
    "VS Code: the MCP server in .vscode/mcp.json; with --scope user, the `code --add-mcp` "
    "command to run (the profile's file has no fixed place).",
)
_register(
    "gemini", "Gemini CLI: the MCP server in .gemini/settings.json (or ~/.gemini/settings.json)."
)
_register(
    "codex",
    "Codex CLI: the MCP server in ~/.codex/config.toml ($CODEX_HOME), keeping the file's "
    "comments and layout.",
)
_register("json", "Any other MCP host: print the generic mcpServers entry to paste.")
