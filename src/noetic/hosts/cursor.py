"""Cursor: ``mcpServers.noetic`` in ``<project>/.cursor/mcp.json`` or ``~/.cursor/mcp.json``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noetic.errors import ValidationError
from noetic.hosts.files import FileChange
from noetic.hosts.servers import server_change, server_command

NAME = "cursor"
SCOPES = ("project", "user")
DEFAULT_SCOPE = "project"
KEY = "mcpServers"


def path(scope: str, project: Path, home: Path) -> Path:
    if scope not in SCOPES:
        raise ValidationError(f"unknown scope {scope!r}", field="scope", fix="project or user")
    return (project if scope == "project" else home) / ".cursor" / "mcp.json"


def entry(command: list[str]) -> dict[str, Any]:
    return {"command": command[0], "args": command[1:]}


def plan(
    *, scope: str, project: Path, home: Path, command: list[str], uninstall: bool = False
) -> list[FileChange]:
    return [server_change(path(scope, project, home), KEY, entry(command), uninstall=uninstall)]


def manual(scope: str, command: list[str]) -> str | None:
    return None


def installed_commands(scope: str, project: Path, home: Path) -> list[str] | None:
    found = server_command(path(scope, project, home), KEY)
    return None if found is None else [found]
