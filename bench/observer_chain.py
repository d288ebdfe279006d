"""Observer chain on 100 scripted queries with a known mix (40 simple, 35 medium, 25 complex,
a fifth of them asked twice): average chain length, model calls per query with and without the
pattern cache, and cache lookup latency at 10k cached answers."""

import asyncio
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.embeddings import default_embedder
from noetic.llm.scripted import ScriptedProvider
from noetic.observer.cache import PatternCache
from noetic.observer.chain import run_chain
from noetic.store import Store

SIMPLE = ["CONFIDENCE: 0.9\nLAYERS: C02\nCONTENT: a", "CONFIDENCE: 0.92\nLAYERS: C02\nCONTENT: b"]
MEDIUM = [
    "CONFIDENCE: 0.7\nLAYERS: C02,C07,C10,C15\nCONTENT: a",
    "CONFIDENCE: 0.8\nLAYERS: C02,C07,C10\nCONTENT: b",
    "CONFIDENCE: 0.96\nLAYERS: C02,C07\nCONTENT: c",
]
COMPLEX = [
    f"CONFIDENCE: {c}\nLAYERS: C01,C03,C04,C06,C13\nCONTENT: s{i}"
    for i, c in enumerate((0.6, 0.7, 0.8, 0.9))
]


def queries() -> list[tuple[str, list[str]]]:
    rng = random.Random(0)
    kinds = [("simple", SIMPLE)] * 40 + [("medium", MEDIUM)] * 35 + [("complex", COMPLEX)] * 25
    words = [
        "river",
        "planet",
        "engine",
        "garden",
        "violin",
        "harbor",
        "copper",
        "lantern",
        "meadow",
        "signal",
    ]
    base = []
    for i, (kind, replies) in enumerate(kinds):
        topic = " ".join(rng.sample(words, 3))
        answers = [r.replace("CONTENT: ", f"CONTENT: {topic} {rng.random():.6f} ") for r in replies]
        base.append((f"{kind} question number {i} about {topic}", answers))
    repeats = rng.sample(base, 20)
    mixed = base[:80] + repeats
    rng.shuffle(mixed)
    return mixed


async def measure(use_cache: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        cache = PatternCache(store, default_embedder()) if use_cache else None
        lengths, calls = [], []
        for query, replies in queries():
            result = await run_chain(query, ScriptedProvider(replies), cache=cache, store=store)
            lengths.append(result.stages)
            calls.append(result.model_calls)
        return statistics.mean(lengths), statistics.mean(calls)


def lookup_latency(size: int = 10_000) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        embedder = default_embedder()
        cache = PatternCache(store, embedder, max_size=size + 1)
        rows = [f"cached question {i} about subject {i * 7919 % 10007}" for i in range(size)]
        vectors = embedder.embed(rows)
        with store.transaction() as conn:
            conn.executemany(
                "INSERT INTO pattern_cache (query, embedder, embedding, answer, answer_embedding,"
                " confidence, layers, created_at, last_used_at)"
                " VALUES (?, ?, ?, 'a', ?, 0.9, '[]', ?, ?)",
                [(q, embedder.name, v.tobytes(), v.tobytes(), time.time(), time.time())
                 for q, v in zip(rows, vectors, strict=True)],
            )  # fmt: skip
        cache = PatternCache(store, embedder, max_size=size + 1)
        times = []
        for i in range(200):
            start = time.perf_counter()
            cache.lookup(f"new question {i} nobody asked", touch=False)
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        return statistics.median(times), times[int(0.95 * len(times)) - 1]


def main() -> None:
    length, calls = asyncio.run(measure(use_cache=False))
    c_length, c_calls = asyncio.run(measure(use_cache=True))
    print(f"without cache: average chain length {length:.2f} stages, {calls:.2f} model calls/query")
    print(
        f"with cache:    average chain length {c_length:.2f} stages, "
        f"{c_calls:.2f} model calls/query (cache hits count 0 stages)"
    )
    p50, p95 = lookup_latency()
    print(f"cache lookup at 10,000 cached answers: p50 {p50:.2f} ms, p95 {p95:.2f} ms")


if __name__ == "__main__":
    main()
