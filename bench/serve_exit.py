"""Ctrl-C on `noetic serve`: wall time from SIGINT to the process's exit, beside a baseline from
the same run: the same server modules imported and the same uvicorn server shut down by SIGINT,
then the interpreter's ordinary exit (what `noetic serve` did before it left without the
interpreter's teardown).

Each figure is the median of ``--runs`` starts (default 5), idle, after the banner is printed.

    .venv/bin/python bench/serve_exit.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOETIC = str(Path(sys.executable).parent / "noetic")
BASELINE = """
import socket, sys, uvicorn
from noetic.mcp.http import http_app
sock = socket.create_server(("127.0.0.1", 0))
app = http_app(sys.argv[1], host="127.0.0.1", token=None)
print("ready", file=sys.stderr, flush=True)
config = uvicorn.Config(app, log_level="warning", timeout_graceful_shutdown=1)
try:
    uvicorn.Server(config).run(sockets=[sock])
except KeyboardInterrupt:
    sys.exit(130)
"""


def _exit_time(command: list[str], ready: str) -> float:
    proc = subprocess.Popen(command, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    while ready not in proc.stderr.readline():
        pass
    time.sleep(0.5)  # let start-up threads settle, as a server a person stops has
    start = time.perf_counter()
    proc.send_signal(signal.SIGINT)
    code = proc.wait(timeout=60)
    took = time.perf_counter() - start
    assert code == 130, code
    return took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        env_store = str(Path(tmp) / "s")
        os.environ.pop("NOETIC_HOME", None)
        serve = [NOETIC, "serve", "--port", "0", "--store", env_store]
        base = [sys.executable, "-c", BASELINE, str(Path(tmp) / "b")]
        fast, slow = [], []
        for _ in range(runs):  # interleaved, so the machine's load falls on both alike
            slow.append(_exit_time(base, "ready"))
            fast.append(_exit_time(serve, "Noetic MCP server"))
    print(f"SIGINT to exit, median of {runs} (load {os.getloadavg()[0]:.1f})")
    print(f"  baseline: the interpreter's ordinary exit   {statistics.median(slow):.2f} s")
    print(f"  noetic serve                                {statistics.median(fast):.2f} s")


if __name__ == "__main__":
    main()
