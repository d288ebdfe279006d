"""What the seed's session totals cost `noetic sessions list`: the totals of a page of 20
sessions (tasks, turns, average confidence, drift detected) beside the task counts alone, the
query the list ran before (the baseline), in one store, in the same run.

Usage: python bench/session_totals.py [SESSIONS] [TASKS_PER_SESSION]
"""

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.assessment import Assessment
from noetic.calibration import record_outcome
from noetic.operations.session_list import task_counts
from noetic.operations.session_totals import session_totals
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.vectors import VECTOR_NAMES


def vectors(level: float) -> dict[str, float]:
    v = dict.fromkeys(VECTOR_NAMES, level)
    v.update(engagement=0.9, coherence=0.9, density=1 - level, uncertainty=1 - level)
    return v


def timed(fn, repeat: int = 15) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 25
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        tracker = Tracker(store, ProfileRegistry())
        for s in range(sessions):
            session, _ = tracker.bootstrap(ai_id="bench", profile="balanced")
            bias = 0.0 if s < sessions // 2 else 0.45  # the second half drifts
            for _ in range(per):
                level = rng.uniform(0.3, 1.0)
                pre = tracker.preflight(
                    session.id, "t", Assessment.from_input("preflight", vectors(level))
                )
                tracker.postflight(session.id, Assessment.from_input("postflight", vectors(level)))
                ok = rng.random() < max(0.0, pre.decision.confidence - bias)
                record_outcome(store, pre.cascade.id, score=float(ok), source="test")
        page = [s.id for s in store.list_sessions(limit=20)]
        base = timed(lambda: task_counts(store, page))
        totals = timed(lambda: session_totals(store, page))
        drifted = sum(t.drift_detected for t in session_totals(store, page).values())
    tasks = sessions * per
    print(f"{sessions} sessions, {tasks} tasks with outcomes, one agent; a page of 20 sessions")
    print(f"  task counts alone (baseline, the list before): {base:8.2f} ms")
    print(f"  the seed's totals (with the drift monitor):     {totals:8.2f} ms")
    print(f"  sessions on the page with drift detected: {drifted} of {len(page)}")


if __name__ == "__main__":
    main()
