"""Store write throughput through the Python API.

Three ways of keeping the derived files, same data, same run:
- now: SQLite writes queue the session files; they are written once, when the store closes;
- the previous design: every write rewrites the session's JSON at once (emulated here with a
  flush after each write, without the previous fsyncs, so it is if anything flattered);
- SQLite only (files off): the floor.
"""

import tempfile
import time

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store
from noetic.vectors import VECTOR_NAMES


def run(mode: str, count: int, per_session: int) -> float:
    thresholds = Thresholds(confidence_threshold=0.7)
    assessments = [
        Assessment.from_input("check", {v: (i % 97) / 97 for v in VECTOR_NAMES})
        for i in range(count)
    ]
    decisions = [decide(a, thresholds) for a in assessments]
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp, write_files=mode != "sqlite")
        start = time.perf_counter()
        session = ""
        for i, (a, d) in enumerate(zip(assessments, decisions, strict=True)):
            if i % per_session == 0:
                session = store.create_session(ai_id="bench", profile="balanced").id
            store.add_assessment(session, a, d)
            if mode == "previous":
                store.flush_files()
        store.close()  # the files are on disk (rename) when this returns
        return count / (time.perf_counter() - start)


def main() -> None:
    print("assessments/s, 1000 assessments, files written by the time the store is closed")
    for per_session in (10, 100, 1000):
        now = run("now", 1000, per_session)
        previous = run("previous", 1000, per_session)
        floor = run("sqlite", 1000, per_session)
        print(
            f"{per_session:>4} per session: {now:7.0f}/s now · {previous:7.0f}/s previous design "
            f"({now / previous:.1f}×) · {floor:7.0f}/s SQLite only"
        )


if __name__ == "__main__":
    main()
