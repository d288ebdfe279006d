"""One agent in its own process: bootstraps, then runs tasks through the CLI without ever
naming a session (used by the multi-agent tests).

Usage: NOETIC_AI_ID=NAME python _agent.py HOME ROUNDS BARRIER_DIR

Each command runs through the CLI's own typer app in this process. Waits until BARRIER_DIR/go
exists so that all agents start together, then prints one JSON line per command: the command,
its exit code and its JSON reply.
"""

import json
import os
import sys
import time
from pathlib import Path

from typer.testing import CliRunner

from noetic.cli import app

SCORES = {
    "engagement": 0.9, "know": 0.5, "do": 0.8, "context": 0.5, "clarity": 0.8, "coherence": 0.9,
    "signal": 0.7, "density": 0.4, "state": 0.6, "change": 0.7, "completion": 0.6, "impact": 0.8,
    "uncertainty": 0.5,
}  # fmt: skip


def main() -> None:
    home, rounds, barrier = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
    me = os.environ["NOETIC_AI_ID"]
    runner = CliRunner()
    (barrier / me).touch()
    while not (barrier / "go").exists():
        time.sleep(0.01)

    def run(*args: str) -> None:
        result = runner.invoke(app, [*args, "--store", home, "--json"])
        reply = json.loads(result.stdout) if result.stdout.strip() else None
        print(json.dumps({"args": list(args), "exit": result.exit_code, "reply": reply}))

    for i in range(rounds):
        if i in (0, rounds // 2):  # a second bootstrap halfway: a new current session
            run("bootstrap")
        run("preflight", f"{me} task {i}", "--vectors", json.dumps(SCORES))
        run("check", "--vectors", json.dumps({"know": 0.9, "context": 0.85}))
        run("postflight", "--vectors", json.dumps({**SCORES, "know": 0.9}))


if __name__ == "__main__":
    main()
