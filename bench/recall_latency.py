"""Recall latency, top 5, at 1k, 10k and 100k finished tasks over ten projects: in a long-lived
process (the index loaded once) and as a cold CLI call (a new process: imports, the embedder's
load, then the query against the memory-mapped index), beside the seed's pure-SQL ranking on the
same data in the same run; the cold `noetic recall` wall time against `noetic --help`;
embedding throughput; checkpoint token figures.

In the long-lived process every "new query" is a text this process has never embedded (the
bench checks that each of those calls missed the query cache); a "repeated query" is the same
text recalled again, as an agent's bootstrap and resume do, answered from the cache. The query's
embedding alone is timed beside the previous implementation (``tests/recall/minilm_reference.py``)
on the same texts.

    python bench/recall_latency.py            # everything
    python bench/recall_latency.py 10000      # one size
"""

import itertools
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

from tests.recall.minilm_reference import ReferenceMiniLM

from noetic.assessment import Assessment
from noetic.embeddings import embed_query, load_embedder, query_cache_info, recall_embedder
from noetic.llm.tokens import count_tokens
from noetic.profiles import ProfileRegistry
from noetic.recall.index import index_for
from noetic.recall.selection import recall
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


_FRESH = (
    f"{verb} the {a} bug in the {b} code"
    for verb in ("fix", "find", "debug", "trace", "patch")
    for a, b in itertools.permutations(random.Random(7).sample(WORDS, len(WORDS)), 2)
)


def fresh_query() -> str:
    """A query text of eight words (11 tokens or so) that this process has not seen before."""
    return next(_FRESH)


def p(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[max(0, int(q * len(values)) - 1)]


COLD = """
import json, sys, time
t0 = time.perf_counter()
from noetic.embeddings import recall_embedder
from noetic.llm.tokens import count_tokens
from noetic.recall.selection import recall
from noetic.store import Store
t1 = time.perf_counter()
embedder = recall_embedder(); embedder.embed(["warm"]); count_tokens("warm")
t2 = time.perf_counter()
store = Store(sys.argv[1], write_files=False)
scope = {"all_projects": True} if sys.argv[3] == "all" else {"project": sys.argv[3]}
r = recall(store, sys.argv[2], embedder, count_tokens, limit=5, **scope)
t3 = time.perf_counter()
print(json.dumps({"imports": t1 - t0, "embedder": t2 - t1, "query": t3 - t2}))
"""


def latency(sizes: list[int]) -> None:
    embedder = recall_embedder()
    current = {v: 0.4 for v in VECTOR_NAMES}
    print(f"embedder {embedder.name}; top 5; ten projects; times in ms")
    embedding_alone(embedder)
    for n in sizes:
        with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
            fill(store, n, embedder.name, embedder.dimension)
            t = time.perf_counter()
            index_for(store, embedder)
            build = (time.perf_counter() - t) * 1000
            runs = 30 if n == 100_000 else 60
            lines = []
            for label, kw in (("all projects", {"all_projects": True}),
                              ("one project", {"project": PROJECTS[3]})):  # fmt: skip
                tasks = [fresh_query() for _ in range(runs)]
                known = Known(embedder, tasks)
                ours, again, search, sql = [], [], [], []
                for task in tasks:
                    before = query_cache_info()
                    t = time.perf_counter()
                    recall(store, task, embedder, count_tokens, current=current, limit=5, **kw)
                    ours.append((time.perf_counter() - t) * 1000)
                    after = query_cache_info()
                    if (after.hits, after.misses) != (before.hits, before.misses + 1):
                        raise SystemExit(f"a new query was not embedded: {before} -> {after}")
                    t = time.perf_counter()
                    recall(store, task, embedder, count_tokens, current=current, limit=5, **kw)
                    again.append((time.perf_counter() - t) * 1000)
                    if query_cache_info().hits != after.hits + 1:
                        raise SystemExit("a repeated query was embedded again")
                    t = time.perf_counter()
                    recall(store, task, known, count_tokens, current=current, limit=5, **kw)
                    search.append((time.perf_counter() - t) * 1000)
                    t = time.perf_counter()
                    store.conn.execute(SEED_SQL, ("bench",)).fetchall()
                    sql.append((time.perf_counter() - t) * 1000)
                q = statistics.median(sql)
                o, r, f = (statistics.median(x) for x in (ours, again, search))
                lines.append(f"  long-lived, {label}: seed SQL p50 {q:.1f}")
                rows = (("new query (embedded now):", o, ours),
                        ("repeated query (cached vector):", r, again),
                        ("search alone (vector given):", f, search))  # fmt: skip
                lines.extend(f"    {what:<34} p50 {m:6.1f}  p95 {p(x, 0.95):6.1f}  "
                             f"{q / m:6.1f}x faster than the seed's SQL"
                             for what, m, x in rows)  # fmt: skip
            print(f"{n:>7,} tasks (index built from SQLite once: {build:,.0f} ms)")
            print("\n".join(lines))
            for label, scope in (("all projects", "all"), ("one project", PROJECTS[3])):
                cold = []
                for i in range(5):
                    out = subprocess.run(
                        [sys.executable, "-c", COLD, tmp, f"fix the {WORDS[i]} bug", scope],
                        capture_output=True, text=True, check=True,
                    )  # fmt: skip
                    cold.append(json.loads(out.stdout))
                med = {k: statistics.median(c[k] for c in cold) * 1000 for k in cold[0]}
                worst = max(c["query"] for c in cold) * 1000
                print(f"  cold process, {label}: query p50 {med['query']:.1f}, max of 5 "
                      f"{worst:.1f} (after imports {med['imports']:.0f}, embedder load "
                      f"{med['embedder']:.0f})")  # fmt: skip
            if n == sizes[0]:
                cli_wall(tmp)


def embedding_alone(embedder: object, runs: int = 40) -> None:
    """The query's embedding on texts never seen before, interleaved with the previous
    implementation on the same texts, and the query cache's answer for a text seen before."""
    if embedder.name != "all-minilm-l6-v2":  # type: ignore[attr-defined]
        return
    reference = ReferenceMiniLM()
    ours, theirs, cached, tokens = [], [], [], []
    for _ in range(runs):
        text = fresh_query()
        tokens.append(len(reference._tokenizer.encode(text).ids))
        t = time.perf_counter()
        embed_query(embedder, text)  # type: ignore[arg-type]
        ours.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        reference.embed([text])
        theirs.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        embed_query(embedder, text)  # type: ignore[arg-type]
        cached.append((time.perf_counter() - t) * 1000)
    o, r = statistics.median(ours), statistics.median(theirs)
    print(f"query embedding alone ({statistics.median(tokens):.0f} tokens, new texts): p50 "
          f"{o:.2f}  p95 {p(ours, 0.95):.2f}; previous implementation p50 {r:.2f}  p95 "
          f"{p(theirs, 0.95):.2f} ({r / o:.2f}x); a repeated text from the cache p50 "
          f"{statistics.median(cached) * 1000:.0f} us")  # fmt: skip


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


def throughput(rounds: int = 3) -> None:
    """Texts per second in batches (indexing finished tasks): the embedders take turns on the
    same 640 texts, ``rounds`` times; the median round."""
    texts = [" ".join(random.Random(i).sample(WORDS, 6)) for i in range(640)]
    embedders = {
        "all-minilm-l6-v2": load_embedder("minilm"),
        "all-minilm-l6-v2, previous implementation": ReferenceMiniLM(),
        "wordllama-l2_supercat-256": load_embedder("wordllama"),
    }
    rates: dict[str, list[float]] = {label: [] for label in embedders}
    for _ in range(rounds):
        for label, embedder in embedders.items():
            embedder.embed(texts[:10])
            t = time.perf_counter()
            embedder.embed(texts)
            rates[label].append(len(texts) / (time.perf_counter() - t))
    for label, embedder in embedders.items():
        print(f"embedding throughput: {statistics.median(rates[label]):,.0f} texts/s ({label}, "
              f"{embedder.dimension} dims; median of {rounds} rounds)")  # fmt: skip


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
