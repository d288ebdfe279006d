"""Recall latency, top 5, at 1k, 10k and 100k finished tasks over ten projects: in a long-lived
process (the index loaded once) and as a cold CLI call (a new process: imports, the embedder's
load, then the query against the memory-mapped index), beside the seed's pure-SQL ranking on the
same data in the same run; the cold `noetic recall` wall time against `noetic --help`;
embedding throughput; checkpoint token figures.

    python bench/recall_latency.py            # everything
    python bench/recall_latency.py 10000      # one size
"""

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.assessment import Assessment
from noetic.embeddings import load_embedder, recall_embedder
from noetic.llm.tokens import count_tokens
from noetic.profiles import ProfileRegistry
from noetic.recall.engine import recall
from noetic.recall.index import index_for
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
PROJECTS = [f"project-{i}" for i in range(10)]
SEED_SQL = """
SELECT cascade_id, task,
  (learning * 0.5 + (1.0 / (1.0 + (julianday('now') - julianday(ended_at)) * 0.1)) * 0.3)
  * CASE WHEN calibration = 'well_calibrated' THEN 1.0 ELSE 0.3 END AS final_score
FROM session_summaries WHERE ai_id = ? ORDER BY final_score DESC LIMIT 5
"""
NOETIC = str(Path(sys.executable).with_name("noetic"))


def fill(store: Store, n: int, embedder_name: str, dim: int) -> None:
    """``n`` finished tasks, already embedded (random unit vectors stand in for the texts')."""
    rng = random.Random(n)
    now = datetime.now(UTC)
    store.conn.execute(
        "INSERT INTO sessions (id, ai_id, profile, created_at) "
        "VALUES ('s_b', 'bench', 'balanced', 'x')"
    )
    vectors = np.random.default_rng(n).standard_normal((n, dim)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    cascades, summaries, embedded = [], [], []
    for i in range(n):
        cid = f"c_{i}"
        pre = {v: round(rng.random(), 2) for v in VECTOR_NAMES}
        post = {v: min(1.0, round(p + rng.random() * 0.3, 2)) for v, p in pre.items()}
        delta = {v: post[v] - pre[v] for v in pre}
        task = " ".join(rng.sample(WORDS, 4))
        at = now - timedelta(days=rng.random() * 90)
        project = PROJECTS[i % len(PROJECTS)]
        learning = rng.random() * 0.3
        calibration = rng.choice(["well_calibrated"] * 3 + ["overconfident"])
        cascades.append((cid, task, at.isoformat()))
        summaries.append((cid, project, task, at.isoformat(), json.dumps(pre),
                          json.dumps(post), json.dumps(delta), learning, calibration,
                          pack(pre), pack(delta)))  # fmt: skip
        embedded.append((embedder_name, cid, project, calibration, learning, at.timestamp(),
                         pack(pre), pack(delta), vectors[i].tobytes()))  # fmt: skip
    with store.transaction() as c:
        c.executemany(
            "INSERT INTO cascades (id, session_id, task, status, profile, created_at) "
            "VALUES (?, 's_b', ?, 'completed', 'balanced', ?)",
            cascades,
        )
        c.executemany(
            "INSERT INTO session_summaries (cascade_id, session_id, ai_id, project, task, "
            "ended_at, pre, post, delta, learning, calibration, confidence_pre, "
            "confidence_post, pre_vec, delta_vec) "
            "VALUES (?, 's_b', 'bench', ?, ?, ?, ?, ?, ?, ?, ?, 0.6, 0.7, ?, ?)",
            summaries,
        )
        c.executemany(
            "INSERT INTO recall_vectors (embedder, cascade_id, ai_id, project, calibration, "
            "learning, ended, pre_vec, delta_vec, vector) "
            "VALUES (?, ?, 'bench', ?, ?, ?, ?, ?, ?, ?)",
            embedded,
        )


class Known:
    """The embedder with the queries embedded beforehand: what recall costs besides the
    query's embedding."""

    def __init__(self, embedder: object, texts: list[str]) -> None:
        self.name = embedder.name  # type: ignore[attr-defined]
        self.dimension = embedder.dimension  # type: ignore[attr-defined]
        self.vectors = dict(zip(texts, embedder.embed(texts), strict=True))  # type: ignore[attr-defined]

    def embed(self, texts: list[str]) -> np.ndarray:
        return np.array([self.vectors[t] for t in texts], dtype=np.float32)


def query(i: int) -> str:
    return f"fix the {WORDS[i % len(WORDS)]} bug in the {WORDS[-1 - i % len(WORDS)]} code"


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, int(q * len(values)) - 1)]


COLD = """
import json, sys, time
t0 = time.perf_counter()
from noetic.embeddings import recall_embedder
from noetic.llm.tokens import count_tokens
from noetic.recall.engine import recall
from noetic.store import Store
t1 = time.perf_counter()
embedder = recall_embedder(); embedder.embed(["warm"]); count_tokens("warm")
t2 = time.perf_counter()
store = Store(sys.argv[1], write_files=False)
r = recall(store, sys.argv[2], embedder, count_tokens, limit=5, all_projects=True)
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "embedder": t2 - t1, "query": t3 - t2}))
"""


def latency(sizes: list[int]) -> None:
    embedder = recall_embedder()
    current = {v: 0.4 for v in VECTOR_NAMES}
    print(f"embedder {embedder.name}; top 5; ten projects; times in ms")
    query_ms = []
    for i in range(20):
        t = time.perf_counter()
        embedder.embed([query(i)])
        query_ms.append((time.perf_counter() - t) * 1000)
    print(f"query embedding alone: p50 {statistics.median(query_ms):.1f}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
            fill(store, n, embedder.name, embedder.dimension)
            t = time.perf_counter()
            index_for(store, embedder)
            build = (time.perf_counter() - t) * 1000
            runs = 30 if n == 100_000 else 60
            lines = []
            known = Known(embedder, [query(i) for i in range(runs)])
            for label, kw in (("all projects", {"all_projects": True}),
                              ("one project", {"project": PROJECTS[3]})):  # fmt: skip
                ours, search, sql = [], [], []
                for i in range(runs):
                    task = query(i)
                    t = time.perf_counter()
                    recall(store, task, embedder, count_tokens, current=current, limit=5, **kw)
                    ours.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    recall(store, task, known, count_tokens, current=current, limit=5, **kw)
                    search.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    store.conn.execute(SEED_SQL, ("bench",)).fetchall()
                    sql.append((time.perf_counter() - t) * 1000)
                o, q, f = statistics.median(ours), statistics.median(sql), statistics.median(search)
                lines.append(f"  long-lived, {label:>12}: p50 {o:7.1f}  p95 {p(ours, 0.95):7.1f}"
                             f" | seed SQL p50 {q:7.1f} | {q / o:6.2f}x faster"
                             f" | without embedding the query: p50 {f:5.1f}  p95 "
                             f"{p(search, 0.95):5.1f}, {q / f:6.2f}x faster")  # fmt: skip
            cold = []
            for i in range(5):
                out = subprocess.run(
                    [sys.executable, "-c", COLD, tmp, f"fix the {WORDS[i]} bug"],
                    capture_output=True, text=True, check=True,
                )  # fmt: skip
                cold.append(json.loads(out.stdout))
            med = {k: statistics.median(c[k] for c in cold) * 1000 for k in cold[0]}
            worst = max(c["query"] for c in cold) * 1000
            print(f"{n:>7,} tasks (index built from SQLite once: {build:,.0f} ms)")
            print("\n".join(lines))
            print(f"  cold process, all projects: query p50 {med['query']:.1f}, max of 5 "
                  f"{worst:.1f} (after imports {med['imports']:.0f}, embedder load "
                  f"{med['embedder']:.0f})")  # fmt: skip
            if n == sizes[0]:
                cli_wall(tmp)


def _wall(args: list[str], runs: int = 5) -> tuple[float, float]:
    """Median wall time and median CPU time (user + system) of a fresh process, in ms: on a
    shared machine the CPU time is what the call itself costs."""
    import resource

    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(args, capture_output=True, check=True)
        walls.append((time.perf_counter() - t) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append((after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000)
    return statistics.median(walls), statistics.median(cpus)


def cli_wall(store: str) -> None:
    """The cold `noetic recall` against `noetic --help` plus the embedder's own load (a fresh
    Python importing the embedder and embedding one text)."""
    help_ms = _wall([NOETIC, "--help"])
    recall_ms = _wall([NOETIC, "recall", "fix the auth bug", "--all-projects", "--json",
                       "--store", store])  # fmt: skip
    load_ms = _wall([sys.executable, "-c", "from noetic.embeddings import recall_embedder; "
                     "recall_embedder().embed(['x'])"])  # fmt: skip
    for i, what in enumerate(("wall", "CPU")):
        ratio = recall_ms[i] / (help_ms[i] + load_ms[i])
        print(f"  cold CLI ({what}): noetic recall --json {recall_ms[i]:.0f} ms; noetic --help "
              f"{help_ms[i]:.0f} ms; embedder load {load_ms[i]:.0f} ms; ratio {ratio:.2f} of "
              "(help + embedder load)")  # fmt: skip


def throughput() -> None:
    texts = [" ".join(random.Random(i).sample(WORDS, 6)) for i in range(2000)]
    for name in ("minilm", "wordllama"):
        embedder = load_embedder(name)
        embedder.embed(texts[:10])
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
    if len(sys.argv) > 1:
        latency([int(a) for a in sys.argv[1:]])
    else:
        latency([1_000, 10_000, 100_000])
        throughput()
        checkpoint_tokens()
