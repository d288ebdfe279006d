"""Tools of external MCP servers, offered as investigation plugins.

Servers are named in ``<store>/config.toml``::

    [mcp_servers.docs]
    command = ["uvx", "some-docs-mcp-server"]

Each server runs for the length of one CASCADE run; its tools are listed once and called through
the ``mcp`` client SDK.
"""

from __future__ import annotations

import tomllib
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from noetic.cascade.investigation.tools import InvestigationPlugin
from noetic.errors import ValidationError


def configured_servers(home: Path) -> dict[str, list[str]]:
    path = home / "config.toml"
    if not path.is_file():
        return {}
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValidationError(f"{path}: not valid TOML: {exc}", field="config") from None
    servers = {}
    for name, entry in config.get("mcp_servers", {}).items():
        command = entry.get("command") if isinstance(entry, dict) else None
        if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
            raise ValidationError(
                f"{path}: mcp_servers.{name}.command must be a list of strings",
                field=f"mcp_servers.{name}.command",
            )
        servers[name] = command
    return servers


async def mcp_plugins(
    stack: AsyncExitStack, servers: dict[str, list[str]]
) -> list[InvestigationPlugin]:
    """Connect to each server (closed with ``stack``) and wrap its tools as plugins."""
    from mcp import Client, StdioServerParameters

    plugins = []
    for server, command in servers.items():
        client = await stack.enter_async_context(
            Client(StdioServerParameters(command=command[0], args=command[1:]))
        )
        for tool in (await client.list_tools()).tools:
            plugins.append(
                InvestigationPlugin(
                    name=f"{server}.{tool.name}",
                    description=f"[MCP {server}] {tool.description or tool.name}",
                    executor=_caller(client, tool.name),
                )
            )
    return plugins


def _caller(client: Any, tool: str) -> Any:
    async def call(**arguments: Any) -> str:
        result = await client.call_tool(tool, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise ValidationError(f"MCP tool {tool} failed: {text}", field=tool)
        return text

    return call
