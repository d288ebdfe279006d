"""The dashboard's fixtures: a seeded store served by ``noetic serve``'s app (the MCP endpoint
and the dashboard on one port) under uvicorn on loopback, as a user runs it."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
import uvicorn

from noetic.mcp.http import http_app

from .seed import Seeded, seed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(home: Path, token: str | None = None) -> Iterator[str]:
    """``noetic serve``'s app on a free loopback port; yields its base URL (no slash)."""
    port = free_port()
    config = uvicorn.Config(
        http_app(home, token=token),
        host="127.0.0.1",
        port=port,
        log_level="error",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@dataclass
class Site:
    url: str
    home: Path
    ids: Seeded


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """One seeded store served for a whole test module (the pages only read it)."""
    home = tmp_path_factory.mktemp("dash") / "store"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NOETIC_INDEX", "inline")
        mp.setenv("NOETIC_HOME", str(home))
        ids = seed(home)
        with serving(home) as url:
            yield Site(url, home, ids)
