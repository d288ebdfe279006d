"""Restoring the database from the session files, when it was lost or damaged.

SQLite is the source of truth and the JSON session documents are written from it after every
write, so they hold each session whole: its cascades, assessments, investigations, goals and
events. :func:`restore_from_files` reads them back into the database and checks, session by
session, that the rows now in SQLite are as many as the document holds. What session files do
not carry (outcomes, model-call logs, summaries, the observer cache) cannot come back this way.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from noetic.errors import NoeticError, StoreError
from noetic.limits import FILE_BYTES
from noetic.store import derived_files
from noetic.store.sqlite import Store
from noetic.untrusted import decode_utf8, load_json

TABLES = ("cascades", "assessments", "investigations", "goals", "events")


class Unreadable(BaseModel):
    file: str
    problem: str


class Restored(BaseModel):
    """What :func:`restore_from_files` did: rows restored per table, sessions already in the
    database (left as they are), files that could not be used, and where a damaged database
    was moved."""

    sessions: int = 0
    rows: dict[str, int] = Field(default_factory=lambda: dict.fromkeys(TABLES, 0))
    already_present: int = 0
    unreadable: list[Unreadable] = Field(default_factory=list)
    moved_aside: str | None = None


def _open(home: Path) -> tuple[Store, str | None]:
    """The store opened for recovery; a database too damaged to open is moved aside first."""
    try:
        return Store(home, recovering=True), None
    except StoreError as exc:
        db = home / "noetic.db"
        cause = getattr(exc.__cause__, "sqlite_errorname", "")
        if not cause.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or not db.exists():
            raise
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        aside = db.with_name(f"noetic.db.damaged-{stamp}")
        db.rename(aside)
        for suffix in ("-wal", "-shm"):
            db.with_name(db.name + suffix).unlink(missing_ok=True)
        return Store(home, recovering=True), str(aside)


def _count(store: Store, table: str, session_id: str) -> int:
    row = store.conn.execute(f"SELECT COUNT(*) FROM {table} WHERE session_id = ?", (session_id,))
    return int(row.fetchone()[0])


def restore_from_files(home: Path) -> Restored:
    """Import every session file whose session the database lacks, verifying the counts."""
    found = derived_files.session_files(home)
    if not found:
        raise StoreError(f"no session files in {home / 'sessions'} to restore from")
    store, moved = _open(home)
    report = Restored(moved_aside=moved)
    with store:
        for path in found:
            try:
                data = path.read_bytes()
                doc = load_json(decode_utf8(data, path.name, FILE_BYTES), path.name)
                sid = str(doc["session"]["id"])
                if store.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone():
                    report.already_present += 1
                    continue
                store.import_session(doc)
            except (NoeticError, OSError, KeyError, TypeError) as exc:
                report.unreadable.append(Unreadable(file=path.name, problem=str(exc)))
                continue
            for table in TABLES:
                expected, stored = len(doc.get(table) or []), _count(store, table, sid)
                if stored != expected:
                    raise StoreError(
                        f"restoring {path.name}: {stored} {table} in the database, "
                        f"{expected} in the file"
                    )
                report.rows[table] += stored
            report.sessions += 1
    return report
