"""Tools of external MCP servers (``[mcp_servers.NAME]`` in ``<store>/config.toml``), offered
through the same :class:`Tool` interface.

Each server runs for the length of one run (closed with the caller's exit stack); its tools are
listed once, and arguments are checked against their input schemas before the call goes out
through the ``mcp`` client SDK.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from noetic.tools.base import Tool, schema_validator


def configured_servers(home: Path) -> dict[str, list[str]]:
    """``[mcp_servers.NAME] command`` of each server (:mod:`noetic.config` checks them)."""
    from noetic.config import load

    return {name: list(command) for name, command in load(home).mcp_servers.items()}


async def server_tools(stack: AsyncExitStack, servers: dict[str, list[str]]) -> list[Tool]:
    """Connect to each server (closed with ``stack``) and wrap its tools."""
    from mcp import Client, StdioServerParameters

    tools = []
    for server, command in servers.items():
        client = await stack.enter_async_context(
            Client(StdioServerParameters(command=command[0], args=command[1:]))
        )
        for listed in (await client.list_tools()).tools:
            schema = dict(listed.input_schema or {"type": "object"})
            tools.append(
                Tool(
                    name=f"{server}.{listed.name}",
                    description=f"[MCP {server}] {listed.description or listed.name}",
                    parameters=schema,
                    function=_caller(client, listed.name),
                    validate_arguments=schema_validator(schema),
                )
            )
    return tools


def _caller(client: Any, name: str) -> Any:
    async def call(**arguments: Any) -> str:
        result = await client.call_tool(name, arguments)
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        if result.is_error:
            raise RuntimeError(f"MCP tool {name} failed: {text}")
        return text

    return call
