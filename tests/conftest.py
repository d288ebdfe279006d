"""Shared fixtures. Every test gets its own store: nothing touches the user's files."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import settings

from noetic.store import Store
from noetic.vectors import VECTOR_NAMES

# `make fuzz` runs tests/fuzz under this profile: ten times Hypothesis's default 100 examples
# per test unless NOETIC_FUZZ_EXAMPLES says otherwise. `make test` runs them at the default.
settings.register_profile(
    "fuzz", max_examples=int(os.environ.get("NOETIC_FUZZ_EXAMPLES", "1000")), deadline=None
)
# `make test` (and so CI) runs under "ci": the same examples on every run, so a red run is
# reproduced by running it again, and no deadline, since a test asserts behaviour, never timing
# (a loaded machine would otherwise fail a slow example). `make fuzz` is where new examples are
# searched for.
settings.register_profile("ci", derandomize=True, deadline=None, print_blob=True)


# A shell starts background jobs with SIGINT ignored, and an ignored signal stays ignored in every
# process started from it. Tests stop servers with Ctrl-C as a terminal would, so the suite gives
# its children the default disposition even when it runs in the background (handlers, unlike
# "ignored", are reset to the default when a child program starts).
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def _session_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One user cache directory for the whole run: the first MCP server built generates the tool
    list and caches it, and the rest list their tools from that cache, as servers normally do."""
    return tmp_path_factory.mktemp("noetic-cache")


@pytest.fixture(autouse=True)
def _isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, _session_cache: Path) -> Path:
    home = tmp_path / "noetic-home"
    monkeypatch.setenv("NOETIC_HOME", str(home))
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(_session_cache))
    # POSTFLIGHT indexes the finished task in a detached background process by default; the
    # suite indexes in the command itself, so no test races a writer it did not start (the
    # background path has its own tests, which unset this).
    monkeypatch.setenv("NOETIC_INDEX", "inline")
    for key in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "NOETIC_API_KEY", "NOETIC_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    return home


@pytest.fixture
def store(_isolated_home: Path):
    with Store(_isolated_home) as s:
        yield s


def free_port() -> int:
    """A loopback port nothing listens on now (the OS's pick)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serving(home: Path, token: str | None = None) -> Iterator[str]:
    """``noetic serve``'s app for the store at ``home`` (the MCP endpoint, the hooks and the
    dashboard on one port, behind ``token`` if given) under uvicorn on a free loopback port, in
    a thread; yields its base URL (no slash) once it listens, and stops it when the block ends.
    The tests that speak real HTTP to the server share it."""
    import uvicorn

    from noetic.mcp.http import http_app

    port = free_port()
    config = uvicorn.Config(
        http_app(home, token=token), host="127.0.0.1", port=port, log_level="error",
        timeout_graceful_shutdown=1,
    )  # fmt: skip
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


def uniform(value: float, **overrides: float) -> dict[str, float]:
    """All 13 vectors at ``value`` (density and uncertainty at ``1 - value``), with overrides."""
    vectors = {v: value for v in VECTOR_NAMES}
    vectors["density"] = round(1 - value, 6)
    vectors["uncertainty"] = round(1 - value, 6)
    vectors.update(overrides)
    return vectors


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, bytes]]]:
    """An OTLP/HTTP receiver on loopback (``tests/_otlp.py``), the endpoint pointed at it, and a
    fresh tracer provider for the test, shut down after it."""
    from noetic.runtime import telemetry

    from ._otlp import receiving

    with receiving() as (endpoint, received):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_SERVICE_NAME", "noetic-test")
        monkeypatch.setattr(telemetry, "_PROVIDER", None)
        try:
            yield received
        finally:
            if telemetry._PROVIDER is not None:
                telemetry._PROVIDER.shutdown()


@pytest.fixture(scope="session")
def postgres_server():
    """One PostgreSQL server for the whole run, started on first use (Debian's binaries, a
    cluster in a temporary directory, a free loopback port), stopped at the end. Without the
    binaries the tests that need it fail, saying why (``make test`` installs them)."""
    from tests._postgres import binaries, running, unavailable

    if binaries() is None:
        unavailable("no PostgreSQL server binaries (Debian's postgresql; `make postgres`)")
    with running() as server:
        yield server


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A URL into a fresh schema of the test server: a store opened on it starts empty."""
    return postgres_server.new_schema()
