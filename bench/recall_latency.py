"""Recall latency (top 5) at 1k, 10k and 100k finished tasks against the seed's pure-SQL
ranking on the same data; embedding throughput; checkpoint token figures."""

import json
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.assessment import Assessment
from noetic.embeddings import default_embedder
from noetic.llm.tokens import count_tokens
from noetic.profiles import ProfileRegistry
from noetic.recall.engine import recall
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store.checkpoints import bootstrap_context
from noetic.store.summaries import pack
from noetic.vectors import VECTOR_NAMES

WORDS = [
    "auth", "login", "parser", "cache", "index", "query", "deploy", "release", "budget",
    "migration", "schema", "test", "flaky", "timezone", "invoice", "billing", "retry", "queue",
    "worker", "memory", "leak", "docs", "api",
]  # fmt: skip
SEED_SQL = """
SELECT cascade_id, task,
  (learning * 0.5 + (1.0 / (1.0 + (julianday('now') - julianday(ended_at)) * 0.1)) * 0.3)
  * CASE WHEN calibration = 'well_calibrated' THEN 1.0 ELSE 0.3 END AS final_score
FROM session_summaries WHERE ai_id = ? ORDER BY final_score DESC LIMIT 5
"""


def fill(store: Store, n: int, dim: int) -> None:
    rng = random.Random(n)
    now = datetime.now(UTC)
    store.conn.execute(
        "INSERT INTO sessions (id, ai_id, profile, created_at) "
        "VALUES ('s_b', 'bench', 'balanced', 'x')"
    )
    rows, cascades = [], []
    for i in range(n):
        cid = f"c_{i}"
        pre = {v: round(rng.random(), 2) for v in VECTOR_NAMES}
        post = {v: min(1.0, round(p + rng.random() * 0.3, 2)) for v, p in pre.items()}
        vec = np.random.default_rng(i).standard_normal(dim).astype(np.float32)
        vec /= np.linalg.norm(vec)
        task = " ".join(rng.sample(WORDS, 4))
        ended = (now - timedelta(days=rng.random() * 90)).isoformat()
        cascades.append((cid, task, ended))
        rows.append(
            (
                cid,
                task,
                ended,
                json.dumps(pre),
                json.dumps(post),
                json.dumps({v: post[v] - pre[v] for v in pre}),
                rng.random() * 0.3,
                rng.choice(["well_calibrated"] * 3 + ["overconfident"]),
                vec.tobytes(),
            )
        )
    with store.transaction() as c:
        c.executemany(
            "INSERT INTO cascades (id, session_id, task, status, profile, created_at) "
            "VALUES (?, 's_b', ?, 'completed', 'balanced', ?)",
            cascades,
        )
        c.executemany(
            "INSERT INTO session_summaries (cascade_id, session_id, ai_id, task, ended_at, pre, "
            "post, delta, learning, calibration, confidence_pre, confidence_post, embedder, "
            "embedding, pre_vec, delta_vec) "
            "VALUES (?, 's_b', 'bench', ?, ?, ?, ?, ?, ?, ?, 0.6, 0.7, ?, ?, ?, ?)",
            [
                (
                    *r[:8],
                    default_embedder().name,
                    r[8],
                    pack(json.loads(r[3])),
                    pack(json.loads(r[5])),
                )
                for r in rows
            ],
        )


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, int(q * len(values)) - 1)]


def latency() -> None:
    embedder = default_embedder()
    current = {v: 0.4 for v in VECTOR_NAMES}
    for n in (1_000, 10_000, 100_000):
        with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
            fill(store, n, embedder.dimension)
            ours, sql = [], []
            for i in range(15 if n == 100_000 else 40):
                t = time.perf_counter()
                recall(
                    store,
                    f"fix the {WORDS[i % len(WORDS)]} bug",
                    embedder,
                    len,
                    current=current,
                    limit=5,
                )
                ours.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                store.conn.execute(SEED_SQL, ("bench",)).fetchall()
                sql.append((time.perf_counter() - t) * 1000)
            print(
                f"{n:>7,} tasks: recall p50 {statistics.median(ours):8.1f} ms, p95 "
                f"{p(ours, 0.95):8.1f} ms | seed SQL p50 {statistics.median(sql):6.1f} ms | "
                f"ratio {statistics.median(ours) / statistics.median(sql):5.1f}x"
            )


def throughput() -> None:
    texts = [" ".join(random.Random(i).sample(WORDS, 6)) for i in range(20_000)]
    embedder = default_embedder()
    t = time.perf_counter()
    embedder.embed(texts)
    print(
        f"embedding throughput: {len(texts) / (time.perf_counter() - t):,.0f} texts/s "
        f"({embedder.name}, {embedder.dimension} dims)"
    )


def checkpoint_tokens() -> None:
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / ".noetic") as store:
        tracker = Tracker(store, ProfileRegistry())
        full_tokens = []
        for _ in range(5):
            session, _ = tracker.bootstrap(profile="balanced")
            vec = {v: 0.6 for v in VECTOR_NAMES} | {"engagement": 0.9, "coherence": 0.9}
            rich = {
                k: {
                    "score": s,
                    "rationale": f"because of {k} in this task",
                    "evidence": f"seen in the {k} logs",
                }
                for k, s in vec.items()
            }
            tracker.preflight(
                session.id,
                "fix the flaky billing test",
                Assessment.from_input("preflight", {"vectors": rich}),
            )
            tracker.check(session.id, Assessment.from_input("check", {"know": 0.85}))
            tracker.postflight(
                session.id,
                Assessment.from_input(
                    "postflight", {"vectors": rich, "note": "the fixture froze the clock"}
                ),
            )
            full_tokens.append(count_tokens(json.dumps(store.export_session(session.id))))
        block = bootstrap_context(store, None)
        one = count_tokens(block.splitlines()[1])
    total_full = sum(full_tokens)
    print(f"one checkpoint: {one} tokens; one full session JSON: {full_tokens[0]:,} tokens")
    print(
        f"bootstrap context for 5 tasks: {count_tokens(block)} tokens against {total_full:,} "
        f"for their session JSON files ({100 * (1 - count_tokens(block) / total_full):.0f}% "
        "fewer)"
    )


if __name__ == "__main__":
    latency()
    throughput()
    checkpoint_tokens()
