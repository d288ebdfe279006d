"""Eight agents in one store at once, each in its own process: bootstrap, then ROUNDS tasks of
preflight → check → postflight through the CLI, with a second bootstrap halfway.

Two runs of the same load, measured in the same invocation:
- named agents (the case under test): each process sets NOETIC_AI_ID and never names a session;
- baseline: each process passes the session its bootstrap returned with --session.

Prints, for each: commands run, commands refused, assessments recorded, assessments that landed
in a session other than the one the agent had bootstrapped last, tasks left open, wall time.
Commands run through the CLI's typer app inside each agent's process (a process per command
would measure interpreter start-up, 8 × 150 times).

Usage: python bench/agents_load.py [ROUNDS]   (default 50, the load in the issue that asked
for per-agent sessions)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENTS = 8
SCORES = {
    "engagement": 0.9, "know": 0.5, "do": 0.8, "context": 0.5, "clarity": 0.8, "coherence": 0.9,
    "signal": 0.7, "density": 0.4, "state": 0.6, "change": 0.7, "completion": 0.6, "impact": 0.8,
    "uncertainty": 0.5,
}  # fmt: skip


def worker(home: str, rounds: int, explicit: bool, barrier: Path) -> None:
    from typer.testing import CliRunner

    from noetic.cli import app

    runner = CliRunner()
    me = os.environ["NOETIC_AI_ID"]
    (barrier / me).touch()
    while not (barrier / "go").exists():
        time.sleep(0.005)
    session: list[str] = []

    def run(*args: str) -> None:
        extra = ["--session", session[-1]] if explicit and args[0] != "bootstrap" else []
        result = runner.invoke(app, [*args, *extra, "--store", home, "--json"])
        reply = json.loads(result.stdout) if result.stdout.strip() else {}
        if args[0] == "bootstrap" and result.exit_code == 0:
            session.append(reply["session"]["id"])
        used = reply.get("session_id")
        wrong = used is not None and bool(session) and used != session[-1]
        print(json.dumps({"exit": result.exit_code, "wrong": wrong}))

    for i in range(rounds):
        if i in (0, rounds // 2):
            run("bootstrap")
        run("preflight", f"{me} task {i}", "--vectors", json.dumps(SCORES))
        run("check", "--vectors", json.dumps({"know": 0.9, "context": 0.85}))
        run("postflight", "--vectors", json.dumps({**SCORES, "know": 0.9}))


def load(rounds: int, explicit: bool) -> dict[str, float]:
    from noetic.store import Store

    with tempfile.TemporaryDirectory() as tmp:
        home, barrier = Path(tmp) / "store", Path(tmp) / "barrier"
        barrier.mkdir()
        names = [f"agent-{i}" for i in range(AGENTS)]
        mode = "explicit" if explicit else "named"
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--worker", str(home), str(rounds), mode, str(barrier)],
                env={**os.environ, "NOETIC_AI_ID": name, "NOETIC_SESSION": ""},
                stdout=subprocess.PIPE,
                text=True,
            )
            for name in names
        ]
        while not all((barrier / n).exists() for n in names):
            time.sleep(0.01)
        start = time.perf_counter()
        (barrier / "go").touch()
        lines = [json.loads(line) for p in procs for line in p.communicate()[0].splitlines()]
        wall = time.perf_counter() - start
        with Store(home) as store:
            assessments = store.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0]
            still_open = store.conn.execute(
                "SELECT COUNT(*) FROM cascades WHERE status = 'open'"
            ).fetchone()[0]
    return {
        "commands": len(lines),
        "refused": sum(1 for line in lines if line["exit"] != 0),
        "assessments": assessments,
        "wrong session": sum(1 for line in lines if line["wrong"]),
        "open tasks": still_open,
        "wall s": round(wall, 1),
        "commands/s": round(len(lines) / wall, 1),
    }


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        home, rounds, mode, barrier = sys.argv[2:6]
        worker(home, int(rounds), mode == "explicit", Path(barrier))
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    print(f"{AGENTS} agents × {rounds} tasks (preflight, check, postflight) on one store")
    load(2, explicit=True)  # warm-up, not shown: whichever load ran first was slower
    named, baseline = load(rounds, explicit=False), load(rounds, explicit=True)
    print(f"{'':<14}{'NOETIC_AI_ID only':>20}{'baseline: --session':>22}")
    for key in named:
        print(f"{key:<14}{named[key]:>20}{baseline[key]:>22}")


if __name__ == "__main__":
    main()
