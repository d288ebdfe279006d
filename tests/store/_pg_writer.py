"""A writer process for the PostgreSQL store's concurrency tests.

Usage: python _pg_writer.py URL SESSION_ID COUNT WRITER

Each round writes one assessment, one event and (every fourth round) one outcome, each its own
logical write, into the shared session; prints one JSON line with what it wrote.
"""

import json
import sys

from noetic.assessment import Assessment, Thresholds, decide
from noetic.calibration.outcomes import add_outcome
from noetic.events import Event, EventKind
from noetic.store.postgres import PostgresStore


def main() -> None:
    url, session_id, count, writer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    thresholds = Thresholds(confidence_threshold=0.7)
    wrote = {"assessments": 0, "events": 0, "outcomes": 0}
    with PostgresStore(url, pool_size=2) as store:
        cascade = store.open_cascade(session_id, f"writer {writer}", profile="balanced")
        for i in range(count):
            value = (i % 100) / 100
            assessment = Assessment.from_input("check", {"know": value, "do": 1 - value})
            store.add_assessment(
                session_id, assessment, decide(assessment, thresholds), cascade_id=cascade.id
            )
            wrote["assessments"] += 1
            store.append_event(
                Event(kind=EventKind.DECISION, session_id=session_id, data={"w": writer, "i": i})
            )
            wrote["events"] += 1
            if i % 4 == 0:
                add_outcome(
                    store,
                    session_id=session_id,
                    cascade_id=cascade.id,
                    ai_id="team",
                    profile="balanced",
                    domain=None,
                    source="test",
                    score=value,
                    evidence=f"writer {writer}",
                    predicted_preflight=None,
                    predicted_check=value,
                    predicted_vectors={},
                )
                wrote["outcomes"] += 1
    print(json.dumps(wrote))


if __name__ == "__main__":
    main()
