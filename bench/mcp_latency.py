"""MCP over stdio from the SDK client: start-up to the first ``tools/list`` answer, and the round
trip of submit_preflight_assessment (p50 / p95 over 200 calls), next to a trivial tool on the same
connection (the SDK's floor). Each submit commits to SQLite and queues the session's JSON file
and a reflex log, which the server writes a moment later on its background thread.

Start-up is measured as a host starts the server: spawn ``noetic mcp``, ``initialize``,
``notifications/initialized``, ``tools/list``, time until the answer; median over
``--starts`` rounds, each round starting every variant once, in turn, so they share the load:

- ``python -c pass``: the interpreter alone (spawn to exit), the floor of any Python server;
- a bare SDK server with one tool: the floor of any server written with the ``mcp`` SDK;
- ``noetic mcp`` with its cached tool list (every start but the first after an install or
  an upgrade), and with no cache (that first start, which writes the cache);
- the previous design (``--previous REV``, default the parent of the commit that added the
  cached tool list): that revision's ``src`` run with this environment and a tool-list cache
  of its own.

    python bench/mcp_latency.py [--starts 11] [--previous REV] [--no-calls]
"""

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp.client.stdio import get_default_environment

from mcp import Client, StdioServerParameters

NOETIC = str(Path(sys.executable).with_name("noetic"))
ROOT = Path(__file__).resolve().parents[1]
CALLS = 200
FILL = 1000
SCORES = {
    "engagement": 0.9, "know": 0.8, "do": 0.8, "context": 0.8, "clarity": 0.8,
    "coherence": 0.9, "signal": 0.8, "density": 0.2, "state": 0.8, "change": 0.8,
    "completion": 0.8, "impact": 0.8, "uncertainty": 0.2,
}  # fmt: skip
ARGS = {"task": "bench", "vectors": SCORES, "abandon_open": True}
BARE = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("bare")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Say it back.\"\"\"
    return text


server.run("stdio")
"""
HANDSHAKE = {  # what Claude Code sends
    "protocolVersion": "2025-06-18",
    "capabilities": {"roots": {}},
    "clientInfo": {"name": "bench", "version": "1"},
}
NOETIC_MAIN = "import sys; from noetic.cli import main; sys.argv[0] = 'noetic'; main()"


def summary(label: str, times: list[float]) -> str:
    times = sorted(times)
    p95 = times[int(0.95 * len(times)) - 1]
    return f"{label}: p50 {statistics.median(times):.2f} ms, p95 {p95:.2f} ms (n={len(times)})"


def _cpu_ms(pid: int) -> float:
    """CPU time (user + system, every thread) the process has used so far; nan off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _answer(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    assert proc.stdout is not None
    while True:  # notifications (a log message) may come first
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the server exited before answering request {request_id}")
        message = json.loads(line)
        if message.get("id") == request_id:
            return message


def first_listing(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Spawn to the answer of the first ``tools/list`` as a host starts a server: wall time
    and the server's CPU time until then (ms). Raw JSON-RPC lines, so the measuring side costs
    nothing but a pipe read."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")
        proc.stdin.flush()

    send({"id": 1, "method": "initialize", "params": HANDSHAKE})
    _answer(proc, 1)
    send({"method": "notifications/initialized"})
    send({"id": 2, "method": "tools/list"})
    tools = _answer(proc, 2)["result"]["tools"]
    wall, cpu = (time.perf_counter() - start) * 1000, _cpu_ms(proc.pid)
    proc.stdin.close()
    proc.wait(timeout=30)
    assert tools, "no tools listed"
    return wall, cpu


def bare_python() -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return (time.perf_counter() - start) * 1000, (usage.ru_utime + usage.ru_stime) * 1000


def previous_revision() -> str:
    """The parent of the commit that added the cached tool list (the design before it)."""
    try:
        added = subprocess.run(
            ["git", "-C", str(ROOT), "log", "--diff-filter=A", "--format=%h", "--",
             "src/noetic/mcp/tool_cache.py"],
            capture_output=True, text=True, check=True,
        ).stdout.split()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return ""
    return f"{added[-1]}^" if added else ""


def previous_source(rev: str, into: Path) -> Path | None:
    """``rev``'s ``src`` extracted under ``into``, or None when this is not a git checkout."""
    if not rev:
        return None
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "src"], capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def startups(starts: int, rev: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "bare.py").write_text(BARE)
        cache, store = root / "cache", str(root / "store")
        env = {**get_default_environment(), "NOETIC_CACHE_DIR": str(cache)}
        previous = previous_source(rev, root)
        noetic = [NOETIC, "mcp", "--store", store]
        variants: dict[str, tuple[list[str], dict[str, str]]] = {
            "bare SDK server, one tool (the SDK's floor)": (
                [sys.executable, str(root / "bare.py")], env),
            "noetic mcp, cached tool list": (noetic, env),
            "noetic mcp, no cache (first start; writes it)": (noetic, env),
        }  # fmt: skip
        if previous is not None:  # a cache of its own: its key is not ours, nor ours its
            variants[f"previous design ({rev})"] = (
                [sys.executable, "-c", NOETIC_MAIN, "mcp", "--store", store],
                {**env, "PYTHONPATH": str(previous), "NOETIC_CACHE_DIR": str(root / "cache-rev")},
            )
        times: dict[str, list[tuple[float, float]]] = {"python -c pass (the interpreter)": []}
        times |= {label: [] for label in variants}
        first_listing(noetic, env)  # creates the store and the cache; warms the disk
        for _ in range(starts):
            times["python -c pass (the interpreter)"].append(bare_python())
            for label, (command, variant_env) in variants.items():
                if "no cache" in label:
                    shutil.rmtree(cache, ignore_errors=True)
                times[label].append(first_listing(command, variant_env))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"start-up to the first tools/list answer, median of {starts} (load {load:.2f}), "
        "wall time and the server's CPU time:"
    )
    for label, pairs in times.items():
        wall, cpu = [p[0] for p in pairs], [p[1] for p in pairs]
        print(
            f"  {label}: {statistics.median(wall):.0f} ms (min {min(wall):.0f}, max "
            f"{max(wall):.0f}); CPU {statistics.median(cpu):.0f} ms"
        )
    if previous is None:
        print(f"  previous design ({rev or '?'}): not measured (no git history to take it from)")


async def timed(client: Client, name: str, args: dict) -> float:
    t = time.perf_counter()
    result = await client.call_tool(name, args)
    elapsed = (time.perf_counter() - t) * 1000
    assert not result.is_error, result.content[0].text
    return elapsed


async def calls() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        env = {**get_default_environment(), "NOETIC_CACHE_DIR": str(Path(tmp) / "cache")}
        params = StdioServerParameters(command=NOETIC, args=["mcp", "--store", tmp], env=env)
        async with Client(params, mode="legacy") as client:
            for _ in range(20):  # warm up
                await client.call_tool("get_empirica_introduction", {})
            floor = [await timed(client, "get_empirica_introduction", {}) for _ in range(CALLS)]
            fresh = []
            for _ in range(CALLS):  # a new session for every task
                await client.call_tool("bootstrap_session", {"ai_id": "bench"})
                fresh.append(await timed(client, "submit_preflight_assessment", ARGS))
            await client.call_tool("bootstrap_session", {"ai_id": "bench"})
            for _ in range(FILL):  # a session already holding 1,000 assessments
                await client.call_tool("submit_preflight_assessment", ARGS)
            growing = [
                await timed(client, "submit_preflight_assessment", ARGS) for _ in range(CALLS)
            ]
    print(summary("trivial tool (get_empirica_introduction), the SDK floor", floor))
    print(summary("submit_preflight_assessment, first task of a session", fresh))
    print(summary(f"submit_preflight_assessment, session holding {FILL}+ assessments", growing))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=11, help="start-up rounds (default 11)")
    parser.add_argument("--previous", help="revision of the previous design (default: the parent "
                        "of the commit that added the cached tool list)")  # fmt: skip
    parser.add_argument("--no-calls", action="store_true", help="measure start-up only")
    options = parser.parse_args()
    startups(options.starts, options.previous or previous_revision())
    code = "import time; t = time.perf_counter(); import mcp.server.mcpserver; "
    code += "print((time.perf_counter() - t) * 1000)"
    imports = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    print(f"importing the mcp server SDK alone: {float(imports.stdout):.0f} ms")
    if not options.no_calls:
        asyncio.run(calls())


if __name__ == "__main__":
    main()
