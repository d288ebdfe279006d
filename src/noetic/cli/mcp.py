"""`noetic serve` (streamable HTTP); `noetic mcp` (stdio) is :mod:`noetic.cli.mcp_stdio`.

The MCP SDK costs most of a second to import, so it is imported only inside these commands.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.exits import handled
from noetic.cli.options import StoreOpt
from noetic.cli.output import esc, stderr
from noetic.errors import UsageError
from noetic.operations.access_tokens import LOOPBACK


def serve(
    host: Annotated[str, typer.Option(help="Address to bind.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on (0: any free port).")
    ] = 8765,
    token: Annotated[
        str | None,
        typer.Option(help="Bearer token clients must send (or $NOETIC_TOKEN).", show_default=False),
    ] = None,
    store: StoreOpt = None,
) -> None:
    """Serve MCP over streamable HTTP at /mcp and the dashboard at / (loopback by default;
    other addresses need a token)."""
    from noetic.store import resolve_home

    from_env = token is None and bool(os.environ.get("NOETIC_TOKEN"))
    token = token or os.environ.get("NOETIC_TOKEN") or None
    with handled(False):
        if token is not None:
            from noetic.mcp.http import check_token

            check_token(token)
        home = resolve_home(store)
        store_tokens = False  # the store's live tokens (`noetic token create`), then required
        if not token:
            from contextlib import closing

            from noetic.operations.access_tokens import Access

            with closing(Access(home, None)) as access:  # creates the store, as serving would
                store_tokens = access.required
        if host not in LOOPBACK and not token and not store_tokens:
            raise UsageError(
                f"binding {host} exposes the server beyond this machine and needs a token",
                fix="make per-person tokens with `noetic token create NAME`, or pass --token "
                "SECRET or set NOETIC_TOKEN (clients send 'Authorization: Bearer SECRET')",
            )
        sock = _bind(host, port)
        from noetic.mcp.http import http_app

        app = http_app(home, host=host, token=token)
    bound = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{bound}/mcp"
    shown = "${NOETIC_TOKEN}" if from_env else "YOUR_TOKEN" if store_tokens else token
    _print_connection(url, home, shown, host)
    import uvicorn

    # Open live-update streams (the dashboard's /live) end within a second of Ctrl-C.
    config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
    try:
        uvicorn.Server(config).run(sockets=[sock])
    except KeyboardInterrupt:
        _leave(130)


def _leave(code: int) -> None:
    """Exit now that the server has shut down (its lifespan closed the store and stopped its
    threads): the exit handlers run, then the process ends without the interpreter's own
    teardown, which spends most of a second collecting the SDK's and pydantic's objects while
    the person who pressed Ctrl-C waits."""
    import atexit

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _bind(host: str, port: int) -> Any:
    """Bind before printing anything, so a busy port is a clear error, not a half-started server."""
    import socket

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family)
    except OSError as exc:
        raise UsageError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}",
            fix="pick another --port (or --port 0 for any free one)",
        ) from None


def _print_connection(url: str, home: Path, token: str | None, host: str) -> None:
    """The URL, the store it serves, and the exact commands to connect MCP clients (the stdio
    line names no store: it follows the project the client starts it in; docs/mcp.md)."""
    err = stderr()
    err.print(f"[bold]Noetic MCP server[/] at {esc(url)}")
    err.print(f"dashboard at {esc(url.removesuffix('mcp'))}")
    from noetic.store.location import safe_url, store_url

    url_of_store = store_url(home)
    served = f"{safe_url(url_of_store)} (PostgreSQL)" if url_of_store else str(home.resolve())
    err.print(f"serving the store {esc(served)} to every client connected over HTTP")
    if host not in LOOPBACK:
        err.print(f"[dim]bound to {esc(host)}: from other machines, use this machine's address[/]")
    auth = f' --header "Authorization: Bearer {token}"' if token else ""
    stdio = [_executable(), "mcp"]
    http_entry: dict[str, Any] = {"type": "http", "url": url}
    if token:
        http_entry["headers"] = {"Authorization": f"Bearer {token}"}
    for line in (
        "In Claude Code, outcomes from test runs and the gate on irreversible steps come from",
        "its hooks, which MCP alone does not give; in your project, run once:",
        f"  {_executable()} setup claude-code",
        "Or connect Claude Code to the MCP tools only, over HTTP:",
        f"  claude mcp add --transport http noetic {url}{auth}",
        "or over stdio (no server needed; the client starts it, and the store is the .noetic of",
        "the project the client starts it in):",
        f"  claude mcp add noetic -- {shlex.join(stdio)}",
        "Other MCP clients (mcpServers configuration, HTTP or stdio):",
        "  " + json.dumps({"mcpServers": {"noetic": http_entry}}),
        "  " + json.dumps({"mcpServers": {"noetic": {"command": stdio[0], "args": stdio[1:]}}}),
    ):
        err.print(line, markup=False, soft_wrap=True)


def _executable() -> str:
    """``noetic`` when that is what PATH finds, else the full path of the running one."""
    import shutil

    running = Path(sys.argv[0]).resolve()
    on_path = shutil.which("noetic")
    if on_path is not None and Path(on_path).resolve() == running:
        return "noetic"
    return str(running)
