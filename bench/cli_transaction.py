"""The workflow commands through the CLI, cold, as an agent's shell runs them.

One task is bootstrap → preflight → investigate → check → postflight (then state). Each command is
timed from process start to exit, median over several tasks, in three ways in the same run,
interleaved so that a busy machine slows them alike:

- now: the installed ``noetic`` (the fast path for these commands);
- typer: the same commands through typer (``NOETIC_CLI_FAST=0``), the previous design;
- the floors: ``python -c pass`` and ``noetic --help``.

Bytecode is compiled first, as a package installed by pip has it (an editable checkout writes it
on first use unless PYTHONDONTWRITEBYTECODE is set, as it is in some CI images).
Targets: every workflow command ≤ 150 ms; the transaction (bootstrap, preflight, check,
postflight) ≤ 600 ms.
"""

import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import noetic

NOETIC = str(Path(sys.executable).with_name("noetic"))
VECTORS = json.dumps(dict.fromkeys(noetic.VECTOR_NAMES, 0.7) | {"uncertainty": 0.3})
STEPS = {
    "bootstrap": ["bootstrap"],
    "preflight": ["preflight", "bench task", "--vectors", VECTORS],
    "investigate": ["investigate", "--note", "read the code"],
    "check": ["check", "--vectors", json.dumps({"know": 0.8})],
    "postflight": ["postflight", "--vectors", VECTORS],
    "state": ["state"],
}
TRANSACTION = ("bootstrap", "preflight", "check", "postflight")


def timed(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, capture_output=True, check=True, env=env, stdin=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def main(tasks: int = 9) -> None:
    compileall.compile_dir(Path(noetic.__file__).parent, quiet=1)
    env = {**os.environ, "NOETIC_AI_ID": "bench", "NOETIC_INDEX": "off"}
    designs = {"now": env, "typer": {**env, "NOETIC_CLI_FAST": "0"}}
    times: dict[tuple[str, str], list[float]] = {}
    floors: dict[str, list[float]] = {"python -c pass": [], "noetic --help": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(tasks):
            floors["python -c pass"].append(timed([sys.executable, "-c", "pass"], env))
            floors["noetic --help"].append(timed([NOETIC, "--help"], env))
            for design, design_env in designs.items():
                store = f"{tmp}/{design}"
                for name, args in STEPS.items():
                    ms = timed([NOETIC, *args, "--store", store, "--json"], design_env)
                    times.setdefault((design, name), []).append(ms)
    floor = {name: statistics.median(values) for name, values in floors.items()}
    for name, value in floor.items():
        print(f"{name:<16} median {value:6.0f} ms")
    help_ms = floor["noetic --help"]
    print(f"\n{'command':<12} {'now':>8} {'typer':>8}   now/--help  (median of {tasks}, ms)")
    totals = dict.fromkeys(designs, 0.0)
    for name in STEPS:
        now = statistics.median(times[("now", name)])
        before = statistics.median(times[("typer", name)])
        if name in TRANSACTION:
            totals["now"] += now
            totals["typer"] += before
        print(f"{name:<12} {now:8.0f} {before:8.0f}   {now / help_ms:9.2f}×")
    print(
        f"{'transaction':<12} {totals['now']:8.0f} {totals['typer']:8.0f}   "
        f"(bootstrap + preflight + check + postflight; {totals['typer'] / totals['now']:.2f}× "
        "faster than through typer)"
    )


if __name__ == "__main__":
    main()
