"""Observer chain on 100 distinct scripted queries in the documented mix (40 simple, 35 medium,
25 complex), 20 of them asked a second time (120 asks): average chain length, model calls per
ask with and without the pattern cache, and cache lookup latency at 10k cached answers. Then
the near-miss set (tests/observer/near_misses.json): wrong hits and paraphrase hits of the cache
beside the previous rule (cosine >= 0.92 and the same numbers)."""

import asyncio
import json
import random
import re
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
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store

NEAR_MISSES = Path(__file__).resolve().parents[1] / "tests" / "observer" / "near_misses.json"

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
    order = base[:]
    rng.shuffle(order)
    # 20 of the 100 asked again, each after its first ask
    repeats = rng.sample(range(100), 20)
    mixed = list(order)
    for i in sorted(repeats, reverse=True):
        mixed.insert(rng.randint(i + 1, len(mixed)), order[i])
    return mixed


async def measure(use_cache: bool) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        cache = PatternCache(store, default_embedder()) if use_cache else None
        lengths, calls = [], []
        tracker = Tracker(store, ProfileRegistry())
        for query, replies in queries():
            ctx = build_context("observer", tracker=tracker, provider=ScriptedProvider(replies))
            result = await run_chain(ctx, query, cache=cache)
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


def previous_rule_hit(cache: PatternCache, query: str) -> bool:
    """The rule before questions were compared: the nearest entry at cosine >= 0.92 with the
    same numbers."""
    from noetic.embeddings import cosine_top_k
    from noetic.observer.cache import normalise
    from noetic.store.observations import cache_entry

    vector = cache.embedder.embed([normalise(query)])[0]
    ((row, similarity),) = cosine_top_k(vector, cache._matrix, 1)

    def numbers(text: str) -> list[str]:
        return re.findall(r"\d+(?:\.\d+)?", text)

    cached = cache_entry(cache.store, cache._ids[row])["query"]
    return similarity >= cache.threshold and numbers(cached) == numbers(query)


def near_misses() -> None:
    pairs = json.loads(NEAR_MISSES.read_text())
    asked = {"near": 0, "para": 0}
    new = {"near": 0, "para": 0}
    old = {"near": 0, "para": 0}
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        cache = PatternCache(store, default_embedder())
        for pair in pairs:
            kind = "para" if pair["kind"] == "paraphrase" else "near"
            for cached, question in ((pair["a"], pair["b"]), (pair["b"], pair["a"])):
                with store.transaction() as conn:
                    conn.execute("DELETE FROM pattern_cache")
                cache.add(cached, "answer", 0.97, ())  # the only entry
                asked[kind] += 1
                new[kind] += cache.lookup(question, touch=False) is not None
                old[kind] += previous_rule_hit(cache, question)
    print(
        f"near-miss set: {asked['near'] // 2} pairs that ask different things, "
        f"{asked['para'] // 2} paraphrase pairs; each asked both ways against the other cached"
    )
    print(
        f"  wrong hits:      {new['near']} of {asked['near']}   (previous rule: "
        f"{old['near']} of {asked['near']})"
    )
    print(
        f"  paraphrase hits: {new['para']} of {asked['para']} ({new['para'] / asked['para']:.0%})"
        f"   (previous rule: {old['para']} of {asked['para']})"
    )


def main() -> None:
    length, calls = asyncio.run(measure(use_cache=False))
    c_length, c_calls = asyncio.run(measure(use_cache=True))
    asks = queries()
    kinds = [q.split()[0] for q, _ in asks]
    distinct = {q for q, _ in asks}
    print(
        f"{len(asks)} asks of {len(distinct)} distinct queries: "
        + ", ".join(
            f"{k} {len({q for q in distinct if q.startswith(k)})}"
            for k in ("simple", "medium", "complex")
        )
        + f"; {len(asks) - len(distinct)} repeats ({kinds.count('complex')} complex asks)"
    )
    print(f"without cache: average chain length {length:.2f} stages, {calls:.2f} model calls/query")
    print(
        f"with cache:    average chain length {c_length:.2f} stages, "
        f"{c_calls:.2f} model calls/query (cache hits count 0 stages)"
    )
    p50, p95 = lookup_latency()
    print(f"cache lookup at 10,000 cached answers: p50 {p50:.2f} ms, p95 {p95:.2f} ms")
    near_misses()


if __name__ == "__main__":
    main()
