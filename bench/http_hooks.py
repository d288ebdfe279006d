"""Claude Code hooks of type http (`noetic serve`, POST /hooks/EVENT) beside the same hooks as
commands (`noetic hook EVENT`, a new process each), in one run on one store.

Each hook gets the same JSON both ways, as Claude Code sends it: the command is a new process
with the JSON on stdin, the http hook a new connection posting it (Claude Code does not keep
one open). Figures: the median (p50) and p90 wall time of ``--runs`` calls of each. Targets:
an http hook at most 10 ms p50, and at most a fifth of the command hook.

    .venv/bin/python bench/http_hooks.py [--runs 30]
"""

from __future__ import annotations

import argparse
import http.client
import re
import statistics
import subprocess
import time
from pathlib import Path

from _hook_runs import NOETIC, hook_project, payload, wall_times


def by_command(event: str, stdin: str, env: dict, cwd: Path, runs: int) -> list[float]:
    return wall_times([NOETIC, "hook", event], stdin, env, cwd, runs, check=True)


def by_http(port: int, event: str, body: str, runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        conn.request("POST", f"/hooks/{event}", body, {"content-type": "application/json"})
        response = conn.getresponse()
        response.read()
        conn.close()
        times.append((time.perf_counter() - start) * 1000)
        assert response.status == 200, response.status
    return times


def p(times: list[float], q: float) -> float:
    return (
        statistics.quantiles(times, n=100, method="inclusive")[int(q) - 1]
        if q != 50
        else (statistics.median(times))
    )


def start_server(env: dict, cwd: Path) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(
        [NOETIC, "serve", "--port", "0"],
        env=env,
        cwd=cwd,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        line = proc.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/mcp", line)
        if found:
            port = int(found.group(1))
            break
    else:
        proc.kill()
        raise SystemExit("noetic serve did not start")
    for _ in range(200):  # the socket is bound before the URL is printed; wait for the app
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/hooks")
            if conn.getresponse().status == 200:
                break
        except OSError:
            time.sleep(0.05)
    return proc, port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    runs = parser.parse_args().runs
    with hook_project() as (project, _, env):
        done = {"stdout": "", "stderr": "", "interrupted": False}
        cases = [
            ("session-start", "session-start (resume)",
             payload("SessionStart", project, source="resume")),
            ("pre-tool-use", "pre-tool-use (git status)",
             payload("PreToolUse", project, tool_name="Bash",
                     tool_input={"command": "git status"})),
            ("pre-tool-use", "pre-tool-use (rm -rf /: deny)",
             payload("PreToolUse", project, tool_name="Bash", tool_input={"command": "rm -rf /"})),
            ("post-tool-use", "post-tool-use (ls)",
             payload("PostToolUse", project, tool_name="Bash", tool_input={"command": "ls"},
                     tool_response=done)),
            ("post-tool-use", "post-tool-use (pytest: outcome)",
             payload("PostToolUse", project, tool_name="Bash",
                     tool_input={"command": "pytest -q"}, tool_response=done)),
            ("stop", "stop (asked already)", payload("Stop", project, stop_hook_active=False)),
        ]  # fmt: skip
        server, port = start_server(env, project)
        try:
            print(f"{runs} calls of each, ms; command = `noetic hook EVENT`, http = POST to "
                  "`noetic serve` (new connection each)")  # fmt: skip
            print(f"  {'hook':<34} {'command p50':>11} {'http p50':>9} {'http p90':>9} "
                  f"{'ratio':>6}")  # fmt: skip
            all_http, all_command = [], []
            for event, name, body in cases:
                by_http(port, event, body, 3)  # warm the server's imports and caches
                command = by_command(event, body, env, project, runs)
                http = by_http(port, event, body, runs)
                all_http += http
                all_command += command
                print(f"  {name:<34} {statistics.median(command):11.1f} "
                      f"{statistics.median(http):9.1f} {p(http, 90):9.1f} "
                      f"{statistics.median(http) / statistics.median(command):6.3f}")  # fmt: skip
            overall = statistics.median(all_http) / statistics.median(all_command)
            print(
                f"  {'all hooks':<34} {statistics.median(all_command):11.1f} "
                f"{statistics.median(all_http):9.1f} {p(all_http, 90):9.1f} {overall:6.3f}"
            )
            print("targets: http p50 <= 10 ms, and <= 0.2 of the command hook's")
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
