"""Claude Code hooks: wall time of each `noetic hook EVENT` command beside `noetic --version`
and beside the same command through typer (`NOETIC_CLI_FAST=0`, the design before the CLI's fast
path), the heavy modules each one imports, and the SessionStart context's size with 0, 5 and 50
earlier tasks in the project.

Every figure is measured in this run: the median of 20 runs of each command, as Claude Code
runs it (a new process, the event's JSON on stdin), in a temporary git project and store.

    .venv/bin/python bench/hooks.py [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from _hook_runs import NOETIC, hook_project, payload, wall_times

HEAVY = ("numpy", "rich", "mcp", "tokenizers", "httpx", "anthropic", "openai", "wordllama")
PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: sys.stderr.write('HEAVY=' + ','.join(m for m in {heavy!r} "
    "if m in sys.modules) + '\\n'))\n"
    "sys.argv = ['noetic', *{args!r}]\n"
    "from noetic.cli import main\n"
    "main()\n"
)


def timed(args: list[str], stdin: str, env: dict, cwd: Path, runs: int) -> float:
    return statistics.median(wall_times(args, stdin, env, cwd, runs))


def heavy_modules(args: list[str], stdin: str, env: dict, cwd: Path) -> str:
    code = PROBE.format(heavy=HEAVY, args=args)
    done = subprocess.run(
        [sys.executable, "-c", code], input=stdin, capture_output=True, text=True, env=env, cwd=cwd
    )
    line = next((x for x in done.stderr.splitlines() if x.startswith("HEAVY=")), "HEAVY=?")
    return line.removeprefix("HEAVY=") or "none"


def add_tasks(home: Path, project: str, count: int) -> None:
    from noetic.assessment import Assessment
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker
    from noetic.store import Store
    from noetic.vectors import VECTOR_NAMES

    with Store(home) as store:
        tracker = Tracker(store, ProfileRegistry(home / "profiles"), checkpoints=False)
        session, _ = tracker.bootstrap(ai_id="claude-code", project=project)
        for i in range(count):
            pre = {v: 0.6 for v in VECTOR_NAMES}
            post = {v: 0.8 for v in VECTOR_NAMES}
            tracker.preflight(
                session.id,
                f"task {i}: fix the parser's handling of nested quotes in module {i}",
                Assessment.from_input("preflight", pre),
            )
            tracker.postflight(
                session.id,
                Assessment.from_input(
                    "postflight",
                    {"vectors": post, "note": f"the quoting rules live in lexer {i}"},
                ),
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    from noetic.embeddings import count_tokens
    from noetic.hosts.hooks.answer import estimate_tokens

    with hook_project() as (project, home, env):
        cases = [
            ("noetic --version (baseline)", ["--version"], ""),
            ("hook session-start (resume)", ["hook", "session-start"],
             payload("SessionStart", project, source="resume")),
            ("hook pre-compact", ["hook", "pre-compact"],
             payload("PreCompact", project, trigger="auto")),
            ("hook stop", ["hook", "stop"], payload("Stop", project, stop_hook_active=False)),
            ("hook post-tool-use (pytest)", ["hook", "post-tool-use"],
             payload("PostToolUse", project, tool_name="Bash",
                     tool_input={"command": "pytest -q"},
                     tool_response={"stdout": "", "stderr": "", "interrupted": False})),
            ("hook post-tool-use (ls)", ["hook", "post-tool-use"],
             payload("PostToolUse", project, tool_name="Bash", tool_input={"command": "ls"},
                     tool_response={"stdout": "", "stderr": "", "interrupted": False})),
            ("hook pre-tool-use (git status)", ["hook", "pre-tool-use"],
             payload("PreToolUse", project, tool_name="Bash",
                     tool_input={"command": "git status"})),
            ("hook session-end", ["hook", "session-end"], payload("SessionEnd", project)),
        ]  # fmt: skip
        typer = {**env, "NOETIC_CLI_FAST": "0"}  # the previous design: every command via typer
        print(f"wall time, median of {runs} runs (ms): now, through typer; heavy modules imported")
        for name, args, stdin in cases:
            ms = timed([NOETIC, *args], stdin, env, project, runs)
            before = timed([NOETIC, *args], stdin, typer, project, runs)
            heavy = heavy_modules(args, stdin, env, project)
            print(f"  {name:<30} {ms:8.1f} {before:8.1f}   {heavy}")

        print("\nSessionStart context (budget 1500 estimated tokens)")
        print("  earlier tasks   context tokens (Llama-2)   estimate   tasks listed   hook ms")
        done = 0
        for count in (0, 5, 50):
            add_tasks(home, project.name, count - done)
            done = count
            fresh = payload("SessionStart", project, source="startup", session_id=f"bench-{count}")
            reply = subprocess.run(
                [NOETIC, "hook", "session-start"],
                input=fresh,
                env=env,
                cwd=project,
                capture_output=True,
                text=True,
                check=True,
            )
            text = json.loads(reply.stdout)["hookSpecificOutput"]["additionalContext"]
            ms = timed([NOETIC, "hook", "session-start"], fresh, env, project, 5)
            print(
                f"  {count:>13}   {count_tokens(text):>24}   {estimate_tokens(text):>8}   "
                f"{text.count(chr(10) + '- '):>12}   {ms:7.1f}"
            )


if __name__ == "__main__":
    main()
