"""Recall on PostgreSQL: pgvector's HNSW search in the server beside the exact search (numpy over
the in-process index), on the same store, in one run.

The server is Debian's PostgreSQL with pgvector (``make pgvector`` installs it), started as the
tests start theirs (tests/_postgres.py: a temporary cluster on loopback, fsync off). For
each size: ``n`` finished tasks (random unit vectors stand in for the texts' embeddings, as in
bench/recall_latency.py), then recall top 5 in one project with the query's vector given: the
first query on each path (the HNSW path copies the rows into its table and builds the index
then), and the median of 20 after it.

    python bench/recall_pgvector.py            # 10k tasks
    python bench/recall_pgvector.py --100k     # 10k and 100k
"""

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests._postgres import binaries, pgvector_control, running  # noqa: E402

from noetic.embeddings import recall_embedder  # noqa: E402
from noetic.llm.tokens import count_tokens  # noqa: E402
from noetic.recall.index import index_for  # noqa: E402
from noetic.recall.selection import recall  # noqa: E402
from noetic.store import open_store, pg_vectors  # noqa: E402
from noetic.vectors import VECTOR_NAMES  # noqa: E402
from recall_latency import PROJECTS, Known, fill, fresh_query  # noqa: E402


def timed(store: Any, known: Any, tasks: list[str]) -> tuple[float, float, list[list[str]]]:
    current = dict.fromkeys(VECTOR_NAMES, 0.4)
    times, chosen = [], []
    for task in tasks:
        t = time.perf_counter()
        result = recall(store, task, known, count_tokens, current=current, limit=5,
                        project=PROJECTS[3])  # fmt: skip
        times.append((time.perf_counter() - t) * 1000)
        chosen.append([c.cascade_id for c in result.chosen])
    return times[0], statistics.median(times[1:]), chosen


def main() -> None:
    folder = binaries()
    if folder is None or not pgvector_control(folder).is_file():
        sys.exit("needs Debian's PostgreSQL with pgvector: make pgvector")
    sizes = [10_000, 100_000] if "--100k" in sys.argv else [10_000]
    embedder = recall_embedder()
    with running(folder) as server, tempfile.TemporaryDirectory() as tmp:
        print("recall top 5 on PostgreSQL, same store, same run (ms)")
        for n in sizes:
            with open_store(f"{tmp}/pg{n}", create=True, url=server.new_schema()) as store:
                fill(store, n, embedder.name, embedder.dimension)
                index_for(store, embedder)
                tasks = [fresh_query() for _ in range(21)]
                known = Known(embedder, tasks)
                store.hnsw = False  # the exact path, the default
                e_first, e_median, e_chosen = timed(store, known, tasks)
                store.hnsw = True  # [store] hnsw = true
                pg_vectors.forget(store)
                h_first, h_median, h_chosen = timed(store, known, tasks)
                same = sum(a == b for a, b in zip(e_chosen, h_chosen, strict=True))
            print(
                f"  {n:>7,} tasks  exact: first {e_first:7.1f}  median {e_median:6.1f}   "
                f"HNSW: first {h_first:8.1f}  median {h_median:6.1f}   "
                f"ratio {h_median / e_median:5.2f}   same top 5: {same}/{len(tasks)}"
            )


if __name__ == "__main__":
    main()
