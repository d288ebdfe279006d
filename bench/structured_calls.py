"""Model calls per structured reply: a server that honours the native schema field versus one
that ignores it, measured in the same run.

Both servers speak the OpenAI wire (the real ``openai`` SDK, loopback HTTP) and answer the
same 24 prompts for CASCADE's THINK reply (``noetic.cascade.engine.Think``). The honouring
server answers in the shape ``response_format`` asks for. The ignoring one (the baseline: what
every structured call did before native output) answers each prompt with the kind of reply a
model that is only *asked* for JSON writes; the set below mixes clean objects, objects in code
fences or prose, and the usual mistakes (a trailing comma, Python literals, a value outside the
enum, a missing field, a string for a boolean, prose only), and a repair request is answered
with a valid object. Figures: model calls per reply, replies that needed a repair round, replies
lost after it, and mean wall time per reply (loopback, so it shows the extra round trips, not a
model's generation time).

Usage: python bench/structured_calls.py
"""

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.model_server import reply, running, structured

from noetic.cascade.engine import Think
from noetic.errors import ParseError
from noetic.llm.base import Request
from noetic.llm.openai_compat import OpenAICompatibleProvider
from noetic.llm.structured import complete_structured

GOOD = {"approach": "read the failing test, then the parser", "strategy": "code",
        "complex": False}  # fmt: skip
G = json.dumps(GOOD)
UNCONSTRAINED = [
    G, G, G, G,
    f"```json\n{G}\n```", f"```json\n{G}\n```", f"```json\n{G}\n```",
    f"Here is my plan:\n{G}", f"Sure! {G} Let me know if you need more.",
    f"I'll think first.\n```\n{G}\n```",
    G.replace('"complex": false', '"complex": false,'),            # trailing comma
    G.replace("false", "False"),                                      # a Python literal
    G.replace('"code"', '"debugging"'),                               # outside the enum
    G.replace('"code"', '"Code"'),                                    # enum case
    json.dumps({k: v for k, v in GOOD.items() if k != "complex"}),    # a missing field
    G.replace("false", '"no"'),                                       # a string for a boolean
    "I would read the failing test first, then the parser; it is code work and not complex.",
    "{'approach': 'read the test', 'strategy': 'code', 'complex': False}",  # Python dict
    G[: len(G) // 2],                                                 # cut off
    f"```json\n{G}\n```", G, f"Plan: {G}", G,
    json.dumps({"thought": "read the test", "kind": "code"}),         # its own field names
]  # fmt: skip


async def run(mode: str) -> tuple[list[int], int, list[float]]:
    calls_per_reply: list[int] = []
    lost = 0
    times: list[float] = []
    with running(schema_mode=mode) as server:
        client = openai.AsyncOpenAI(api_key="k", base_url=f"{server.url}/v1", max_retries=0)
        provider = OpenAICompatibleProvider("m", client=client)
        for i, text in enumerate(UNCONSTRAINED):
            server.enqueue(structured(GOOD, text=text), reply(G))
            before = len(server.requests)
            start = time.perf_counter()
            try:
                await complete_structured(provider, Request.of(f"task {i}: fix the parser"), Think)
            except ParseError:
                lost += 1
            times.append((time.perf_counter() - start) * 1000)
            calls_per_reply.append(len(server.requests) - before)
            server.queue.clear()  # an unused repair answer does not carry over
        await client.close()
    return calls_per_reply, lost, times


def main() -> None:
    asyncio.run(run("honour"))  # warm-up: imports, first connections
    print(f"{len(UNCONSTRAINED)} structured replies (THINK), OpenAI wire, loopback server\n")
    print(f"{'server':<34}{'calls/reply':>12}{'repaired':>10}{'lost':>6}{'ms/reply':>10}")
    for label, mode in (("ignores response_format (baseline)", "ignore"),
                        ("honours response_format", "honour")):  # fmt: skip
        calls, lost, times = asyncio.run(run(mode))
        repaired = sum(1 for c in calls if c > 1)
        print(f"{label:<34}{statistics.mean(calls):>12.3f}{repaired:>10}{lost:>6}"
              f"{statistics.mean(times):>10.2f}")  # fmt: skip


if __name__ == "__main__":
    main()
