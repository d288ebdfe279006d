"""What bench/floor.py and bench/session_growth.py share: a command timed as a new process
(its wall and CPU time), the variant's environment without what would change what it measures,
the interpreter a console script runs on, and the scores the workflow commands are given. Not a
benchmark itself: `make bench` leaves `_`-prefixed files out."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

VECTORS = json.dumps(
    {"know": 0.7, "do": 0.7, "context": 0.7, "clarity": 0.7, "coherence": 0.7, "signal": 0.7,
     "density": 0.3, "state": 0.7, "change": 0.6, "completion": 0.5, "impact": 0.6,
     "engagement": 0.8, "uncertainty": 0.3}
)  # fmt: skip


def environment(**given: str) -> dict[str, str]:
    """This process's environment with ``given``, without the variables that would point a
    variant at another session, agent or cache, or keep it from keeping its compiled bytecode."""
    env = {**os.environ, **given}
    for name in ("NOETIC_SESSION", "NOETIC_AI_ID", "NOETIC_CACHE_DIR", "XDG_CACHE_HOME",
                 "PYTHONDONTWRITEBYTECODE"):  # fmt: skip
        env.pop(name, None)
    return env


def timed(
    label: str, argv: list[str], *, env: dict[str, str], cwd: Path, stdin: str | None = None
) -> tuple[float, float]:
    """The wall time and the CPU time (user + system) of one run of ``argv``, in ms; a run that
    fails or prints a traceback ends the benchmark, saying which and what it printed."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, cwd=cwd)
    elapsed = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - used.ru_utime + after.ru_stime - used.ru_stime) * 1000
    if done.returncode != 0 or "Traceback" in done.stderr:
        raise SystemExit(
            f"{label}: {' '.join(argv[1:])} failed ({done.returncode}): "
            f"{done.stderr[-600:]}{done.stdout[-600:]}"
        )
    return elapsed, cpu


def interpreter_of(noetic: str) -> str:
    """The Python a console script runs on (its ``#!`` line)."""
    first = Path(noetic).read_text(encoding="utf-8").splitlines()[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable
