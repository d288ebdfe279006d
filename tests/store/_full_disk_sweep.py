"""Every write on a full disk, at every fill level: run as root inside a private mount namespace
(``unshare --mount python _full_disk_sweep.py STORE PREPARED OUT LEVEL…``).

For each level (KiB left free): a 3 MiB tmpfs over ``STORE`` holding a copy of the prepared
store, then each write of :data:`CLI` (the command line, in this process) and :data:`MCP` (the
tool functions, on one server state, as a long-lived server calls them): the disk is filled by a
file to the level, the write tried, the file removed, the rows counted; then the same write is
tried again with room (the same request id where the write takes one) and the rows counted
again. One JSON line per write goes to ``OUT``. tests/store/test_full_disk.py reads them.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

TABLES = ("sessions", "cascades", "assessments", "investigations", "goals", "events",
          "outcomes", "checkpoints", "requests")  # fmt: skip
SCORES = {v: 0.6 for v in ("engagement", "know", "do", "context", "clarity", "coherence",
                           "signal", "density", "state", "change", "completion", "impact",
                           "uncertainty")}  # fmt: skip
ALL = json.dumps(SCORES)

# (name, arguments, the table one such write adds to, its request id or None)
CLI: list[tuple[str, list[str], str, str | None]] = [
    ("check", ["check", "--vectors", '{"know": 0.61}'], "assessments", "cli-check"),
    ("investigate", ["investigate", "--note", "read the parser"], "investigations", "cli-inv"),
    ("goals", ["goals", "generate"], "goals", None),
    ("postflight", ["postflight", "--vectors", ALL], "assessments", "cli-post"),
    ("outcome", ["outcome", "--score", "1"], "outcomes", "cli-out"),
    ("preflight", ["preflight", "the next task", "--vectors", ALL], "cascades", "cli-pre"),
    ("bootstrap", ["bootstrap"], "sessions", "cli-boot"),
]
MCP: list[tuple[str, str, dict[str, Any], str, bool]] = [
    ("mcp bootstrap_session", "bootstrap_session", {}, "sessions", True),
    ("mcp submit_preflight_assessment", "submit_preflight_assessment",
     {"vectors": SCORES, "task": "a task over MCP"}, "cascades", True),
    ("mcp submit_check_assessment", "submit_check_assessment",
     {"vectors": {"know": 0.7}}, "assessments", True),
    ("mcp generate_goals", "generate_goals", {}, "goals", False),
    ("mcp submit_postflight_assessment", "submit_postflight_assessment",
     {"vectors": SCORES}, "assessments", True),
    ("mcp record_outcome", "record_outcome", {"score": 1.0}, "outcomes", True),
]  # fmt: skip


def rows(store: Path) -> dict[str, int]:
    with sqlite3.connect(store / "noetic.db") as conn:
        return {t: conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}


def fill(store: Path, free_kib: int) -> None:
    """A file taking all but ``free_kib`` KiB of the file system."""
    left = shutil.disk_usage(store).free - free_kib * 1024
    block = b"\0" * 4096
    if left < len(block):
        return  # the store's own rows already took the room: the disk is as full as asked
    try:
        # unbuffered: a write the full disk refuses leaves nothing for close() to flush again
        f = open(store / "filler", "wb", buffering=0)  # noqa: SIM115 - closed below
    except OSError:
        return  # full already: not even a new file fits
    with f:
        while left >= len(block):
            try:
                written = f.write(block)
            except OSError:
                break
            left -= written or len(block)


def empty(store: Path) -> None:
    (store / "filler").unlink(missing_ok=True)


def run_cli(args: list[str], request_id: str | None) -> tuple[int, str]:
    from typer.testing import CliRunner

    from noetic.cli import app

    extra = ["--request-id", request_id] if request_id else []
    done = CliRunner().invoke(app, [*args, *extra, "--json"])
    return done.exit_code, done.stdout + done.stderr


def run_tool(n: Any, tool: str, kwargs: dict[str, Any], request_id: str | None) -> tuple[int, str]:
    from noetic.mcp import tools
    from noetic.mcp.tool_calls import bind, tool_errors

    fn = tool_errors(bind(getattr(tools, tool), n))
    extra = {"request_id": request_id} if request_id else {}
    try:
        result = asyncio.run(fn(**kwargs, **extra))
    except Exception as exc:  # a tool error, as the client reads it
        return 1, f"{type(exc).__name__}: {exc}"
    return 0, repr(result)[:200]


def level(store: Path, prepared: Path, free_kib: int, out: Any) -> None:
    from noetic.mcp.state import ServerState

    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(store)], check=True)
    try:
        shutil.copytree(prepared, store, dirs_exist_ok=True)
        tries: list[tuple[str, str, Any]] = [
            (name, table, (lambda a=args, r=rid, s=suffix: run_cli(a, r and r + s)))
            for name, args, table, rid in CLI
            for suffix in [f"-{free_kib}"]
        ]
        n = ServerState(store, workspace=store, embed_at_start=False)
        tries += [
            (name, table, (lambda t=tool, k=kw, r=rid, s=f"-{free_kib}": run_tool(
                n, t, k, f"{t}{s}" if r else None)))
            for name, tool, kw, table, rid in MCP
        ]  # fmt: skip
        for name, table, attempt in tries:
            before = rows(store)
            fill(store, free_kib)
            code, said = attempt()
            empty(store)
            after = rows(store)
            again, said_again = attempt()
            last = rows(store)
            out.write(json.dumps({
                "level": free_kib, "write": name, "table": table, "rc": code, "said": said,
                "before": before, "after": after, "retry_rc": again, "retry_said": said_again,
                "after_retry": last,
            }) + "\n")  # fmt: skip
            out.flush()
        n.store.close()
    finally:
        subprocess.run(["umount", "-l", str(store)], check=False)


def main() -> None:
    store, prepared, out_path = (Path(a) for a in sys.argv[1:4])
    os.environ["NOETIC_HOME"] = str(store)
    with open(out_path, "a") as out:
        for free in sys.argv[4:]:
            level(store, prepared, int(free), out)


if __name__ == "__main__":
    main()
