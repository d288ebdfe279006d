"""`noetic dashboard`: starts `noetic serve` when nothing answers, reuses a running one, and
refuses a port that something else holds."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import httpx
import pytest

from ..conftest import free_port

NOETIC = str(Path(sys.executable).with_name("noetic"))

pytestmark = [pytest.mark.subprocess, pytest.mark.slow]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NOETIC, "dashboard", "--no-open", "--json", *args],
        capture_output=True,
        text=True,
        timeout=90,
    )


def test_dashboard_starts_the_server_once_and_then_reuses_it(tmp_path):
    port = str(free_port())
    first = run("--port", port, "--store", str(tmp_path / "s"))
    assert first.returncode == 0, first.stderr
    started = json.loads(first.stdout)
    pid = started["started_pid"]
    try:
        assert started["url"] == f"http://127.0.0.1:{port}/"
        assert isinstance(pid, int)
        page = httpx.get(started["url"])
        assert page.status_code == 200 and "<h1>Sessions</h1>" in page.text
        again = run("--port", port, "--store", str(tmp_path / "s"))
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout) == {"url": started["url"], "started_pid": None}
    finally:
        _stop(pid)
    assert (tmp_path / "s" / "dashboard.log").exists()


def _stop(pid: int) -> None:
    """Ctrl-C for the server the command left running; it must be gone within 15 s."""
    os.kill(pid, signal.SIGINT)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("noetic serve did not stop on SIGINT")


def test_a_port_held_by_something_else_is_an_error_that_says_so(tmp_path):
    class Hello(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b"hello")

        def log_message(self, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        result = run("--port", str(server.server_address[1]), "--store", str(tmp_path / "s"))
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 1
    assert "something other than Noetic answers" in json.loads(result.stdout)["error"]["message"]
