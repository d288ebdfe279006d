"""The MCP server entry most hosts keep in a JSON file (``mcpServers``, VS Code's
``servers``): add it, take it out, find which command it runs; and the hosts whose whole
integration is that entry (:data:`CURSOR`, :data:`GEMINI`, :data:`VSCODE`, :data:`PRINTED`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.hosts.setup.config_edits import FileChange, json_change, parse_json_object, read_bytes

NAME = "noetic"


def add_server(data: dict[str, Any], entry: dict[str, Any], path: Path, key: str) -> None:
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise InvalidValueError(f'{path}: "{key}" is not an object; left untouched', field=key)
    servers[NAME] = entry


def remove_server(
    data: dict[str, Any], original: dict[str, Any] | None, path: Path, key: str
) -> None:
    """Remove Noetic's entry; one the file had before Noetic's first change comes back."""
    servers = data.get(key)
    if not isinstance(servers, dict) or NAME not in servers:
        return
    before = (original or {}).get(key)
    if isinstance(before, dict) and NAME in before:
        servers[NAME] = before[NAME]
        return
    del servers[NAME]
    if not servers:
        del data[key]


def server_change(
    path: Path, key: str, entry: dict[str, Any], *, uninstall: bool, root: Path
) -> FileChange:
    def edit(data: dict[str, Any], original: dict[str, Any] | None) -> None:
        if uninstall:
            remove_server(data, original, path, key)
        else:
            add_server(data, entry, path, key)

    return json_change(path, edit, uninstall=uninstall, root=root)


def server_command(path: Path, key: str) -> str | None:
    """The command Noetic's entry in ``path`` runs; None when there is no entry."""
    data = parse_json_object(read_bytes(path), path) or {}
    servers = data.get(key)
    entry = servers.get(NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return None
    command = entry.get("command")
    return command if isinstance(command, str) else ""


class McpServersFile:
    """A host whose whole integration is ``mcpServers.noetic`` in one JSON file, in the project
    (``<project>/<folder>/<name>``) or the user's home (``~/<folder>/<name>``): Cursor, Gemini
    CLI. Its methods are the host module's functions."""

    SCOPES = ("project", "user")
    DEFAULT_SCOPE = "project"
    KEY = "mcpServers"

    def __init__(self, folder: str, name: str) -> None:
        self.folder, self.name = folder, name

    def check_scope(self, scope: str) -> None:
        if scope not in self.SCOPES:
            raise InvalidValueError(
                f"unknown scope {scope!r}", field="scope", fix="project or user"
            )

    def path(self, scope: str, project: Path, home: Path) -> Path | None:
        """The file Noetic's entry is in (None: Noetic writes none, it prints the entry)."""
        self.check_scope(scope)
        return (project if scope == "project" else home) / self.folder / self.name

    @staticmethod
    def entry(command: list[str]) -> dict[str, Any]:
        return {"command": command[0], "args": command[1:]}

    def plan(
        self, *, scope: str, project: Path, home: Path, command: list[str], uninstall: bool = False
    ) -> list[FileChange]:
        target = self.path(scope, project, home)
        if target is None:
            return []
        root = project if scope == "project" else home
        entry = self.entry(command)
        return [server_change(target, self.KEY, entry, uninstall=uninstall, root=root)]

    def manual(self, scope: str, command: list[str]) -> str | None:
        return None

    def installed_commands(self, scope: str, project: Path, home: Path) -> list[str] | None:
        target = self.path(scope, project, home)
        found = server_command(target, self.KEY) if target is not None else None
        return None if found is None else [found]


class VsCodeFile(McpServersFile):
    """VS Code: ``servers.noetic`` in ``<project>/.vscode/mcp.json``.

    A user's own ``mcp.json`` lives in the VS Code profile, whose place depends on the system,
    the edition and the profile, so for ``--scope user`` Noetic prints the entry and the ``code
    --add-mcp`` command that adds it instead of guessing a path."""

    KEY = "servers"

    def __init__(self) -> None:
        super().__init__(".vscode", "mcp.json")

    def path(self, scope: str, project: Path, home: Path) -> Path | None:
        found = super().path(scope, project, home)
        return None if scope == "user" else found

    @staticmethod
    def entry(command: list[str]) -> dict[str, Any]:
        return {"type": "stdio", **McpServersFile.entry(command)}

    def manual(self, scope: str, command: list[str]) -> str | None:
        self.check_scope(scope)
        if scope != "user":
            return None
        spec = json.dumps({"name": NAME, **self.entry(command)})
        return (
            "VS Code keeps your own MCP servers in its profile; add Noetic there with\n"
            f"  code --add-mcp {shlex.quote(spec)}\n"
            "or, in VS Code, run 'MCP: Open User Configuration' and add under \"servers\":\n"
            f'  "noetic": {json.dumps(self.entry(command))}\n'
        )


class PrintedEntry(McpServersFile):
    """Any other MCP host: the generic ``mcpServers`` entry, printed to paste where the host
    reads it (nothing is written)."""

    def __init__(self) -> None:
        super().__init__("", "")

    def path(self, scope: str, project: Path, home: Path) -> Path | None:
        return None

    def manual(self, scope: str, command: list[str]) -> str | None:
        entry = {"mcpServers": {NAME: McpServersFile.entry(command)}}
        return json.dumps(entry, indent=2) + "\n"


CURSOR = McpServersFile(".cursor", "mcp.json")  # <project>/.cursor/mcp.json, ~/.cursor/mcp.json
GEMINI = McpServersFile(".gemini", "settings.json")  # .gemini/settings.json, the same two places
PRINTED = PrintedEntry()
VSCODE = VsCodeFile()
