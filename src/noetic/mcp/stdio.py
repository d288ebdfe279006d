"""MCP over stdio, with every request answered: a line the SDK cannot read gets a JSON-RPC error
(docs/limits.md, "The MCP server").

The SDK's stdio transport hands a line it cannot validate to the server as an exception, which
the server only logs: the client waits for an answer that never comes. So the lines are screened
here first with the SDK's own validator; one it refuses is answered (``-32700`` when the line is
not JSON, ``-32600`` when it is not a message the server can read), with the request's ``id``
when a linear scan finds one, through the transport's own writer, so the answer never
interleaves with another message on stdout.

To report upstream (modelcontextprotocol/python-sdk): ``stdio_server``'s reader sends a
validation error into the read stream, and ``ServerSession`` logs it without answering, so a
malformed request is never answered, contrary to JSON-RPC 2.0 §5.1.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import AsyncIterator
from contextlib import suppress
from io import TextIOWrapper
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:
    from mcp.server import MCPServer

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]', re.DOTALL)
_VALUE = re.compile(r'\s*:\s*(-?\d+(?:\.\d+)?|"(?:[^"\\]|\\.)*")')


def request_id(line: str) -> int | str | None:
    """The top-level ``"id"`` of a JSON-RPC line, found without parsing it (so any depth of
    nesting costs one pass); None when there is none or it cannot be read."""
    depth = 0
    for token in _TOKEN.finditer(line):
        text = token.group(0)
        if text in "{[":
            depth += 1
        elif text in "}]":
            depth -= 1
        elif depth == 1 and text == '"id"':
            value = _VALUE.match(line, token.end())
            if value is None:
                return None
            raw = value.group(1)
            if raw.startswith('"'):
                with suppress(ValueError):
                    found = json.loads(raw)
                    return found if isinstance(found, str) and _is_text(found) else None
                return None
            return int(raw) if raw.lstrip("-").isdigit() else None
    return None


def _is_text(value: str) -> bool:
    return not any(0xD800 <= ord(c) <= 0xDFFF for c in value)


def error_for(line: str, exc: Exception) -> dict[str, Any]:
    """The JSON-RPC error answering ``line``, which the SDK refused with ``exc``."""
    code, what = INVALID_REQUEST, "Invalid request"
    try:
        json.loads(line)
    except ValueError:
        code, what = PARSE_ERROR, "Parse error"
    except RecursionError:
        pass
    reason = _reason(line, exc)
    return {
        "jsonrpc": "2.0",
        "id": request_id(line),
        "error": {"code": code, "message": f"{what}: {reason}"},
    }


def _reason(line: str, exc: Exception) -> str:
    if "\x00" in line:
        return "the line holds a raw NUL character, which JSON does not allow in a string"
    if re.search(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])", line):
        return "a string holds a lone surrogate escape (such as \\ud800), which is not text"
    text = str(exc).splitlines()
    detail = next((t.strip() for t in text[1:] if t.strip()), text[0] if text else "")
    if "recursion" in detail.lower() or "depth" in detail.lower():
        return "the message is nested too deeply"
    return detail[:300] or type(exc).__name__


class _ScreenedLines:
    """The client's lines; those the SDK cannot read are answered here and not passed on."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.reply: Any = None
        self.ready = anyio.Event()

    async def __aiter__(self) -> AsyncIterator[str]:
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        async for line in self.source:
            try:
                types.jsonrpc_message_adapter.validate_json(line, by_name=False)
            except Exception as exc:
                if not line.strip():
                    continue
                await self.ready.wait()
                answer = types.jsonrpc_message_adapter.validate_python(error_for(line, exc))
                await self.reply.send(SessionMessage(answer))
                continue
            yield line


def screen_stdio(server: Any) -> None:
    """Make ``server.run("stdio")`` serve through :func:`serve_stdio` (the SDK runs its stdio
    transport by calling the server's ``run_stdio_async``)."""
    from functools import partial

    setattr(server, "run_stdio_async", partial(serve_stdio, server))  # noqa: B010


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` over the process's stdin and stdout (``MCPServer.run("stdio")``, with the
    lines screened). Fd 0 points at the null device while serving, as the SDK does, so nothing
    the tools start can read the protocol's stdin."""
    from mcp.server.stdio import stdio_server

    wire = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        with os.fdopen(wire, "rb", closefd=False) as raw:
            text = TextIOWrapper(raw, encoding="utf-8", errors="replace")
            lines = _ScreenedLines(anyio.wrap_file(text))
            async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
                lines.reply = write_stream
                lines.ready.set()
                low = server._lowlevel_server
                await low.run(read_stream, write_stream, low.create_initialization_options())
    finally:
        os.dup2(wire, 0)
        os.close(wire)
