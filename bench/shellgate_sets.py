"""The shell gate on its red-team and benign sets, beside last round's gate, in the same run.

The sets are the test data in tests/tools/gate_sets/: red-team commands by class
(redteam.yaml), ordinary developer commands — the first round's list (benign.yaml) and the
workflows of round two (workflows.yaml, how it was written is said at its top) — judged in the
folders its places.py makes. Each gate judges every command twice: as an unsandboxed run (a
host with no bubblewrap, or Claude Code's Bash tool) and as a sandboxed one.

The earlier gates are the source of a commit — by default 17641a7, main before the gate failed
closed (last round's gate), and 60a598b, before the capability model — exported with
`git archive` into a temporary folder and imported from there in a child process.

    .venv/bin/python bench/shellgate_sets.py [--base 17641a7 --base 60a598b]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tools.gate_sets.places import benign_rows, make_places, red_team  # noqa: E402

_CHILD = """
import inspect, json, sys, time
from noetic.tools.shellgate import check_command
ws, home, boxed = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
commands = json.load(sys.stdin)
takes = "sandboxed" in inspect.signature(check_command).parameters
extra = {"sandboxed": boxed} if takes else {}
allowed = [check_command(c, ws, home=home, **extra).allowed for c in commands]
start = time.perf_counter()
for c in commands:
    check_command(c, ws, home=home, **extra)
ms = (time.perf_counter() - start) * 1000 / len(commands)
print(json.dumps({"allowed": allowed, "ms": ms}))
"""
TIMES: dict[str, float] = {}  # gate -> ms per ordinary command (the sandboxed pass)
Figures = dict[str, list[bool]]  # "red"/"good" -> allowed, in the order of the sets


def _current(red: list[str], good: list[str], ws: Path, home: Path, boxed: bool) -> Figures:
    from noetic.tools.shellgate import check_command

    def judge(commands: list[str]) -> list[bool]:
        return [check_command(c, ws, home=str(home), sandboxed=boxed).allowed for c in commands]

    figures = {"red": judge(red), "good": judge(good)}
    start = time.perf_counter()  # a second pass: the decisions per command, caches warm
    judge(good)
    TIMES["now"] = (time.perf_counter() - start) * 1000 / len(good)
    return figures


def _export(commit: str, tmp: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src/noetic"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp / commit, filter="data")
    return tmp / commit / "src"


def _base(src: Path, red: list[str], good: list[str], ws: Path, home: Path, boxed: bool) -> Figures:
    def judge(commands: list[str]) -> tuple[list[bool], float]:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, str(ws), str(home), "1" if boxed else "0"],
            input=json.dumps(commands).encode(),
            capture_output=True,
            check=True,
            env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        )
        answer = json.loads(done.stdout)
        return list(answer["allowed"]), float(answer["ms"])

    good_allowed, ms = judge(good)
    TIMES[src.parent.name] = ms
    return {"red": judge(red)[0], "good": good_allowed}


def _by_class(classes: list[str], allowed: list[bool]) -> dict[str, tuple[int, int]]:
    """class -> (refused, total)."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cls, ok in zip(classes, allowed, strict=True):
        out[cls][0] += not ok
        out[cls][1] += 1
    return {k: (v[0], v[1]) for k, v in out.items()}


def _table(title: str, classes: list[str], columns: dict[str, list[bool]]) -> None:
    print(f"\n{title}")
    names = list(columns)
    print(f"  {'class':<24}" + "".join(f"{n:>22}" for n in names))
    order = list(dict.fromkeys(classes))
    per = {n: _by_class(classes, columns[n]) for n in names}
    for cls in [*order, "all"]:
        cells = []
        for n in names:
            if cls == "all":
                count = sum(not ok for ok in columns[n])
                total = len(columns[n])
            else:
                count, total = per[n][cls]
            cells.append(f"{count:>4}/{total:<4} {count / total:>6.1%}")
        print(f"  {cls:<24}" + "".join(f"{c:>22}" for c in cells))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", action="append", help="a commit of an earlier gate (repeatable)")
    args = parser.parse_args()
    bases = args.base or ["17641a7", "60a598b"]
    rows = red_team()
    red = [c for _, c in rows]
    good_rows = benign_rows()
    good = [c for _, c in good_rows]
    gates: dict[str, Figures] = {}
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        ws, home = make_places(tmp)
        gates["now, no sandbox"] = _current(red, good, ws, home, False)
        gates["now, sandboxed"] = _current(red, good, ws, home, True)
        for commit in bases:
            src = _export(commit, tmp)
            gates[f"{commit}, no sandbox"] = _base(src, red, good, ws, home, False)
            gates[f"{commit}, sandboxed"] = _base(src, red, good, ws, home, True)
    print(
        f"{len(red)} red-team commands in {len({c for c, _ in rows})} classes; "
        f"{len(good)} ordinary commands in {len({c for c, _ in good_rows})} workflows"
    )
    _table(
        "red-team commands refused (higher is better), by class",
        [c for c, _ in rows],
        {g: f["red"] for g, f in gates.items()},
    )
    _table(
        "ordinary commands refused — false alarms (lower is better), by workflow",
        [c for c, _ in good_rows],
        {g: f["good"] for g, f in gates.items()},
    )
    print(
        "\nms per ordinary command (judged as sandboxed, twice; the second pass timed): "
        + ", ".join(f"{g} {ms:.2f}" for g, ms in TIMES.items())
    )
    now = gates["now, no sandbox"]
    print("\nfalse alarms now (no sandbox):")
    for (flow, c), ok in zip(good_rows, now["good"], strict=True):
        if not ok:
            print(f"  [{flow}] {c}")
    first = f"{bases[0]}, no sandbox"
    print(f"\nred-team commands {bases[0]} let through (no sandbox), now refused:")
    for (cls, c), was, ok in zip(rows, gates[first]["red"], now["red"], strict=True):
        if was and not ok:
            print(f"  [{cls}] {c!r}")


if __name__ == "__main__":
    main()
