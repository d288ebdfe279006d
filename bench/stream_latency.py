"""Time to the first streamed token versus time to the whole reply, against the loopback server
with a fixed delay before each token (one word a token), for both wire formats through the real
SDK clients. The baseline is ``complete`` (no streaming) on the same server, in the same run:
what a person waited before the first word until streaming.

Usage: python bench/stream_latency.py [TOKENS] [DELAY_MS]   (default 100 tokens, 20 ms)
"""

import asyncio
import statistics
import sys
import time
from pathlib import Path

import anthropic
import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.model_server import reply, running

from noetic.llm.anthropic import AnthropicProvider
from noetic.llm.base import Completion, Request
from noetic.llm.openai_compat import OpenAICompatibleProvider

REPEATS = 5


def providers(url: str) -> dict[str, object]:
    return {
        "anthropic": AnthropicProvider(
            "claude-test",
            client=anthropic.AsyncAnthropic(api_key="k", base_url=url, max_retries=0),
        ),
        "openai": OpenAICompatibleProvider(
            "gpt-test",
            client=openai.AsyncOpenAI(api_key="k", base_url=f"{url}/v1", max_retries=0),
        ),
    }


async def measure(provider, server, text: str, delay: float) -> tuple[float, float, float]:
    request = Request.of("write")
    server.enqueue(reply(text, token_delay=delay))
    start = time.perf_counter()
    first = None
    async for item in provider.stream(request):
        if first is None and not isinstance(item, Completion):
            first = time.perf_counter() - start
    whole_streamed = time.perf_counter() - start
    server.enqueue(reply(text, token_delay=delay))
    start = time.perf_counter()
    await provider.complete(request)
    whole = time.perf_counter() - start
    return (first or whole_streamed) * 1000, whole_streamed * 1000, whole * 1000


async def main(tokens: int, delay_ms: float) -> None:
    text = " ".join(f"word{i}" for i in range(tokens))
    with running() as server:
        for name, provider in providers(server.url).items():
            await measure(provider, server, "warm up", 0)
            rows = [await measure(provider, server, text, delay_ms / 1000) for _ in range(REPEATS)]
            first, streamed, whole = (statistics.median(col) for col in zip(*rows, strict=True))
            print(f"{name:<10}{first:>16.1f}{streamed:>18.1f}{whole:>24.1f}")


if __name__ == "__main__":
    tokens = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    delay = float(sys.argv[2]) if len(sys.argv) > 2 else 20.0
    print(f"{tokens} tokens, {delay:g} ms before each; median of {REPEATS} (ms)\n")
    print(f"{'wire':<10}{'first token':>16}{'whole (stream)':>18}{'whole (complete, base)':>24}")
    asyncio.run(main(tokens, delay))
