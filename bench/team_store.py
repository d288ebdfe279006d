"""The PostgreSQL store beside the SQLite store, in one run, as ratios (PostgreSQL / SQLite).

- write throughput: assessments per second from 1 writer (one process, one session) and from 16
  writer processes at once (a session each), timed from a common start signal to the last
  writer's end, so process start-up is not counted;
- recall: top 5 over 10k and 100k finished tasks (random unit vectors stand in for the texts'
  embeddings, as in bench/recall_latency.py): the index's first load from the store, and a
  search with the query's vector given (median of 20);
- a CLI command's wall time, cold: ``noetic sessions list --json`` (median of 5).

The PostgreSQL server is the tests' own (tests/_postgres.py: Debian's binaries, a temporary
cluster on loopback, fsync off as in the tests: the figures are the code's and the protocol's,
not a durable disk's). Both stores live on the same machine, so the network is loopback.

    python bench/team_store.py            # everything
    python bench/team_store.py --quick    # 10k tasks only
    python bench/team_store.py --writes   # write throughput only
    python bench/team_store.py --writes --latency 1   # ... with 1 ms added to each round trip

``--latency MS`` puts a relay (tests/_round_trips.py) between the PostgreSQL writers and the
server that holds every message MS/2 milliseconds each way, as a network between machines
would; without it the round trips cost what loopback costs on a busy machine. The relay also
counts the round trips, and the run prints them per assessment.
"""

import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tests._postgres import running  # noqa: E402
from tests._round_trips import Relay  # noqa: E402

from noetic.assessment import Assessment, Thresholds, decide  # noqa: E402
from noetic.embeddings import recall_embedder  # noqa: E402
from noetic.llm.tokens import count_tokens  # noqa: E402
from noetic.recall.index import index_for  # noqa: E402
from noetic.recall.selection import recall  # noqa: E402
from noetic.store import open_store  # noqa: E402
from noetic.vectors import VECTOR_NAMES  # noqa: E402
from recall_latency import PROJECTS, Known, fill, fresh_query  # noqa: E402

NOETIC = str(Path(sys.executable).with_name("noetic"))
T = Thresholds(confidence_threshold=0.7)


def _writer(target: str, home: str, count: int, go: Any, ready: Any, done: Any) -> None:
    store = open_store(home, create=True, url=target if target.startswith("postgresql") else None)
    sid = store.create_session(ai_id=f"w{os.getpid()}", profile="balanced").id
    a = Assessment.from_input("check", {"know": 0.6, "do": 0.5})
    d = decide(a, T)
    ready.put(1)
    go.wait()
    for _ in range(count):
        store.add_assessment(sid, a, d)
    done.put(time.perf_counter())
    store.close()


def throughput(target: str, home: str, writers: int, count: int, at_start: Any = None) -> float:
    ctx = mp.get_context("spawn")
    go, ready, done = ctx.Event(), ctx.Queue(), ctx.Queue()
    procs = [
        ctx.Process(target=_writer, args=(target, home, count, go, ready, done))
        for _ in range(writers)
    ]
    for p in procs:
        p.start()
    for _ in procs:  # every writer has opened its store and waits
        ready.get(timeout=600)
    if at_start is not None:
        at_start()  # the relay counts the round trips of the timed writes only
    start = time.perf_counter()
    go.set()
    ends = [done.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    return writers * count / (max(ends) - start)


def recall_times(store: Any, n: int, embedder: Any) -> tuple[float, float]:
    fill(store, n, embedder.name, embedder.dimension)
    t = time.perf_counter()
    index_for(store, embedder)
    load = (time.perf_counter() - t) * 1000
    tasks = [fresh_query() for _ in range(20)]
    known = Known(embedder, tasks)
    current = dict.fromkeys(VECTOR_NAMES, 0.4)
    times = []
    for task in tasks:
        t = time.perf_counter()
        recall(store, task, known, count_tokens, current=current, limit=5, project=PROJECTS[3])
        times.append((time.perf_counter() - t) * 1000)
    return load, statistics.median(times)


def cli_time(store: str) -> float:
    times = []
    for _ in range(5):
        t = time.perf_counter()
        subprocess.run(
            [NOETIC, "sessions", "list", "--json", "--store", store],
            check=True, capture_output=True,
        )  # fmt: skip
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def row(what: str, sqlite: float, pg: float, unit: str) -> None:
    figures = f"SQLite {sqlite:9.1f}  PostgreSQL {pg:9.1f} {unit:<3}"
    print(f"  {what:<46} {figures} ratio {pg / sqlite:5.2f}")


def main() -> None:
    sizes = [10_000] if "--quick" in sys.argv else [10_000, 100_000]
    embedder = recall_embedder()
    with running() as server, tempfile.TemporaryDirectory() as tmp:
        print("PostgreSQL / SQLite, same machine, same run")
        relayed = "--latency" in sys.argv
        latency = float(sys.argv[sys.argv.index("--latency") + 1]) if relayed else 0.0
        if relayed:
            print(f"PostgreSQL writers through a relay adding {latency:g} ms per round trip")
        for writers, count in ((1, 300), (16, 40)):
            local = f"{tmp}/w{writers}"
            open_store(local, create=True).close()
            sq = throughput(local, local, writers, count)
            if not relayed:
                pg = throughput(server.new_schema(), f"{tmp}/pgw{writers}", writers, count)
                row(f"assessments/s, {writers} writer(s)", sq, pg, "/s")
                continue
            with Relay(server.new_schema(), delay=latency / 2000) as relay:
                pg = throughput(relay.url, f"{tmp}/pgw{writers}", writers, count, relay.reset)
                trips = relay.trips / (writers * count)
            row(f"assessments/s, {writers} writer(s)", sq, pg, "/s")
            print(f"  {'':<46} PostgreSQL: {trips:.2f} round trips per assessment")
        if "--writes" in sys.argv:
            return
        for n in sizes:
            with open_store(f"{tmp}/r{n}", create=True, write_files=False) as sqlite_store:
                sq_load, sq_query = recall_times(sqlite_store, n, embedder)
            with open_store(f"{tmp}/pgr{n}", url=server.new_schema()) as pg_store:
                pg_load, pg_query = recall_times(pg_store, n, embedder)
            row(f"recall top 5 at {n:,}: first index load", sq_load, pg_load, "ms")
            row(f"recall top 5 at {n:,}: search (vector given)", sq_query, pg_query, "ms")
        local = f"{tmp}/cli"
        url = server.new_schema()
        for home, target in ((local, None), (f"{tmp}/pgcli", url)):
            with open_store(home, create=True, url=target) as s:
                s.create_session(ai_id="cli", profile="balanced")
        row("noetic sessions list --json (cold process)", cli_time(local), cli_time(url), "ms")


if __name__ == "__main__":
    main()
