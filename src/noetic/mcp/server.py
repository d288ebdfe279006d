"""The MCP server: one store, one tracker, the seed's tools, the resources and the prompt.

It is built from :class:`~noetic.mcp.state.ServerState`, :mod:`~noetic.mcp.tool_calls`,
:mod:`~noetic.mcp.tools` and :mod:`~noetic.mcp.resources`, which it imports and none of which
imports it (docs/architecture.md, "Checks").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import MCPServer

from noetic.mcp import guidance
from noetic.mcp.sdk import plain_logging
from noetic.mcp.state import ServerState
from noetic.mcp.tool_calls import CALLER

if TYPE_CHECKING:
    from mcp.server.context import ServerMiddleware, ServerRequestContext
    from mcp.server.mcpserver.tools import Tool


def build_server(
    home: Path, workspace: Path | None = None, *, per_connection: bool = False
) -> MCPServer:
    """An MCP server over the store at ``home``; built-in tools read ``workspace`` (default:
    the working directory at start). ``per_connection``: each MCP session (HTTP) has its own
    current session; otherwise the process is the one client (stdio)."""
    from noetic.mcp.resources import register_resources

    noetic = ServerState(home, workspace, per_connection=per_connection, embed_at_start=False)
    from noetic import __version__

    with plain_logging():
        server = MCPServer(
            "noetic",
            version=__version__,
            instructions=guidance.INTRODUCTION + "\n\n" + guidance.workflow_guidance(),
            log_level="WARNING",  # tool errors go back to the client; stderr keeps what is wrong
            tools=listed_tools(noetic),
            middleware=[_identifies, _starts_background(noetic)],
        )
    register_resources(server, noetic)
    return server


def listed_tools(noetic: ServerState) -> list[Tool]:
    """The server's tools: from the cached list when it is current, else built (and cached)."""
    from noetic.mcp import tool_cache

    key = tool_cache.cache_key()
    cached = tool_cache.load(key)
    if cached is not None:
        return [
            tool_cache.DeferredTool.listed(entry, partial(_build_tool, noetic, entry["name"]))
            for entry in cached
        ]
    from noetic.mcp.tools import build_tools

    tools = build_tools(noetic)
    tool_cache.save(key, [tool_cache.describe(t) for t in tools])
    return tools


def _build_tool(noetic: ServerState, name: str) -> Tool:
    from noetic.mcp.tools import build_tool

    return build_tool(noetic, name)


_HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})


def _starts_background(noetic: ServerState) -> ServerMiddleware[Any]:
    """Middleware: after the first request other than the handshake (``initialize``, or
    ``server/discover`` from 2026-07-28 on) and ``ping`` has been answered (for a client
    starting up, ``tools/list``), the embedding thread starts."""

    async def middleware(
        ctx: ServerRequestContext[Any, Any],
        call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[Any]],
    ) -> Any:
        result = await call_next(ctx)
        if ctx.request_id is not None and ctx.method not in _HANDSHAKE:
            noetic.start_background()
        return result

    return middleware


async def _identifies(
    ctx: ServerRequestContext[Any, Any],
    call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[Any]],
) -> Any:
    """Middleware: a request that came over HTTP with a token (the bearer check put its
    identity in the ASGI scope) runs as that caller, its writes recording the token's name
    (:mod:`noetic.store.writer`); :func:`~noetic.mcp.tool_calls.tool_errors` refuses a
    read-only caller's writes. The transport hands the message to the server's own task, so the
    identity is carried here from the request rather than inherited."""
    scope = getattr(ctx.request, "scope", None)
    who = scope.get("noetic.identity") if isinstance(scope, dict) else None
    if who is None:
        return await call_next(ctx)
    from noetic.store.writer import writing_as

    reset = CALLER.set(who)
    try:
        with writing_as(who.name):
            return await call_next(ctx)
    finally:
        CALLER.reset(reset)
