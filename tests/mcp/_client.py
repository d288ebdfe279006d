"""Driving the server from a real in-process MCP client."""

import asyncio
import os

from mcp.client.stdio import get_default_environment
from mcp.types import CreateMessageResult, TextContent

from mcp import Client

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
"""The first message a raw JSON-RPC client sends over stdio."""


def stdio_env() -> dict[str, str]:
    """The environment the SDK gives a stdio server (a few safe variables, as a host gives it),
    plus the test run's cache directory, so the server writes nothing in the user's cache."""
    return {**get_default_environment(), "NOETIC_CACHE_DIR": os.environ["NOETIC_CACHE_DIR"]}


def call(server, *steps, **client_kw):
    """Run (tool, args) steps in one client session; return the results."""

    async def go():
        async with Client(server, **client_kw) as client:
            return [await client.call_tool(name, args) for name, args in steps]

    return asyncio.run(go())


def ok(result):
    assert not result.is_error, result.content[0].text
    return result.structured_content


def err(result):
    assert result.is_error
    return result.content[0].text


def host_model(*replies, seen=None):
    """A client sampling callback: the host's model answers with ``replies`` in turn."""
    queue = iter(replies)

    async def sampler(context, params):
        if seen is not None:
            seen.append(params)
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=next(queue)), model="host"
        )

    return sampler
