"""Store write throughput through the Python API, the files on disk by the time it is closed.

Three ways of keeping the derived files, same data, same run, interleaved (median of REPEATS):
- now: SQLite writes queue the session's files in ``file_backlog``; when the store closes, each
  session's JSON document is written once and each reflex log gets its new lines appended;
- the previous design (one file per reflex log): the same, except every assessment's reflex log
  is its own file, created by temporary file and rename as before (emulated by swapping the
  append for that);
- SQLite only (files off): the floor.

Then what a long-lived process (the MCP server) pays about once a second: writing a session's
files after one more assessment, in a session already holding N, beside the design before this
one, which read and encoded the whole session again every time (emulated by forgetting what the
store had encoded).
"""

import os
import statistics
import tempfile
import time
from pathlib import Path

from noetic.assessment import Assessment, Thresholds, decide
from noetic.store import Store, files
from noetic.vectors import VECTOR_NAMES

COUNT = 1000
REPEATS = 5
MODES = ("now", "file per reflex log", "sqlite")


def one_file_each(path: Path, lines: list[tuple[int, bytes]]) -> int:
    """The previous design's reflex logs: one file per assessment, written by rename."""
    for seq, line in lines:
        files.atomic_write_bytes(path.with_name(f"{path.stem}-{seq:04d}.json"), line, sync=False)
    return len(lines)


def run(mode: str, count: int, per_session: int) -> float:
    thresholds = Thresholds(confidence_threshold=0.7)
    assessments = [
        Assessment.from_input("check", {v: (i % 97) / 97 for v in VECTOR_NAMES})
        for i in range(count)
    ]
    decisions = [decide(a, thresholds) for a in assessments]
    append = files.extend_lines
    if mode == "file per reflex log":
        files.extend_lines = one_file_each
    try:
        with tempfile.TemporaryDirectory() as tmp:
            store = Store(tmp, write_files=mode != "sqlite")
            start = time.perf_counter()
            session = ""
            for i, (a, d) in enumerate(zip(assessments, decisions, strict=True)):
                if i % per_session == 0:
                    session = store.create_session(ai_id="bench", profile="balanced").id
                store.add_assessment(session, a, d)
            store.close()  # the files are on disk (rename, append) when this returns
            return count / (time.perf_counter() - start)
    finally:
        files.extend_lines = append


def drain_ms(held: int, incremental: bool, repeats: int = 7) -> float:
    """Median milliseconds to write the files after one write, in a session holding ``held``."""
    thresholds = Thresholds(confidence_threshold=0.7)
    one = Assessment.from_input("check", {v: 0.5 for v in VECTOR_NAMES})
    with tempfile.TemporaryDirectory() as tmp:
        with Store(tmp, write_files=False) as filling:
            session = filling.create_session(ai_id="bench", profile="balanced").id
            for _ in range(held):
                filling.add_assessment(session, one, decide(one, thresholds))
        with Store(tmp) as store:
            store.flush_files()
            times = []
            for _ in range(repeats):
                store.add_assessment(session, one, decide(one, thresholds))
                if not incremental:
                    store._grown.clear()
                start = time.perf_counter()
                store.flush_files()
                times.append((time.perf_counter() - start) * 1000)
            return statistics.median(times)


def main() -> None:
    print(
        f"assessments/s, {COUNT} assessments, files on disk by the time the store is closed; "
        f"median of {REPEATS} interleaved runs; load average {os.getloadavg()[0]:.2f}"
    )
    for per_session in (10, 100, 1000):
        rates: dict[str, list[float]] = {m: [] for m in MODES}
        for _ in range(REPEATS):
            for mode in MODES:
                rates[mode].append(run(mode, COUNT, per_session))
        now, previous, floor = (statistics.median(rates[m]) for m in MODES)
        print(
            f"{per_session:>4} per session: {now:6.0f}/s now · {previous:6.0f}/s previous design, "
            f"a file per reflex log ({now / previous:.1f}×) · {floor:6.0f}/s SQLite only "
            f"(now at {now / floor:.0%} of it)"
        )
    print("writing a session's files after one more assessment (a drain), median ms")
    for held in (100, 1000, 10_000):
        now, whole = drain_ms(held, True), drain_ms(held, False)
        print(
            f"{held:>6} held: {now:6.1f} ms now · {whole:6.1f} ms reading the whole session "
            f"again ({whole / now:.0f}×)"
        )


if __name__ == "__main__":
    main()
