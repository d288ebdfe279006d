"""Which modules a ``noetic`` command leaves loaded: run it in a fresh interpreter, as a shell or
a host does, and report its exit code and which of the watched modules are in ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

HARNESS = """
import json, sys
from noetic.cli import main
args, watched = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["noetic", *args]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
# Noetic's classes that dataclasses compiled (each costs a compile as its module loads)
compiled = sorted(f"{name}.{key}" for name, module in list(sys.modules.items())
                  if name.startswith("noetic") and module is not None
                  for key, value in list(vars(module).items())
                  if isinstance(value, type) and value.__module__ == name
                  and "__dataclass_fields__" in vars(value))
print(json.dumps({"code": code, "loaded": [m for m in watched if m in sys.modules],
                  "dataclasses": compiled}), file=sys.stderr)
"""


def modules_loaded(
    args: list[str], watched: tuple[str, ...], cwd: Path | None = None, stdin: str | None = None
) -> dict[str, Any]:
    """``{"code": exit code, "loaded": the watched modules loaded, "dataclasses": Noetic's
    classes compiled by ``dataclasses``}`` for ``noetic ARGS`` with
    ``stdin`` on its standard input (None: stdin at its end); the command's output is in the
    assertion message if the report is missing."""
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(args), json.dumps(watched)],
        cwd=cwd,
        stdin=subprocess.DEVNULL if stdin is None else None,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = proc.stderr.strip().splitlines()
    assert lines, (args, proc.stdout, proc.stderr)
    report: dict[str, Any] = json.loads(lines[-1])
    report["output"] = (proc.stdout, proc.stderr)
    return report
