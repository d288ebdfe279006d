"""VS Code: ``servers.noetic`` in ``<project>/.vscode/mcp.json``.

A user's own ``mcp.json`` lives in the VS Code profile, whose place depends on the system, the
edition and the profile, so for ``--scope user`` Noetic prints the entry and the ``code
--add-mcp`` command that adds it instead of guessing a path.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.hosts.setup.config_edits import FileChange
from noetic.hosts.setup.servers import server_change, server_command

SCOPES = ("project", "user")
DEFAULT_SCOPE = "project"
KEY = "servers"


def path(project: Path) -> Path:
    return project / ".vscode" / "mcp.json"


def entry(command: list[str]) -> dict[str, Any]:
    return {"type": "stdio", "command": command[0], "args": command[1:]}


def _check(scope: str) -> None:
    if scope not in SCOPES:
        raise InvalidValueError(f"unknown scope {scope!r}", field="scope", fix="project or user")


def plan(
    *, scope: str, project: Path, home: Path, command: list[str], uninstall: bool = False
) -> list[FileChange]:
    _check(scope)
    if scope == "user":
        return []
    return [server_change(path(project), KEY, entry(command), uninstall=uninstall, root=project)]


def manual(scope: str, command: list[str]) -> str | None:
    _check(scope)
    if scope != "user":
        return None
    spec = json.dumps({"name": "noetic", **entry(command)})
    return (
        "VS Code keeps your own MCP servers in its profile; add Noetic there with\n"
        f"  code --add-mcp {shlex.quote(spec)}\n"
        "or, in VS Code, run 'MCP: Open User Configuration' and add under \"servers\":\n"
        f'  "noetic": {json.dumps(entry(command))}\n'
    )


def installed_commands(scope: str, project: Path, home: Path) -> list[str] | None:
    if scope == "user":
        return None
    found = server_command(path(project), KEY)
    return None if found is None else [found]
