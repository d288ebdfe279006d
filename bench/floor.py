"""Every command hook and workflow command beside the interpreter's floor, `python -c pass`.

Claude Code runs each hook as a new process, on every tool call for PreToolUse and PostToolUse,
so what a hook costs is mostly what it costs to start. This runs each hook and each workflow
command, a new process each time as a host or an agent runs it, beside `python -c pass` of the
same interpreter, interleaved (every round runs each variant once per command, in a rotating
order, so a busy machine slows them alike), and prints each one's median wall time and CPU time
(user + system: the steadier figure when the machine is shared) and its ratio to the floor, the
median of every `python -c pass` of the run. The target is at most 5× for the hooks and
commands and 3× for `--help`.

    python bench/floor.py                                    # this checkout's noetic
    python bench/floor.py --before ../main/.venv/bin/noetic --runs 9

`--before` adds a second `noetic` (another checkout's) as a column measured in the same run,
against its own interpreter's floor. Empirica's same command is a column when `empirica` is on
PATH (only `--help`, its one command whose meaning is the same); otherwise a note says so.
Each variant gets its own temporary project, store and home folder (caches included), and
keeps Python's compiled bytecode in a folder of its own (``PYTHONPYCACHEPREFIX``: an installed
package has it; a checkout run with ``PYTHONDONTWRITEBYTECODE`` would compile every module on
every run); one warm-up round runs first and is not counted. What a command leaves running
after it answers (the recall indexer a POSTFLIGHT starts, detached) is waited for, untimed,
before the next command, as an agent's next command comes seconds later: the command that
starts it is timed until it exits, the next one is not timed sharing the CPU with it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _processes import VECTORS, environment, interpreter_of, timed

CLAUDE_SESSION = "0b7a2f4e-0000-4000-8000-00000000f100"
# Empirica's commands whose meaning is the same as Noetic's
EMPIRICA = {"--help": ["--help"]}


def hook(event: str, project: Path, **extra: object) -> tuple[list[str], str]:
    name = {"session-start": "SessionStart", "user-prompt-submit": "UserPromptSubmit",
            "pre-tool-use": "PreToolUse", "post-tool-use": "PostToolUse",
            "pre-compact": "PreCompact", "stop": "Stop", "session-end": "SessionEnd",
            "subagent-start": "SubagentStart", "subagent-stop": "SubagentStop",
            "task-completed": "TaskCompleted", "permission-denied": "PermissionDenied",
            "stop-failure": "StopFailure"}[event]  # fmt: skip
    body = {"session_id": CLAUDE_SESSION, "cwd": str(project), "hook_event_name": name, **extra}
    return ["hook", event], json.dumps(body)


def commands(project: Path) -> list[tuple[str, list[str], str]]:
    """(label, arguments, stdin) in the order a round runs them: each one leaves the store as
    the next expects (a session, an open task, a CHECK, a closed task)."""
    bash = {"tool_name": "Bash"}
    rows = [
        ("--help", ["--help"], ""),
        ("hook session-start", *hook("session-start", project, source="startup")),
        ("hook session-start (resume)", *hook("session-start", project, source="resume")),
        ("hook pre-tool-use (ls -la)",
         *hook("pre-tool-use", project, **bash, tool_input={"command": "ls -la"})),
        ("hook pre-tool-use (Write)",
         *hook("pre-tool-use", project, tool_name="Write",
               tool_input={"file_path": str(project / "notes.md"), "content": "x"})),
        ("hook post-tool-use (ls -la)",
         *hook("post-tool-use", project, **bash, tool_input={"command": "ls -la"},
               tool_response={"stdout": "", "stderr": "", "interrupted": False})),
        ("hook post-tool-use (pytest)",
         *hook("post-tool-use", project, **bash, tool_input={"command": "pytest -q"},
               tool_response={"stdout": "1 passed", "stderr": "", "interrupted": False})),
        ("hook user-prompt-submit", *hook("user-prompt-submit", project, prompt="go on")),
        ("hook subagent-start",
         *hook("subagent-start", project, agent_id="a-1", agent_type="reviewer")),
        ("hook subagent-stop",
         *hook("subagent-stop", project, agent_id="a-1", agent_type="reviewer",
               stop_hook_active=False, last_assistant_message="done")),
        ("hook permission-denied",
         *hook("permission-denied", project, tool_name="Bash", reason="denied by the user")),
        ("hook stop-failure", *hook("stop-failure", project, error="overloaded_error")),
        ("hook pre-compact", *hook("pre-compact", project, trigger="auto")),
        ("hook task-completed",
         *hook("task-completed", project, task_id="1", task_subject="x")),
        ("hook stop", *hook("stop", project, stop_hook_active=False)),
        ("hook session-end", *hook("session-end", project, reason="exit")),
        ("bootstrap", ["bootstrap", "--json"], ""),
        ("preflight", ["preflight", "a task", "--vectors", VECTORS, "--abandon-open", "--json"],
         ""),
        ("investigate", ["investigate", "--note", "read the code", "--json"], ""),
        ("check", ["check", "--vectors", VECTORS, "--json"], ""),
        ("check (text)", ["check", "--vectors", VECTORS], ""),  # as an agent's shell reads it
        ("postflight", ["postflight", "--vectors", VECTORS, "--json"], ""),
        ("outcome", ["outcome", "--success", "--json"], ""),
        ("state", ["state", "--json"], ""),
    ]  # fmt: skip
    return rows


class Variant:
    """One `noetic` (or Empirica, or the floor) with its own project, store and home."""

    def __init__(self, label: str, program: list[str], root: Path) -> None:
        self.label = label
        self.program = program
        self.project = root / label / "project"
        self.project.mkdir(parents=True)
        git = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]
        subprocess.run([*git, "init", "-q"], cwd=self.project, check=True)
        subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "x"], cwd=self.project,
                       check=True)  # fmt: skip
        # a user's repository has an identity, so a checkpoint's note is written to git (without
        # one git refuses it and the checkpoint goes to SQLite: not the path users run)
        for key, value in (("user.name", "b"), ("user.email", "b@b")):
            subprocess.run(["git", "config", key, value], cwd=self.project, check=True)
        store = self.project / ".noetic"
        store.mkdir()
        (store / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
        # compiled bytecode is kept (as an installed package has it), under the variant's own
        # folder so no checkout is written to
        self.env = environment(HOME=str(root / label), NOETIC_HOME=str(store),
                               PYTHONPYCACHEPREFIX=str(root / label / "pycache"))  # fmt: skip

    def run(self, args: list[str], stdin: str) -> tuple[float, float]:
        """The wall time and the CPU time (user + system) of one run, in ms."""
        times = timed(self.label, [*self.program, *args], env=self.env, cwd=self.project,
                      stdin=stdin)  # fmt: skip
        self.settle()
        return times

    def settle(self) -> None:
        """Wait (untimed) for what a command left running after it answered: the recall
        indexer a finished task starts, detached, in its own session (``noetic.recall.background``
        with this variant's store), so the next command is not measured sharing the CPU with it.
        An agent runs its next command seconds later, when the indexer is long done."""
        store = os.path.realpath(self.project / ".noetic").encode()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            running = False
            for pid in os.listdir("/proc") if os.path.isdir("/proc") else ():
                if not pid.isdigit():
                    continue
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as f:
                        argv = f.read().split(b"\0")
                except OSError:
                    continue
                if b"noetic.recall.background" in argv and any(store in a for a in argv):
                    running = True
                    break
            if not running:
                return
            time.sleep(0.01)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--noetic", default=str(Path(sys.executable).with_name("noetic")))
    parser.add_argument("--before", help="another noetic to measure in the same run")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if args.runs < 7:
        parser.error("--runs is at least 7 (the medians need them)")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        pythons = {"after": interpreter_of(args.noetic)}
        variants = {"after": Variant("after", [args.noetic], root)}
        if args.before:
            pythons["before"] = interpreter_of(args.before)
            variants["before"] = Variant("before", [args.before], root)
        floors = {f"floor-{k}": Variant(f"floor-{k}", [p, "-c", "pass"], root)
                  for k, p in pythons.items()}  # fmt: skip
        empirica = shutil.which("empirica")
        if empirica:
            variants["empirica"] = Variant("empirica", [empirica], root)
        rows = {label: commands(v.project) for label, v in variants.items()}
        names = [label for label, _, _ in rows["after"]]
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(args.runs + 1):  # round 0 warms the caches and the disk
            for i, name in enumerate(names):
                order = [*floors.items(), *variants.items()]
                shift = (round_ + i) % len(order)
                for key, variant in order[shift:] + order[:shift]:
                    if key.startswith("floor-"):
                        elapsed = variant.run([], "")
                    elif key == "empirica":
                        if name not in EMPIRICA:
                            continue
                        elapsed = variant.run(EMPIRICA[name], "")
                    else:
                        _, argv, stdin = rows[key][i]
                        elapsed = variant.run(argv, stdin)
                    if round_:
                        times.setdefault((name, key), []).append(elapsed)
        report(names, times, floors, variants, args, empirica)


def report(
    names: list[str],
    times: dict[tuple[str, str], list[tuple[float, float]]],
    floors: dict[str, Variant],
    variants: dict[str, Variant],
    args: argparse.Namespace,
    empirica: str | None,
) -> None:
    """Two tables, wall time then CPU time: each command's median beside the floor, which is
    the median of every `python -c pass` of that interpreter in the run (one per command and
    round, interleaved with them). CPU time is the steadier figure on a busy machine."""
    keys = [k for k in variants if k != "empirica"]
    print(f"noetic: {args.noetic}" + (f"; before: {args.before}" if args.before else "")
          + f"; medians of {args.runs} interleaved runs, ms")  # fmt: skip
    for which, title in ((0, "wall time"), (1, "CPU time (user + system)")):

        def median(name: str, key: str, which: int = which) -> float:
            return statistics.median(t[which] for t in times[(name, key)])

        floor = {
            key: statistics.median(
                t[which] for name in names for t in times[(name, f"floor-{key}")]
            )
            for key in keys
        }
        head = ["command"] + [f"{key}: ms, × floor" for key in keys]
        if empirica:
            head.append("empirica: ms, × floor")
        print(f"\n{title}; `python -c pass`: "
              + ", ".join(f"{floor[k]:.0f} ms ({k})" for k in keys))  # fmt: skip
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        worst = {key: (0.0, "") for key in keys}
        for name in names:
            cells = [f"`{name}`"]
            for key in keys:
                ms = median(name, key)
                ratio = ms / floor[key]
                if ratio > worst[key][0]:
                    worst[key] = (ratio, name)
                cells.append(f"{ms:.0f} ({ratio:.1f}×)")
            if empirica:
                found = (name, "empirica") in times
                ms = median(name, "empirica") if found else 0.0
                cells.append(f"{ms:.0f} ({ms / floor['after']:.1f}×)" if found else "—")
            print("| " + " | ".join(cells) + " |")
        for key in keys:
            print(f"{key}: the slowest is `{worst[key][1]}` at {worst[key][0]:.1f}× the floor")
    if not empirica:
        print("\nempirica is not on PATH: its column is left out (it is not installed here)")


if __name__ == "__main__":
    main()
