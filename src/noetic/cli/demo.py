"""`noetic demo`: one tracked task from bootstrap to calibration, in a scratch store.

It runs the same commands a user or an agent runs, with the scores an agent might give, and
prints what each one shows, so a newcomer sees in under a minute what Noetic records.
"""

from __future__ import annotations

import contextlib
import io
import json as jsonlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated

import typer

from noetic.cli.fast import invoke
from noetic.cli.options import JsonOpt
from noetic.cli.output import esc, stdout
from noetic.store import close_stores
from noetic.vectors import VECTOR_NAMES

TASK = "Fix the flaky timezone test in billing/test_invoices.py"

PREFLIGHT = {
    "vectors": {
        "engagement": {"score": 0.85, "rationale": "A concrete, bounded bug."},
        "know": {"score": 0.55, "rationale": "I know pytest; not this billing code."},
        "do": 0.8,
        "context": {"score": 0.45, "rationale": "I have not read the test or the CI logs."},
        "clarity": 0.75,
        "coherence": 0.8,
        "signal": 0.6,
        "density": 0.4,
        "state": 0.5,
        "change": 0.7,
        "completion": 0.55,
        "impact": 0.65,
        "uncertainty": 0.55,
    },
    "recommended_action": "INVESTIGATE",
    "note": "Read the test and its fixtures before touching anything.",
}
INVESTIGATION = "The test builds invoices with datetime.now() while the fixture freezes UTC."
CHECK = {
    "know": {"score": 0.8, "evidence": "test_invoices.py:41 uses naive datetime.now()"},
    "context": {"score": 0.85, "evidence": "CI runs in UTC+0, laptops do not"},
    "state": 0.8,
    "completion": 0.8,
    "uncertainty": 0.25,
}
# POSTFLIGHT's scores in the order of VECTOR_NAMES (engagement, know, do, … uncertainty)
_AFTER = (0.85, 0.85, 0.85, 0.85, 0.85, 0.9, 0.8, 0.3, 0.85, 0.8, 0.9, 0.75, 0.2)
POSTFLIGHT = {
    "vectors": dict(zip(VECTOR_NAMES, _AFTER, strict=True)),
    "note": "The fix was one line; the fixture's frozen clock was the key evidence.",
}


def demo(
    store: Annotated[
        Path | None, typer.Option("--store", help="Keep the demo's store here.")
    ] = None,
    json: JsonOpt = False,
) -> None:
    """Walk through one tracked task (bootstrap → preflight → investigate → check → postflight)."""
    from noetic.cli import sessions

    with tempfile.TemporaryDirectory(prefix="noetic-demo-") as scratch, _no_indexer(store):
        home = store or Path(scratch) / ".noetic"
        out = stdout()
        quiet = json

        def step(title: str, command: str) -> None:
            if not quiet:
                if out.is_terminal:
                    out.rule(f"[bold]{title}")
                else:
                    out.print(f"── [bold]{title}[/] ──")
                out.print(f"[dim]$[/] [cyan]{esc(command)}[/]")

        if not quiet:
            out.print(
                "[bold]Noetic demo[/]: an agent tracks one task. It scores itself on 13 vectors "
                "before, during and after the work; Noetic records every assessment, decides "
                "what to do next from the profile's thresholds, and measures calibration.\n"
            )
        silence = contextlib.redirect_stdout(io.StringIO()) if quiet else contextlib.nullcontext()
        with silence:
            _walk(home, quiet, step)
        close_stores(done=False)  # each step's store writes its files, for the listing below
        if quiet:
            from noetic.store import Store
            from noetic.store.current import read_current_session

            with Store(home) as opened:
                sid = read_current_session(home) or ""
                typer.echo(jsonlib.dumps(opened.export_session(sid), indent=2))
            return
        step("6 · what was recorded", "noetic sessions list")
        sessions.list_(store=home)
        out.print("\n[bold]Triple storage[/] under the store directory:")
        for path, what in _stored(home):
            out.print(f"  {esc(path)}  [dim]({what})[/]")
        close_stores(done=False)  # before the scratch folder goes: one closed later recreates it
        out.print(
            "\nTry it for real: [cyan]noetic bootstrap[/], then [cyan]noetic preflight "
            '"your task"[/] prints the assessment prompt for your agent to answer.'
        )


def _stored(home: Path) -> list[tuple[str, str]]:
    """The store's files, each with what it is: the three formats, then the pointer to the
    agent's current session (which is none of them)."""
    found = [("noetic.db", "SQLite: sessions, tasks, assessments, investigations, events")]
    for pattern, what in (
        ("sessions/*.json", "JSON: the session's document"),
        ("reflex_logs/**/*.jsonl", "reflex log: one line per assessment"),
        ("current/*.json", "the agent's current session, not a record"),
    ):
        found += [(str(p.relative_to(home)), what) for p in sorted(home.glob(pattern))]
    return found


@contextlib.contextmanager
def _no_indexer(store: Path | None) -> Iterator[None]:
    """In the scratch store, no background indexer: it would outlive the demo and write into
    the removed folder, leaving it behind. A kept store (--store) is indexed as usual."""
    if store is not None:
        yield
        return
    before = os.environ.get("NOETIC_INDEX")
    os.environ["NOETIC_INDEX"] = "off"
    try:
        yield
    finally:
        if before is None:
            del os.environ["NOETIC_INDEX"]
        else:
            os.environ["NOETIC_INDEX"] = before


def _walk(home: Path, quiet: bool, step: Callable[[str, str], None]) -> None:
    step("1 · bootstrap: open a session", "noetic bootstrap --ai-model claude-haiku-4")
    invoke("bootstrap", ai_model="claude-haiku-4", store=home, json=quiet)
    step("2 · preflight: the baseline, before any work", f'noetic preflight "{TASK}" --vectors …')
    invoke("preflight", TASK, vectors=jsonlib.dumps(PREFLIGHT), store=home, json=quiet)
    step("3 · investigate: look before acting", f'noetic investigate --note "{INVESTIGATION}"')
    invoke("investigate", note=INVESTIGATION, tool="read_file", store=home, json=quiet)
    step("4 · check: reassess only what changed", "noetic check --vectors …")
    invoke("check", vectors=jsonlib.dumps(CHECK), store=home, json=quiet)
    step("5 · postflight: reassess after the work", "noetic postflight --vectors …")
    invoke("postflight", vectors=jsonlib.dumps(POSTFLIGHT), store=home, json=quiet)
