"""`noetic sessions list|show|export|import` and `noetic rebuild`."""

from __future__ import annotations

import json as jsonlib
from pathlib import Path
from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.inputs import read_text_file
from noetic.cli.options import JsonOpt, StoreOpt, group
from noetic.cli.output import emit, esc, stdout
from noetic.cli.render import decision_line, table, vector_table
from noetic.store import open_store

app = group("List, show, export and import sessions.")


@app.command("list")
def list_(
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 20,
    ai_id: Annotated[str | None, typer.Option(help="Only this AI's sessions.")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Sessions in the store, newest first."""
    with handled(json):
        opened = open_store(store)
        from noetic.operations.session_totals import session_totals

        sessions = opened.list_sessions(limit=limit, ai_id=ai_id)
        totals = session_totals(opened, [s.id for s in sessions])

    def render() -> None:
        shown = table("id", "ai", "profile", "tasks", "turns", "avg conf", "drift", "type",
                          "created")  # fmt: skip
        for s in sessions:
            t = totals[s.id]
            shown.add_row(
                s.id, esc(s.ai_id), esc(s.profile), str(t.tasks), str(t.turns),
                _conf(t.average_confidence), "yes" if t.drift_detected else "no",
                esc(s.session_type or "-"), s.created_at[:19],
            )  # fmt: skip
        stdout().print(shown if sessions else "no sessions yet · start one: noetic bootstrap")

    emit([{**s.model_dump(), "totals": totals[s.id]} for s in sessions], json, render)


def _conf(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@app.command()
def show(
    session_id: Annotated[str, typer.Argument(help="Session id or unique prefix.")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """One session: its tasks, assessments and decisions."""
    with handled(json):
        from noetic.operations.session_totals import exported

        doc = exported(open_store(store), session_id)

    def render() -> None:
        from noetic.store.records import AssessmentRecord

        out = stdout()
        s = doc["session"]
        kind = f" · type {esc(s['session_type'])}" if s.get("session_type") else ""
        out.print(
            f"[bold]session[/] {s['id']} · ai {esc(s['ai_id'])} · profile {esc(s['profile'])}"
            + kind
        )
        t = doc["totals"]
        out.print(
            f"tasks {t['tasks']} · turns {t['turns']} · average confidence "
            f"{_conf(t['average_confidence'])} · drift detected: "
            + ("yes" if t["drift_detected"] else "no")
        )
        for cascade in doc["cascades"]:
            out.print(f"\n[bold]task[/] {esc(cascade['task'])} · {cascade['status']}")
            for raw in doc["assessments"]:
                if raw["cascade_id"] != cascade["id"]:
                    continue
                rec = AssessmentRecord.model_validate({**raw, "id": 0})
                out.print(vector_table(rec.assessment.vectors, rec.assessment.phase.upper()))
                out.print(decision_line(rec.decision))
            cal = cascade["result"].get("calibration")
            if cal:
                out.print(
                    "against itself (PREFLIGHT → POSTFLIGHT; outcomes judge it): "
                    f"{cal['classification']}"
                )

    emit(doc, json, render)


@app.command()
def export(
    session_id: Annotated[str, typer.Argument(help="Session id or unique prefix.")],
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Export a session as one JSON document (re-import with `noetic sessions import`).

    To stdout the export is the document (with or without --json); with --output, --json
    prints where it went."""
    from noetic.store.derived_files import atomic_write_json

    with handled(json):
        from noetic.operations.session_totals import exported

        doc = exported(open_store(store), session_id)
        if output is None:
            typer.echo(jsonlib.dumps(doc, indent=2, ensure_ascii=False))
            return
        atomic_write_json(output, doc)
    written = {"session_id": doc["session"]["id"], "path": str(output)}
    emit(written, json, lambda: stdout().print(f"exported {doc['session']['id']} to {esc(output)}"))


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A file written by `noetic sessions export`.")],
    replace: Annotated[bool, typer.Option(help="Overwrite a session with the same id.")] = False,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Import an exported session exactly (same ids and timestamps)."""
    from noetic.untrusted import load_json

    with handled(json):
        doc = load_json(read_text_file(file), str(file))
        session = open_store(store, create=True).import_session(doc, replace=replace)
    emit(session, json, lambda: stdout().print(f"imported session {session.id}"))


def rebuild(
    store: StoreOpt = None,
    json: JsonOpt = False,
    from_files: Annotated[
        bool,
        typer.Option(
            "--from-files",
            help="Restore the database from the session JSON files (when it was lost or "
            "damaged), verifying the counts.",
        ),
    ] = False,
) -> None:
    """Regenerate every session JSON file and reflex log from SQLite (or, with --from-files,
    SQLite from the session files); remove temporary files left by killed writers."""
    from noetic.operations.maintenance import rebuild as rebuild_store

    with handled(json):
        rebuilt = rebuild_store(store, from_files=from_files)

    def render() -> None:
        out, restored = stdout(), rebuilt.restored
        if restored is not None:
            rows = ", ".join(f"{n} {table}" for table, n in restored.rows.items())
            sessions = "session" if restored.sessions == 1 else "sessions"
            out.print(f"restored {restored.sessions} {sessions} from their files ({rows})")
            if restored.moved_aside:
                out.print(f"the damaged database was moved to {esc(restored.moved_aside)}")
            for bad in restored.unreadable:
                out.print(f"could not restore {esc(bad.file)}: {esc(bad.problem)}")
        out.print(
            f"rebuilt {rebuilt.sessions} session files and {rebuilt.reflex_logs} reflex-log lines "
            f"in {esc(rebuilt.home)}; removed {rebuilt.temporary_files_removed} leftover "
            "temporary files"
        )

    emit(rebuilt.model_dump(mode="json", exclude_none=True, exclude={"home"}), json, render)
