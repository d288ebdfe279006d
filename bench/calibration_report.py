"""Calibration report time at 100k outcomes, and how many outcomes the beliefs need to detect
a 10-point and a 20-point overconfidence with 95% credibility (simulation)."""

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.calibration import Filters, calibration_report, detect_drift, update_belief
from noetic.store import Store
from noetic.store.sqlite import now

N = 100_000


def report_time() -> None:
    rng = random.Random(0)
    with tempfile.TemporaryDirectory() as tmp, Store(tmp, write_files=False) as store:
        stamp = now()
        with store.transaction() as c:
            c.execute(
                "INSERT INTO sessions (id, ai_id, profile, created_at) VALUES "
                "('s_bench', 'bench', 'balanced', ?)",
                (stamp,),
            )
            c.executemany(
                "INSERT INTO cascades (id, session_id, task, status, profile, created_at) "
                "VALUES (?, 's_bench', 't', 'completed', 'balanced', ?)",
                [(f"c_{i}", stamp) for i in range(N)],
            )
            rows = []
            for i in range(N):
                p = rng.uniform(0.2, 0.95)
                y = 1.0 if rng.random() < p - 0.1 else 0.0
                rows.append((stamp, f"c_{i}", p, y, json.dumps({"know": p})))
            c.executemany(
                "INSERT INTO outcomes (at, session_id, cascade_id, ai_id, profile, source, score, "
                "predicted_preflight, predicted_vectors) "
                "VALUES (?, 's_bench', ?, 'bench', 'balanced', 'test', ?, ?, ?)",
                [(a, cid, y, p, v) for a, cid, p, y, v in rows],
            )
        start = time.perf_counter()
        report = calibration_report(store, Filters(ai_id="bench"))
        elapsed = time.perf_counter() - start
    m = report.metrics
    print(
        f"report over {report.tasks:,} outcomes: {elapsed:.2f} s "
        f"(Brier {m.brier.value:.3f}, ECE {m.ece.value:.3f}, bias {m.signed_bias.value:+.3f}, "
        f"200 bootstrap resamples per metric at this size)"
    )


def outcomes_to_detect(bias: float, runs: int = 300, cap: int = 2000) -> list[int]:
    needed = []
    for run in range(runs):
        rng = random.Random(run)
        biases: list[float] = []
        for n in range(1, cap + 1):
            p = rng.uniform(0.3, 0.95)
            y = 1.0 if rng.random() < max(0.0, p - bias) else 0.0
            biases.append(p - y)
            if n % 5 == 0 and update_belief("overall", biases).direction == "overconfident":
                needed.append(n)
                break
        else:
            needed.append(cap)
    return sorted(needed)


def drift_detection(bias: float, window: int, runs: int = 300, history: int = 100) -> float:
    """Share of simulated agents whose drift is flagged after ``window`` biased outcomes that
    follow ``history`` calibrated ones."""
    flagged = 0
    for run in range(runs):
        rng = random.Random(run)
        p = [rng.uniform(0.3, 0.95) for _ in range(history + window)]
        y = [1.0 if rng.random() < (c if i < history else max(0.0, c - bias)) else 0.0
             for i, c in enumerate(p)]  # fmt: skip
        flagged += detect_drift(p, y, window=window).calibration_drift
    return flagged / runs


def main() -> None:
    for window in (20, 40, 60, 100):
        print(
            f"drift monitor, 20-point shift after 100 calibrated outcomes: flagged in "
            f"{100 * drift_detection(0.2, window):.0f}% of runs with window {window}; "
            f"false alarms without a shift {100 * drift_detection(0.0, window):.0f}%"
        )
    report_time()
    for bias in (0.10, 0.20):
        needed = outcomes_to_detect(bias)
        p95 = needed[int(0.95 * len(needed)) - 1]
        print(
            f"{bias * 100:.0f}-point overconfidence credible (95% interval excludes 0) after "
            f"median {statistics.median(needed):.0f} outcomes, 95th percentile {p95} "
            f"({len(needed)} simulated agents)"
        )


if __name__ == "__main__":
    main()
