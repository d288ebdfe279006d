"""MCP over stdio from the SDK client: start-up to the first list_tools, and the round trip of
submit_preflight_assessment (p50 / p95 over 200 calls), next to a trivial tool on the same
connection (the SDK's floor). Each submit commits to SQLite and queues the session's JSON file
and a reflex log, which the server writes a moment later on its background thread."""

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

NOETIC = str(Path(sys.executable).with_name("noetic"))
CALLS = 200
FILL = 1000
STARTS = 5
SCORES = {
    "engagement": 0.9, "know": 0.8, "do": 0.8, "context": 0.8, "clarity": 0.8,
    "coherence": 0.9, "signal": 0.8, "density": 0.2, "state": 0.8, "change": 0.8,
    "completion": 0.8, "impact": 0.8, "uncertainty": 0.2,
}  # fmt: skip
ARGS = {"task": "bench", "vectors": SCORES, "abandon_open": True}


def summary(label: str, times: list[float]) -> str:
    times = sorted(times)
    p95 = times[int(0.95 * len(times)) - 1]
    return f"{label}: p50 {statistics.median(times):.2f} ms, p95 {p95:.2f} ms (n={len(times)})"


async def startup(store: str) -> float:
    start = time.perf_counter()
    async with Client(StdioServerParameters(command=NOETIC, args=["mcp", "--store", store])) as c:
        await c.list_tools()
        return (time.perf_counter() - start) * 1000


async def timed(client: Client, name: str, args: dict) -> float:
    t = time.perf_counter()
    result = await client.call_tool(name, args)
    elapsed = (time.perf_counter() - t) * 1000
    assert not result.is_error, result.content[0].text
    return elapsed


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        starts = [await startup(tmp) for _ in range(STARTS)]
        params = StdioServerParameters(command=NOETIC, args=["mcp", "--store", tmp])
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
    code = "import time; t = time.perf_counter(); import mcp.server.mcpserver; "
    code += "print((time.perf_counter() - t) * 1000)"
    imports = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    import_ms = float(imports.stdout)
    print(
        f"start-up to first list_tools: median {statistics.median(starts):.0f} ms over {STARTS} "
        f"starts (importing the mcp server SDK alone: {import_ms:.0f} ms)"
    )
    print(summary("trivial tool (get_empirica_introduction), the SDK floor", floor))
    print(summary("submit_preflight_assessment, first task of a session", fresh))
    print(summary(f"submit_preflight_assessment, session holding {FILL}+ assessments", growing))


if __name__ == "__main__":
    asyncio.run(main())
