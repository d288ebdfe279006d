"""Any other MCP host: the generic ``mcpServers`` entry, printed to paste where the host
reads it (nothing is written)."""

from __future__ import annotations

import json
from pathlib import Path

from noetic.hosts.setup.config_edits import FileChange

SCOPES = ("project", "user")
DEFAULT_SCOPE = "project"


def plan(
    *, scope: str, project: Path, home: Path, command: list[str], uninstall: bool = False
) -> list[FileChange]:
    return []


def manual(scope: str, command: list[str]) -> str | None:
    entry = {"mcpServers": {"noetic": {"command": command[0], "args": command[1:]}}}
    return json.dumps(entry, indent=2) + "\n"


def installed_commands(scope: str, project: Path, home: Path) -> list[str] | None:
    return None
