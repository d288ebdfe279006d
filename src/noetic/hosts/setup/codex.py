"""Codex CLI: ``[mcp_servers.noetic]`` in ``~/.codex/config.toml`` (``$CODEX_HOME`` if set).

The file is TOML the user edits by hand, so it is changed with ``tomlkit``, which keeps every
comment, blank line and layout of the rest of the file. Codex reads its servers from the
user's configuration only, so there is no project scope.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.hosts.setup.config_edits import (
    FileChange,
    backup_path,
    confine,
    decode,
    prune,
    read_bytes,
)
from noetic.hosts.setup.servers import NAME as SERVER
from noetic.hosts.setup.servers import McpServersFile, remove_server

SCOPES = ("user",)
DEFAULT_SCOPE = "user"
KEY = "mcp_servers"


def path(scope: str, home: Path) -> Path:
    if scope != "user":
        raise InvalidValueError(
            f"Codex has no {scope!r} scope: it reads MCP servers from ~/.codex/config.toml",
            field="scope",
            fix="use --scope user",
        )
    codex_home = os.environ.get("CODEX_HOME")
    return (Path(codex_home) if codex_home else home / ".codex") / "config.toml"


def _parse(data: bytes | None, where: Path) -> Any:
    import tomlkit
    from tomlkit.exceptions import ParseError

    text = decode(data, where) if data is not None else ""
    try:
        return tomlkit.parse(text)
    except ParseError as exc:
        raise InvalidValueError(
            f"{where}:{exc.line}:{exc.col}: not valid TOML ({exc.args[0] if exc.args else exc}); "
            "left untouched",
            field=str(where),
            fix="fix the file by hand, then run the command again",
        ) from None


def _servers(doc: Any, where: Path) -> Any:
    servers = doc.get(KEY)
    if servers is not None and not isinstance(servers, dict):
        raise InvalidValueError(f"{where}: {KEY} is not a table; left untouched", field=KEY)
    return servers


def plan(
    *, scope: str, project: Path, home: Path, command: list[str], uninstall: bool = False
) -> list[FileChange]:
    import tomlkit

    where = path(scope, home)
    root = where.parent.parent if where.parent == home / ".codex" else where.parent
    confine(where, root)
    before = read_bytes(where)
    doc = _parse(before, where)
    servers = _servers(doc, where)
    if uninstall:
        if before is None or servers is None or SERVER not in servers:
            return [FileChange(where, before, before, root=root)]
        backup = read_bytes(backup_path(where))
        original = _parse(backup, backup_path(where)).unwrap() if backup is not None else None
        remove_server(doc, original, where, KEY)  # the entry it had before Noetic comes back
        if backup is not None and prune(doc.unwrap()) == prune(original):
            return [FileChange(where, before, backup, restores_backup=True, root=root)]
        if backup is None and prune(doc.unwrap()) == {}:
            return [FileChange(where, before, None, root=root)]
        return [FileChange(where, before, tomlkit.dumps(doc).encode("utf-8"), root=root)]
    wanted = McpServersFile.entry(command)
    if servers is not None and SERVER in servers and servers[SERVER].unwrap() == wanted:
        return [FileChange(where, before, before, root=root)]
    table = tomlkit.table()
    table.update(wanted)
    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc[KEY] = servers
    servers[SERVER] = table
    return [FileChange(where, before, tomlkit.dumps(doc).encode("utf-8"), root=root)]


def manual(scope: str, command: list[str]) -> str | None:
    return None


def installed_commands(scope: str, project: Path, home: Path) -> list[str] | None:
    where = path(scope, home)
    servers = _servers(_parse(read_bytes(where), where), where)
    if servers is None or SERVER not in servers:
        return None
    found = servers[SERVER].get("command")
    return [found if isinstance(found, str) else ""]
