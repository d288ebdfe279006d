"""What bench/hooks.py and bench/http_hooks.py share: a temporary git project and store with a
Claude Code session and an open task, as an agent mid-work has, the hook JSON Claude Code sends,
and the wall time of a command run the way Claude Code runs a hook (a new process, the JSON on
stdin). Not a benchmark itself: `make bench` leaves `_`-prefixed files out."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

BIN = Path(sys.executable).parent
NOETIC = str(BIN / "noetic")
CLAUDE_SESSION = "0b7a2f4e-0000-4000-8000-00000000b3c4"


def payload(event: str, project: Path, **extra: object) -> str:
    """The JSON Claude Code sends a hook for ``event`` in ``project``."""
    return json.dumps(
        {"session_id": CLAUDE_SESSION, "cwd": str(project), "hook_event_name": event, **extra}
    )


def wall_times(
    args: list[str], stdin: str, env: dict, cwd: Path, runs: int, *, check: bool = False
) -> list[float]:
    """The wall time (ms) of each of ``runs`` runs of ``args``, each a new process."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(args, input=stdin, capture_output=True, text=True, env=env, cwd=cwd,
                       check=check)  # fmt: skip
        times.append((time.perf_counter() - start) * 1000)
    return times


@contextmanager
def hook_project() -> Iterator[tuple[Path, Path, dict]]:
    """A git project and a store (outcomes from ``pytest``) in a temporary directory, with the
    session the SessionStart hook opens and a task open in it; yields (project, store
    directory, the environment the hooks run in). Everything goes when the block ends."""
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
        subprocess.run([*git, "init", "-q"], cwd=project, check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=project, check=True)
        home = Path(tmp) / "store"
        home.mkdir()
        (home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
        env = {**os.environ, "NOETIC_HOME": str(home), "HOME": tmp}
        env.pop("NOETIC_SESSION", None)
        subprocess.run([NOETIC, "hook", "session-start"], env=env, cwd=project, check=True,
                       input=payload("SessionStart", project, source="startup"),
                       capture_output=True, text=True)  # fmt: skip
        from noetic.store.current import read_current_session
        from noetic.vectors import VECTOR_NAMES

        sid = read_current_session(home, f"claude-code:{CLAUDE_SESSION}")
        vectors = json.dumps({v: 0.7 for v in VECTOR_NAMES})
        subprocess.run([NOETIC, "preflight", "the benchmark task", "--session", str(sid),
                        "--vectors", vectors], env=env, cwd=project, capture_output=True,
                       check=True)  # fmt: skip
        yield project, home, env
