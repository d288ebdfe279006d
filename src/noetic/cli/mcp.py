"""`noetic mcp` (stdio) and `noetic serve` (streamable HTTP). The SDK loads only here."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from noetic.cli._common import StoreOpt, handled, stderr

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})


def mcp(store: StoreOpt = None) -> None:
    """Serve MCP over stdio: protocol on stdout, logs on stderr."""
    from noetic.store import resolve_home

    with handled(False):
        home = resolve_home(store)
        from noetic.mcp.server import build_server

        server = build_server(home)
    server.run("stdio")


def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
    token: Annotated[
        str | None,
        typer.Option(help="Bearer token clients must send (or $NOETIC_TOKEN).", show_default=False),
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Serve MCP over streamable HTTP (loopback by default; other addresses need a token)."""
    from noetic.errors import UsageError
    from noetic.store import resolve_home

    token = token or os.environ.get("NOETIC_TOKEN") or None
    with handled(False):
        if host not in LOOPBACK and not token:
            raise UsageError(
                f"binding {host} exposes the server beyond this machine and needs a token",
                fix="pass --token SECRET or set NOETIC_TOKEN (clients send "
                "'Authorization: Bearer SECRET')",
            )
        home = resolve_home(store)
        from noetic.mcp.http import http_app

        app = http_app(home, host=host, token=token)
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/mcp"
    err = stderr()
    err.print(f"[bold]Noetic MCP server[/] at {url} · store {home}")
    auth = f' --header "Authorization: Bearer {token}"' if token else ""
    err.print("Connect Claude Code:")
    err.print(f"  claude mcp add --transport http noetic {url}{auth}", markup=False, soft_wrap=True)
    err.print("Or run it over stdio from any MCP client:")
    exe = Path(sys.argv[0]).resolve()
    err.print(
        f"  claude mcp add noetic -- {exe} mcp --store {home.resolve()}",
        markup=False,
        soft_wrap=True,
    )
    err.print(
        'Other clients: {"mcpServers": {"noetic": {"url": "' + url + '"}}}',
        markup=False,
        soft_wrap=True,
    )
    import uvicorn

    uvicorn.run(app, host=host, port=port, log_level="warning")
