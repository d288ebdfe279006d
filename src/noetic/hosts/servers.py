"""The MCP server entry most hosts keep in a JSON file (``mcpServers``, VS Code's
``servers``): add it, take it out, find which command it runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noetic.errors import ValidationError
from noetic.hosts.files import FileChange, json_change, parse_json_object, read_bytes

NAME = "noetic"


def add_server(data: dict[str, Any], entry: dict[str, Any], path: Path, key: str) -> None:
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ValidationError(f'{path}: "{key}" is not an object; left untouched', field=key)
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


def server_change(path: Path, key: str, entry: dict[str, Any], *, uninstall: bool) -> FileChange:
    def edit(data: dict[str, Any], original: dict[str, Any] | None) -> None:
        if uninstall:
            remove_server(data, original, path, key)
        else:
            add_server(data, entry, path, key)

    return json_change(path, edit, uninstall=uninstall)


def server_command(path: Path, key: str) -> str | None:
    """The command Noetic's entry in ``path`` runs; None when there is no entry."""
    data = parse_json_object(read_bytes(path), path) or {}
    servers = data.get(key)
    entry = servers.get(NAME) if isinstance(servers, dict) else None
    if not isinstance(entry, dict):
        return None
    command = entry.get("command")
    return command if isinstance(command, str) else ""
