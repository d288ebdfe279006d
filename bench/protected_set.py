"""The protected set's cost: what Claude Code's PreToolUse hook and the sandbox now do per call,
beside what they already did, all measured in this run on one real workspace (by default this
repository, its virtual environment included).

Per PreToolUse call the hook builds the set (the repository's control files: two git
processes, then the hooks' scripts) and judges the command with one more policy rule and one
more pass (:func:`planted`); per sandboxed command the sandbox finds the set's existing files
(one walk of the workspace). Baselines: ``control_files`` (what the sandbox ran per command
before) and ``check_command`` with the built-in policy (the gate's own cost). Then the whole hook
as Claude Code runs it (a new process, the JSON on stdin) beside ``noetic --version``.

    .venv/bin/python bench/protected_set.py [--workspace DIR] [--runs 20]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from _hook_runs import NOETIC, wall_times

COMMANDS = ("ls -la src", "echo x > README.md", "ln -sf ../../payload .git/hooks/pre-commit")


def median_ms(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workspace", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    from noetic.tools.repository import control_files
    from noetic.tools.shellgate import check_command, load_policy
    from noetic.tools.shellgate.protected import planted, protected_set, with_rule

    ws = os.path.realpath(args.workspace)
    home = os.path.realpath(os.path.expanduser("~"))
    files = sum(len(f) for _, _, f in os.walk(ws))
    print(f"workspace {ws}: {files} files; median of {args.runs} runs each")
    policy = load_policy()
    protected = protected_set(ws, home=home)
    guarded = with_rule(policy, protected)
    rows = [
        ("control_files (baseline: the sandbox's work per command before)",
         lambda: control_files(ws)),
        ("protected_set (the hook, per call)", lambda: protected_set(ws, home=home)),
        ("protected_set + existing() (the sandbox, per command)",
         lambda: protected_set(ws, home=home).existing()),
    ]  # fmt: skip
    for command in COMMANDS:
        rows += [
            (f"check_command {command!r}, built-in policy (baseline)",
             lambda c=command: check_command(c, ws, policy, home=home)),
            (f"check_command {command!r}, with the protected rule",
             lambda c=command: check_command(c, ws, guarded, home=home)),
            (f"planted {command!r}", lambda c=command: planted(c, protected, guarded, cwd=ws)),
        ]  # fmt: skip
    for label, fn in rows:
        print(f"{median_ms(fn, args.runs):9.2f} ms  {label}")
    print(f"existing(): {len(protected.existing())} paths mounted read-only")
    env = {**os.environ, "CLAUDE_PROJECT_DIR": ws}
    env.pop("NOETIC_HOME", None)
    body = json.dumps({"session_id": "b", "cwd": ws, "hook_event_name": "PreToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "ls -la src"}})  # fmt: skip
    version = statistics.median(wall_times([NOETIC, "--version"], "", env, Path(ws), args.runs))
    hook = statistics.median(
        wall_times([NOETIC, "hook", "pre-tool-use"], body, env, Path(ws), args.runs)
    )
    print(f"{version:9.1f} ms  noetic --version (baseline: a process that does nothing)")
    print(f"{hook:9.1f} ms  noetic hook pre-tool-use, Bash `ls -la src`")


if __name__ == "__main__":
    sys.exit(main())
