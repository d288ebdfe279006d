"""What a writing workflow command costs as its session grows, beside `python -c pass`.

Every workflow command and every hook that writes is a new process, and closing its store
brings the session's JSON document up to date (`noetic.store.mirror`). This runs two writing
commands, `investigate --note … --json` and `check --vectors … --json`, each a new process as an
agent runs it, in sessions holding about 0, 500 and 2,000 events (and a quarter as many
assessments: a session of Claude Code tool calls and CASCADE checks), beside `python -c pass` of
the same interpreter, interleaved (each round runs every variant once per command and size, in a
rotating order, so a busy machine slows them alike); it prints each one's median wall time and
CPU time (user + system) and its ratio to the floor (the median of every `python -c pass` of
that interpreter in the run), with the size of each session's document.

    python bench/session_growth.py
    python bench/session_growth.py --before ../main/.venv/bin/noetic --runs 9

`--before` adds another checkout's `noetic`, measured in the same run against its own
interpreter's floor. Each variant and size gets its own temporary store and home folder; the
sessions are grown by the variant's own code (its `Store`, in its own interpreter) before the
runs; each round starts a new task in each (untimed: `preflight --abandon-open`), so the
task's rounds never run out; one warm-up round runs first and is not counted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _processes import VECTORS, environment, interpreter_of, timed

SIZES = (0, 500, 2000)  # events in the session before the runs
# untimed, before each round's commands: a new task, so its rounds never run out
PREFLIGHT = ["preflight", "a task", "--vectors", VECTORS, "--abandon-open", "--json"]
COMMANDS = {
    "investigate": ["investigate", "--note", "read the code", "--json"],
    "check": ["check", "--vectors", VECTORS, "--json"],
}
# run by the variant's interpreter: the session's events (tool calls, as the PostToolUse hook
# records them) and assessments, written through that checkout's own store
GROW = """
import sys
from noetic.assessment import Assessment, Thresholds, decide
from noetic.events import Event, EventKind
from noetic.store import Store

home, events, assessments = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
vectors = dict.fromkeys(("know", "do", "context", "clarity", "coherence", "signal", "state",
                         "change", "completion", "impact", "engagement"), 0.7)
vectors.update(density=0.3, uncertainty=0.3)
with Store(home) as store:
    sid = store.conn.execute("SELECT id FROM sessions ORDER BY created_at DESC").fetchone()[0]
    cascade = store.open_cascade(sid, "earlier work", profile="balanced")
    for i in range(events):
        data = {"tool": "Bash", "command": f"pytest -q tests/test_{i}.py", "exit_code": i % 2,
                "duration_ms": 1200 + i}
        store.append_event(Event(kind=EventKind.TOOL_CALL, session_id=sid, data=data))
        if i % 4 == 3 and i // 4 < assessments:
            a = Assessment.from_input("check", {"vectors": vectors, "note": f"step {i}: " * 8})
            store.add_assessment(sid, a, decide(a, Thresholds(confidence_threshold=0.7)),
                                 cascade_id=cascade.id)
    store.finish_cascade(cascade.id, "completed", {})
print(sid)
"""


class Variant:
    """One program (a `noetic`, or the floor) with its own store and home."""

    def __init__(self, label: str, program: list[str], root: Path) -> None:
        self.label = label
        self.program = program
        self.home = root / label
        self.store = self.home / "store"
        self.store.mkdir(parents=True)
        cache = root / "pycache" / label.split("@")[0]
        self.env = environment(HOME=str(self.home), NOETIC_HOME=str(self.store),
                               NOETIC_INDEX="off", PYTHONPYCACHEPREFIX=str(cache))  # fmt: skip

    def run(self, args: list[str]) -> tuple[float, float]:
        """The wall time and the CPU time (user + system) of one run, in ms."""
        return timed(self.label, [*self.program, *args], env=self.env, cwd=self.home)

    def grow(self, python: str, events: int) -> int:
        """A session with ``events`` events and a quarter as many assessments, and an open
        task; the size of its document in bytes."""
        self.run(["bootstrap", "--json"])
        done = subprocess.run([python, "-c", GROW, str(self.store), str(events),
                               str(events // 4)], capture_output=True, text=True, env=self.env,
                              check=True)  # fmt: skip
        sid = done.stdout.strip()
        return (self.store / "sessions" / f"{sid}.json").stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--noetic", default=str(Path(sys.executable).with_name("noetic")))
    parser.add_argument("--before", help="another noetic to measure in the same run")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    if args.runs < 5:
        parser.error("--runs is at least 5 (the medians need them)")
    programs = {"after": args.noetic, **({"before": args.before} if args.before else {})}
    pythons = {key: interpreter_of(path) for key, path in programs.items()}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        floors = {key: Variant(f"floor-{key}", [p, "-c", "pass"], root)
                  for key, p in pythons.items()}  # fmt: skip
        variants: dict[tuple[str, int], Variant] = {}
        sizes: dict[tuple[str, int], int] = {}
        for key, path in programs.items():
            for events in SIZES:
                variants[(key, events)] = v = Variant(f"{key}@{events}", [path], root)
                sizes[(key, events)] = v.grow(pythons[key], events)
        times: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
        floor_times: dict[str, list[tuple[float, float]]] = {k: [] for k in floors}
        for round_ in range(args.runs + 1):  # round 0 warms the caches and the disk
            for variant in variants.values():
                variant.run(PREFLIGHT)
            for i, (command, cmd_args) in enumerate(COMMANDS.items()):
                for events in SIZES:
                    order: list[tuple[str, Variant]] = [
                        *((f"floor-{k}", f) for k, f in floors.items()),
                        *((k, variants[(k, events)]) for k in programs),
                    ]
                    shift = (round_ + i + events) % len(order)
                    for key, variant in order[shift:] + order[:shift]:
                        took = variant.run([] if key.startswith("floor-") else cmd_args)
                        if not round_:
                            continue
                        if key.startswith("floor-"):
                            floor_times[key[6:]].append(took)
                        else:
                            times.setdefault((key, command, events), []).append(took)
        report(programs, sizes, times, floor_times, args.runs)


def report(
    programs: dict[str, str],
    sizes: dict[tuple[str, int], int],
    times: dict[tuple[str, str, int], list[tuple[float, float]]],
    floor_times: dict[str, list[tuple[float, float]]],
    runs: int,
) -> None:
    print("; ".join(f"{key}: {path}" for key, path in programs.items())
          + f"; medians of {runs} interleaved runs, ms")  # fmt: skip
    print("session documents: " + ", ".join(
        f"{events} events {sizes[(key, events)] / 1000:.0f} KB ({key})"
        for events in SIZES for key in programs))  # fmt: skip
    for which, title in ((0, "wall time"), (1, "CPU time (user + system)")):
        floor = {k: statistics.median(t[which] for t in v) for k, v in floor_times.items()}
        print(f"\n{title}; `python -c pass`: "
              + ", ".join(f"{floor[k]:.0f} ms ({k})" for k in programs))  # fmt: skip
        head = ["command", "events"] + [f"{key}: ms, × floor" for key in programs]
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for command in COMMANDS:
            for events in SIZES:
                cells = [f"`{command}`", f"{events:,}"]
                for key in programs:
                    ms = statistics.median(t[which] for t in times[(key, command, events)])
                    cells.append(f"{ms:.0f} ({ms / floor[key]:.1f}×)")
                print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
