"""The shell gate on its red-team and benign sets, beside the gate before the capability model.

The sets are the test data in tests/tools/gate_sets/ (red-team commands by class, ordinary
developer commands), judged in the folders its places.py makes. The gate of this checkout is
judged as an unsandboxed run (a host with no bubblewrap, or Claude Code's Bash tool) and as a
sandboxed one; the earlier gate — commit 60a598b, exported with `git archive` into a temporary
folder and imported from there in a child process — on the same sets, in the same run.

    .venv/bin/python bench/shellgate_sets.py [--base 60a598b]
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.tools.gate_sets.places import benign, make_places, red_team  # noqa: E402

_CHILD = """
import json, sys
from noetic.tools.shellgate import check_command
ws, home = sys.argv[1], sys.argv[2]
commands = json.load(sys.stdin)
print(json.dumps([check_command(c, ws, home=home).allowed for c in commands]))
"""


def _current(commands: list[str], ws: Path, home: Path, sandboxed: bool) -> list[bool]:
    from noetic.tools.shellgate import check_command

    return [check_command(c, ws, home=str(home), sandboxed=sandboxed).allowed for c in commands]


def _base(commit: str, commands: list[str], ws: Path, home: Path, tmp: Path) -> list[bool]:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "src/noetic"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(tmp / "base", filter="data")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(ws), str(home)],
        input=json.dumps(commands).encode(),
        capture_output=True,
        check=True,
        env={"PYTHONPATH": str(tmp / "base" / "src"), "PATH": "/usr/bin:/bin"},
    )
    return list(json.loads(done.stdout))


def _line(name: str, red: list[bool], good: list[bool]) -> str:
    let_through = sum(red)
    alarms = len(good) - sum(good)
    return (
        f"{name:<34} red-team refused {len(red) - let_through:>3}/{len(red)} "
        f"(let through {let_through:>3})   benign allowed {sum(good):>3}/{len(good)} "
        f"(false alarms {alarms:>2}, {alarms / len(good):.1%})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", default="60a598b", help="the commit of the earlier gate")
    args = parser.parse_args()
    rows = red_team()
    red = [c for _, c in rows]
    good = benign()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        ws, home = make_places(tmp)
        host_red, host_good = _current(red, ws, home, False), _current(good, ws, home, False)
        box_red, box_good = _current(red, ws, home, True), _current(good, ws, home, True)
        base_red, base_good = (
            _base(args.base, red, ws, home, tmp),
            _base(args.base, good, ws, home, tmp),
        )
    print(
        f"{len(red)} red-team commands in {len({c for c, _ in rows})} classes, {len(good)} benign"
    )
    print(_line("this gate, no sandbox", host_red, host_good))
    print(_line("this gate, sandboxed run", box_red, box_good))
    print(_line(f"gate at {args.base}", base_red, base_good))
    from noetic.tools.shellgate.syntax import parse

    compound = [c for c in good if parse(c, home=str(home), workspace=str(ws)).argv() is None]
    print(
        f"benign lines that need a shell: {len(compound)}/{len(good)} — refused by the shell tool "
        f'at {args.base} ("needs a shell"), run through bash as parsed now'
    )
    through = Counter(cls for (cls, _), ok in zip(rows, base_red, strict=True) if ok)
    print(
        f"let through by {args.base}, by class: "
        + ", ".join(f"{k} {v}" for k, v in sorted(through.items()))
    )
    print(
        "false alarms now (no sandbox): "
        + "; ".join(c for c, ok in zip(good, host_good, strict=True) if not ok)
    )
    print(
        f"false alarms at {args.base}: "
        + "; ".join(c.replace("\n", "⏎") for c, ok in zip(good, base_good, strict=True) if not ok)
    )


if __name__ == "__main__":
    main()
