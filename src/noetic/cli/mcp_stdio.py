"""`noetic mcp`'s work, without typer: a host starts it at the beginning of every session.

:mod:`noetic.cli.fast` runs a plain ``noetic mcp [--store DIR]`` here directly, and the typer
command (:func:`noetic.cli.declared.mcp`) calls the same function, so the two cannot differ.
"""

from __future__ import annotations

import gc
from pathlib import Path

from noetic.cli.exits import handled


def mcp(store: Path | None = None) -> None:
    """Serve MCP over stdio: protocol on stdout, logs on stderr."""
    from noetic.store import resolve_home

    # Start-up creates some 550 pydantic models and frees almost nothing: the cyclic garbage
    # collector would only walk them again and again (~6% of the start). It runs again once
    # the server is built, over what is made after that (what start-up made is frozen).
    gc.disable()
    try:
        with handled(False):
            home = resolve_home(store)
            from noetic.mcp.server import build_server

            server = build_server(home)
    finally:
        gc.freeze()
        gc.enable()
    from noetic.mcp.stdio import screen_stdio

    screen_stdio(server)  # a request the SDK cannot read is answered, not dropped
    server.run("stdio")
