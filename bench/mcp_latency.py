"""MCP over stdio from the SDK client: start-up to the first list_tools, and the round trip of
submit_preflight_assessment (p50 / p95 over 200 calls; each call writes SQLite, the session JSON
and a reflex log)."""

import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client, StdioServerParameters

NOETIC = str(Path(sys.executable).with_name("noetic"))
CALLS = 200
SCORES = {
    "engagement": 0.9, "know": 0.8, "do": 0.8, "context": 0.8, "clarity": 0.8,
    "coherence": 0.9, "signal": 0.8, "density": 0.2, "state": 0.8, "change": 0.8,
    "completion": 0.8, "impact": 0.8, "uncertainty": 0.2,
}  # fmt: skip


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        params = StdioServerParameters(command=NOETIC, args=["mcp", "--store", tmp])
        start = time.perf_counter()
        async with Client(params) as client:
            await client.list_tools()
            startup = (time.perf_counter() - start) * 1000
            fresh, growing = [], []
            args = {"task": "bench", "vectors": SCORES, "abandon_open": True}
            for i in range(CALLS + 10):  # a new session for every task
                await client.call_tool("bootstrap_session", {"ai_id": "bench"})
                t = time.perf_counter()
                result = await client.call_tool("submit_preflight_assessment", args)
                if i >= 10:
                    fresh.append((time.perf_counter() - t) * 1000)
                assert not result.is_error
            await client.call_tool("bootstrap_session", {"ai_id": "bench"})
            for _ in range(CALLS):  # one session accumulating 200 tasks
                t = time.perf_counter()
                result = await client.call_tool("submit_preflight_assessment", args)
                growing.append((time.perf_counter() - t) * 1000)
                assert not result.is_error
    print(f"start-up to first list_tools: {startup:.0f} ms")
    for label, times in (("first task of a session", fresh), ("one session, 200 tasks", growing)):
        times.sort()
        print(
            f"submit_preflight_assessment over stdio, {label}: "
            f"p50 {statistics.median(times):.2f} ms, p95 {times[int(0.95 * len(times)) - 1]:.2f} ms"
            f" (n={CALLS})"
        )


if __name__ == "__main__":
    asyncio.run(main())
