"""`noetic --help` cold start: median of 10 runs (target < 150 ms)."""

import statistics
import subprocess
import sys
import time
from pathlib import Path

NOETIC = str(Path(sys.executable).with_name("noetic"))


def main(runs: int = 10) -> None:
    subprocess.run([NOETIC, "--help"], capture_output=True, check=True)  # warm the disk cache
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([NOETIC, "--help"], capture_output=True, check=True)
        times.append((time.perf_counter() - start) * 1000)
    print(
        f"noetic --help: median {statistics.median(times):.0f} ms "
        f"(min {min(times):.0f}, max {max(times):.0f}, n={runs})"
    )


if __name__ == "__main__":
    main()
