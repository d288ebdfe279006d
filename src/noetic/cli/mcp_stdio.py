"""`noetic mcp`'s work, without typer: a host starts it at the beginning of every session.

:mod:`noetic.cli.fast` runs a plain ``noetic mcp [--store DIR]`` here directly, and the typer
command (:func:`noetic.cli.declared.mcp`) calls the same function, so the two cannot differ.
"""

from __future__ import annotations

from pathlib import Path

from noetic.cli._common import handled


def mcp(store: Path | None = None) -> None:
    """Serve MCP over stdio: protocol on stdout, logs on stderr."""
    from noetic.store import resolve_home

    with handled(False):
        home = resolve_home(store)
        from noetic.mcp.server import build_server

        server = build_server(home)
    server.run("stdio")
