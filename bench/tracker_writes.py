"""CHECKs per second through the tracker on a SQLite store: each CHECK's rows (the assessment,
its checkpoint, two events, the session's file backlog) in one transaction (now: the tracker
writes in ``Store.unit``) beside one transaction per row (before: ``unit`` emulated as doing
nothing), same run, interleaved, median of REPEATS. The session files are off (the floor is
the database).

    python bench/tracker_writes.py
"""

import statistics
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from noetic.assessment import Assessment
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.vectors import VECTOR_NAMES

COUNT = 100
REPEATS = 5


def run(joined: bool) -> float:
    with tempfile.TemporaryDirectory() as tmp, Store(Path(tmp) / "s", write_files=False) as s:
        if not joined:
            s.unit = nullcontext  # type: ignore[method-assign]
        tracker = Tracker(s, ProfileRegistry(), checkpoints=True)
        session, _ = tracker.bootstrap(ai_id="bench")
        pre = Assessment.from_input("preflight", dict.fromkeys(VECTOR_NAMES, 0.6))
        tracker.preflight(session.id, "a task", pre)
        check = Assessment.from_input("check", {"know": 0.7})
        start = time.perf_counter()
        for _ in range(COUNT):
            tracker.check(session.id, check)
        return COUNT / (time.perf_counter() - start)


def main() -> None:
    now, before = [], []
    for _ in range(REPEATS):
        now.append(run(True))
        before.append(run(False))
    print(f"CHECKs/s through the tracker, SQLite, {COUNT} per run, median of {REPEATS}")
    print(f"  one transaction per CHECK (now):    {statistics.median(now):8.0f}")
    print(f"  one transaction per row (before):   {statistics.median(before):8.0f}")


if __name__ == "__main__":
    main()
