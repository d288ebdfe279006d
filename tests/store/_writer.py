"""A separate process that writes assessments into a store (used by the concurrency tests).

Usage: python _writer.py HOME SESSION_ID COUNT [--forever] [--background] [--flush]

``--flush`` writes the files after every assessment, so a kill often lands mid-write of them.
"""

import sys

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store


def main() -> None:
    home, session_id, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
    forever = "--forever" in sys.argv
    thresholds = Thresholds(confidence_threshold=0.7)
    with Store(home, background="--background" in sys.argv) as store:
        i = 0
        while forever or i < count:
            value = (i % 100) / 100
            assessment = Assessment.from_input("check", {"know": value, "do": 1 - value})
            store.add_assessment(session_id, assessment, decide(assessment, thresholds))
            if "--flush" in sys.argv:
                store.flush_files()
            i += 1


if __name__ == "__main__":
    main()
