"""What Noetic's provider layer adds per call over the bare SDK call, against a local server.

Both paths use the real ``openai`` SDK client against the same loopback server; the Noetic
path adds the adapter, the retry wrapper and recording every call to SQLite.
"""

import asyncio
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import openai

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.llm.model_server import Behaviour, running

from noetic.llm.base import Request
from noetic.llm.openai_compat import OpenAICompatibleProvider
from noetic.llm.resilience import ResilientProvider
from noetic.store import Store
from noetic.store.llm_calls import record_llm_call

CALLS = 200


async def measure(server_url: str, store: Store) -> tuple[list[float], list[float]]:
    client = openai.AsyncOpenAI(api_key="k", base_url=f"{server_url}/v1", max_retries=0)
    noetic = ResilientProvider(
        OpenAICompatibleProvider("m", client=client), record=partial(record_llm_call, store)
    )
    request = Request.of("hello")
    bare, ours = [], []
    for _ in range(20):  # warm up both paths
        await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        await noetic.complete(request)
    for _ in range(CALLS):
        start = time.perf_counter()
        await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "hello"}], max_tokens=1024
        )
        bare.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        await noetic.complete(request)
        ours.append((time.perf_counter() - start) * 1000)
    await client.close()
    return bare, ours


def main() -> None:
    with running() as server, tempfile.TemporaryDirectory() as tmp, Store(tmp) as store:
        server.default = Behaviour(text="hi")
        bare, ours = asyncio.run(measure(server.url, store))
    b, o = statistics.median(bare), statistics.median(ours)
    print(f"bare SDK call      median {b:6.2f} ms (n={CALLS})")
    print(f"through Noetic     median {o:6.2f} ms (adapter + retries + SQLite record)")
    print(f"overhead per call  median {o - b:6.2f} ms")


if __name__ == "__main__":
    main()
