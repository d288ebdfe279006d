"""Store write throughput through the Python API, with SQLite + JSON + reflex logs all on,
and with the files off (SQLite only) for comparison."""

import tempfile
import time

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store
from noetic.vectors import VECTOR_NAMES


def run(write_files: bool, count: int, per_session: int) -> float:
    thresholds = Thresholds(confidence_threshold=0.7)
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=write_files) as store:
        assessments = [
            Assessment.from_input("check", {v: (i % 97) / 97 for v in VECTOR_NAMES})
            for i in range(count)
        ]
        decisions = [decide(a, thresholds) for a in assessments]
        start = time.perf_counter()
        session = None
        for i, (a, d) in enumerate(zip(assessments, decisions, strict=True)):
            if i % per_session == 0:
                session = store.create_session(ai_id="bench", profile="balanced").id
            store.add_assessment(session, a, d)
        return count / (time.perf_counter() - start)


def main() -> None:
    for per_session in (10, 100):
        full = run(True, 1000, per_session)
        sqlite_only = run(False, 1000, per_session)
        print(
            f"{per_session:>3} assessments/session: {full:7.0f}/s with SQLite+JSON+reflex, "
            f"{sqlite_only:7.0f}/s SQLite only (1000 assessments)"
        )


if __name__ == "__main__":
    main()
