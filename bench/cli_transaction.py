"""One bootstrap → preflight → check → postflight through the CLI: median wall time per command
over several transactions (target: the whole transaction under 0.8 s)."""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOETIC = str(Path(sys.executable).with_name("noetic"))
VECTORS = {
    "engagement": 0.85,
    "know": 0.7,
    "do": 0.8,
    "context": 0.7,
    "clarity": 0.8,
    "coherence": 0.85,
    "signal": 0.7,
    "density": 0.3,
    "state": 0.7,
    "change": 0.75,
    "completion": 0.7,
    "impact": 0.7,
    "uncertainty": 0.3,
}


def main(transactions: int = 7) -> None:
    steps = {
        "bootstrap": ["bootstrap", "--ai-id", "bench"],
        "preflight": [
            "preflight",
            "bench task",
            "--ai-id",
            "bench",
            "--vectors",
            json.dumps(VECTORS),
        ],
        "check": ["check", "--ai-id", "bench", "--vectors", json.dumps({"know": 0.8})],
        "postflight": ["postflight", "--ai-id", "bench", "--vectors", json.dumps(VECTORS)],
    }
    times: dict[str, list[float]] = {name: [] for name in steps}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(transactions):
            for name, args in steps.items():
                start = time.perf_counter()
                subprocess.run(
                    [NOETIC, *args, "--store", tmp, "--json"], capture_output=True, check=True
                )
                times[name].append((time.perf_counter() - start) * 1000)
    total = 0.0
    for name, values in times.items():
        median = statistics.median(values)
        total += median
        print(f"{name:<11} median {median:6.0f} ms")
    print(f"{'transaction':<11} {total:6.0f} ms (sum of medians, n={transactions})")


if __name__ == "__main__":
    main()
