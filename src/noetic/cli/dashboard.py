"""`noetic dashboard`: open the dashboard, starting `noetic serve` first when nothing answers
(docs/dashboard.md). The server it starts runs on, detached, after this command returns; a port
taken by something that is not Noetic is an error, never a second server on another port.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt
from noetic.cli.output import emit, esc, stderr
from noetic.errors import UsageError

WAIT_S = 20.0


def dashboard(
    host: Annotated[str, typer.Option(help="Address of the server (loopback by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port of the server.")] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the dashboard in the browser.")
    ] = True,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Open the dashboard in the browser, starting `noetic serve` if it is not running."""
    from noetic.store import resolve_home

    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}/"
    with handled(json):
        started: int | None = None
        answer = _probe(url)
        if answer == "other":
            raise UsageError(
                f"something other than Noetic answers at {url}",
                fix="pass --port with a free port (the server starts there)",
            )
        if answer == "none":
            home = resolve_home(store)
            process = _start(home, host, port)
            started = process.pid
            if not _wait(url, process):
                raise UsageError(
                    f"the server did not answer at {url} within {WAIT_S:g} s",
                    fix=f"see {home / 'dashboard.log'}",
                )
    if open_browser:
        import webbrowser

        webbrowser.open(url)

    def render() -> None:
        err = stderr()
        err.print(f"Noetic dashboard at {esc(url)}")
        if started is not None:
            err.print(f"started `noetic serve` (pid {started}); stop it with: kill {started}")

    emit({"url": url, "started_pid": started}, json, render)


def _probe(url: str) -> str:
    """``"noetic"`` when Noetic's dashboard answers at ``url``, ``"other"`` when something
    else does, ``"none"`` when nothing listens."""
    import httpx

    try:
        r = httpx.get(url + "login", timeout=2.0)
    except httpx.HTTPError:
        return "none"
    return "noetic" if "Noetic" in r.text and r.status_code in (200, 303) else "other"


def _start(home: Path, host: str, port: int) -> subprocess.Popen[bytes]:
    home.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-c", "from noetic.cli import main; main()"]
    command += ["serve", "--host", host, "--port", str(port), "--store", str(home)]
    with (home / "dashboard.log").open("ab") as log:  # the child keeps its own descriptors
        return subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )


def _wait(url: str, process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if _probe(url) == "noetic":
            return True
        if process.poll() is not None:
            return False
        time.sleep(0.1)
    return False
