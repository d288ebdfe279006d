"""The SQLite store: Noetic's source of truth.

One :class:`Store` owns one connection. The database runs in WAL mode with a busy timeout, so
several processes can write to one store at once: each logical write is one ``BEGIN IMMEDIATE``
transaction, and a writer that finds the database locked waits rather than failing. After a
write that touches a session, the same transaction queues the session's files in
``file_backlog``; :mod:`noetic.store.mirror` rewrites the JSON document and writes the reflex logs
from SQLite under a file lock (so the newest committed state always wins) when the store closes
or, in a long-lived process, a moment later on a background thread. A write's cost does not grow
with the session.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import sqlite3
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from noetic.assessment import Assessment, Decision
from noetic.errors import NotFoundError, StoreError, ValidationError
from noetic.events import Event
from noetic.store import files
from noetic.store.migrations import migrate, pending
from noetic.store.mirror import Mirror, drain
from noetic.store.records import (
    AssessmentRecord,
    CascadeRecord,
    EventRecord,
    GoalRecord,
    InvestigationRecord,
    SessionRecord,
)
from noetic.untrusted import check_identifier, check_text_field
from noetic.vectors import VECTOR_NAMES

EXPORT_FORMAT: Final = "noetic.session"
EXPORT_VERSION: Final = 1
BUSY_TIMEOUT_MS: Final = 30_000
_COLS: Final = ", ".join(f'"{v}"' for v in VECTOR_NAMES)
GROWN_SESSIONS: Final = 16  # sessions whose documents' growing parts a store keeps encoded


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


class Store:
    """SQLite plus the JSON and reflex-log files derived from it, under one home directory."""

    def __init__(
        self,
        home: Path | str,
        *,
        write_files: bool = True,
        background: bool = False,
        recovering: bool = False,
    ) -> None:
        """Open (creating if needed) the store under ``home``.

        ``background``: a long-lived process (the MCP server) writes the session files on a
        thread a moment after each write; otherwise they are written at :meth:`flush_files`
        and :meth:`close` (and at exit, for a store nobody closed).

        A store on a read-only file system or without write permission opens read-only: reads
        work and every write raises :class:`StoreError` saying so. A database that is missing
        or empty while session files exist is refused (their history would silently vanish)
        unless ``recovering`` (``noetic rebuild --from-files``)."""
        self.home = Path(home)
        self.write_files = write_files
        self.background = background
        self.mirror = Mirror(self)
        self.read_only = False
        self.db_path = self.home / "noetic.db"
        self._writing = threading.RLock()
        self._grown: OrderedDict[str, _Grown] = OrderedDict()
        if not recovering:
            files.refuse_lost_database(self.home, self.db_path, "missing or empty")
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create the store directory {self.home}: {exc}") from exc
        try:
            try:
                self.conn = _connect(self.db_path)
            except sqlite3.OperationalError as exc:
                if not _cannot_write(exc, self.db_path):
                    raise
                self.conn = _connect_read_only(self.db_path)
                self.read_only = True
            behind = self.conn.execute("SELECT 1 FROM file_backlog LIMIT 1").fetchone()
        except sqlite3.DatabaseError as exc:
            raise StoreError(
                f"cannot open the store database {self.db_path}: {exc}", fix=_open_fix(exc)
            ) from exc
        if not recovering and self._no_sessions():
            try:
                files.refuse_lost_database(self.home, self.db_path, "empty")
            except StoreError:
                self.conn.close()
                raise
        self._closed = False
        _OPEN.add(self)
        if behind and write_files and background and not self.read_only:
            self.mirror.wake()  # a process that died left files behind: bring them up to date

    def _no_sessions(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is None

    def close(self) -> None:
        """Write the files still in the backlog, then close the connection."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        _OPEN.discard(self)
        try:
            self.mirror.stop()
            if self.write_files and not self.read_only:
                drain(self)
        finally:
            self.conn.close()

    def flush_files(self) -> int:
        """Bring every session file the backlog names up to date now."""
        self.mirror.stop()
        return drain(self)

    def _files_changed(self) -> None:
        if self.write_files and self.background:
            self.mirror.wake()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One logical write: ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error.

        Threads sharing this store (an MCP server's worker threads) take turns: one
        transaction at a time on the connection."""
        if self.read_only:
            raise self._read_only()
        with self._writing:
            try:
                self._begin()
                try:
                    yield self.conn
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                # SQLite may open a database it cannot write without saying so; the first
                # write finds out.
                if not getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
                    raise
                self.read_only = True
                raise self._read_only() from exc

    def _begin(self) -> None:
        """``BEGIN IMMEDIATE``, waiting out a read still open on this connection.

        A read in progress on another thread holds the snapshot it started with; when another
        process has written since, SQLite refuses the write lock at once (SQLITE_BUSY_SNAPSHOT)
        rather than waiting as it does for a lock (the busy timeout). So a refusal is retried,
        briefly, until the read ends — within the same busy timeout in all."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.001
        while True:
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                return
            except sqlite3.OperationalError as exc:
                busy = getattr(exc, "sqlite_errorname", "").startswith("SQLITE_BUSY")
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def _read_only(self) -> StoreError:
        return StoreError(
            f"the store {self.home} is read-only: this command writes to it",
            fix="run it where the store's directory is writable; reading commands "
            "(state, sessions list, calibration report) work as they are",
        )

    # sessions -----------------------------------------------------------------------------

    def create_session(
        self,
        *,
        ai_id: str,
        profile: str,
        ai_model: str | None = None,
        domain: str | None = None,
        project: str | None = None,
    ) -> SessionRecord:
        named = {"ai_id": ai_id, "profile": profile, "ai_model": ai_model, "domain": domain}
        for field, value in {**named, "project": project}.items():
            if value is not None:
                check_identifier(value, field)
        record = SessionRecord(
            id=new_id("s"),
            ai_id=ai_id,
            ai_model=ai_model,
            domain=domain,
            profile=profile,
            project=project,
            created_at=now(),
        )
        with self.transaction() as c:
            _insert(c, "sessions", record.model_dump())
            _queue(c, record.id)
        self._files_changed()
        return record

    def get_session(self, session_id: str) -> SessionRecord:
        """A session by id or unique id prefix."""
        rows = _by_id_or_prefix(self.conn, "sessions", session_id)
        exact = [r for r in rows if r["id"] == session_id]
        if exact:
            return SessionRecord(**dict(exact[0]))
        if len(rows) == 1 and session_id:
            return SessionRecord(**dict(rows[0]))
        if len(rows) > 1:
            raise ValidationError(
                f"session id prefix {session_id!r} is ambiguous",
                field="session_id",
                value=session_id,
                fix="give more characters of the id",
            )
        raise NotFoundError(
            f"unknown session {session_id!r}", fix="`noetic sessions list` shows the sessions"
        )

    def end_session(self, session_id: str) -> SessionRecord:
        """Mark a session ended (its tasks stay as they are); ending it again changes nothing."""
        session = self.get_session(session_id)
        if session.status == "ended":
            return session
        with self.transaction() as c:
            c.execute(
                "UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ?",
                (now(), session.id),
            )
            _queue(c, session.id)
        self._files_changed()
        return self.get_session(session.id)

    def list_sessions(self, *, limit: int = 50, ai_id: str | None = None) -> list[SessionRecord]:
        sql = "SELECT * FROM sessions"
        args: list[Any] = []
        if ai_id:
            sql += " WHERE ai_id = ?"
            args.append(ai_id)
        sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
        args.append(limit)
        return [SessionRecord(**dict(r)) for r in self.conn.execute(sql, args)]

    # cascades -----------------------------------------------------------------------------

    def open_cascade(
        self, session_id: str, task: str, *, profile: str, provider: str | None = None
    ) -> CascadeRecord:
        check_text_field(task, "task")
        record = CascadeRecord(
            id=new_id("c"),
            session_id=session_id,
            task=task,
            status="open",
            profile=profile,
            provider=provider,
            created_at=now(),
        )
        with self.transaction() as c:
            row = record.model_dump()
            row["result"] = json.dumps(row["result"])
            _insert(c, "cascades", row)
        return record

    def get_cascade(self, cascade_id: str) -> CascadeRecord:
        row = _by_id_or_prefix(self.conn, "cascades", cascade_id)
        if len(row) == 1 or (row and row[0]["id"] == cascade_id):
            return _cascade(row[0])
        if len(row) > 1:
            raise ValidationError(
                f"cascade id prefix {cascade_id!r} is ambiguous", field="cascade_id"
            )
        raise NotFoundError(f"unknown cascade {cascade_id!r}")

    def cascades(self, session_id: str) -> list[CascadeRecord]:
        rows = self.conn.execute(
            "SELECT * FROM cascades WHERE session_id = ? ORDER BY created_at, id", (session_id,)
        )
        return [_cascade(r) for r in rows]

    def open_cascade_of(self, session_id: str) -> CascadeRecord | None:
        """The session's newest cascade that is still open, if any."""
        row = self.conn.execute(
            "SELECT * FROM cascades WHERE session_id = ? AND status = 'open' "
            "ORDER BY created_at DESC, id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return _cascade(row) if row else None

    def finish_cascade(self, cascade_id: str, status: str, result: dict[str, Any]) -> CascadeRecord:
        cascade = self.get_cascade(cascade_id)
        with self.transaction() as c:
            c.execute(
                "UPDATE cascades SET status = ?, ended_at = ?, result = ? WHERE id = ?",
                (status, now(), json.dumps(result), cascade.id),
            )
            _queue(c, cascade.session_id)
        self._files_changed()
        return self.get_cascade(cascade.id)

    # assessments --------------------------------------------------------------------------

    def add_assessment(
        self,
        session_id: str,
        assessment: Assessment,
        decision: Decision,
        *,
        cascade_id: str | None = None,
    ) -> AssessmentRecord:
        """Record one assessment with its decision; writes SQLite, JSON and a reflex log."""
        created = now()
        with self.transaction() as c:
            seq = c.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM assessments WHERE session_id = ?",
                (session_id,),
            ).fetchone()[0]
            row = _assessment_row(session_id, cascade_id, seq, assessment, decision, created)
            cursor = _insert(c, "assessments", row)
            new_row = c.execute(
                "SELECT * FROM assessments WHERE id = ?", (cursor.lastrowid,)
            ).fetchone()
            _queue(c, session_id, assessment_id=cursor.lastrowid)
        self._files_changed()
        return _assessment(new_row)

    def assessments(
        self, *, session_id: str | None = None, cascade_id: str | None = None
    ) -> list[AssessmentRecord]:
        where, args = _where(session_id=session_id, cascade_id=cascade_id)
        rows = self.conn.execute(f"SELECT * FROM assessments{where} ORDER BY session_id, seq", args)
        return [_assessment(r) for r in rows]

    # investigations -----------------------------------------------------------------------

    def add_investigation(
        self,
        session_id: str,
        *,
        cascade_id: str | None = None,
        round: int | None = None,
        note: str = "",
        tool: str | None = None,
        purpose: str | None = None,
        target_vector: str | None = None,
        success: bool | None = None,
        information_gained: str | None = None,
    ) -> InvestigationRecord:
        for field, text in (("note", note), ("information_gained", information_gained or "")):
            check_text_field(text, field)
        row = {
            "session_id": session_id,
            "cascade_id": cascade_id,
            "round": round,
            "note": note,
            "tool": tool,
            "purpose": purpose,
            "target_vector": target_vector,
            "success": success,
            "information_gained": information_gained,
            "created_at": now(),
        }
        with self.transaction() as c:
            cursor = _insert(c, "investigations", row)
            _queue(c, session_id)
        self._files_changed()
        return InvestigationRecord(id=cursor.lastrowid, **row)

    def investigations(
        self, *, session_id: str | None = None, cascade_id: str | None = None
    ) -> list[InvestigationRecord]:
        where, args = _where(session_id=session_id, cascade_id=cascade_id)
        rows = self.conn.execute(f"SELECT * FROM investigations{where} ORDER BY id", args)
        return [_investigation(r) for r in rows]

    # goals --------------------------------------------------------------------------------

    def add_goal(
        self,
        session_id: str,
        description: str,
        *,
        source: str,
        cascade_id: str | None = None,
        parent_id: str | None = None,
        target_vector: str | None = None,
        priority: float = 0.5,
    ) -> GoalRecord:
        stamp = now()
        record = GoalRecord(
            id=new_id("g"),
            session_id=session_id,
            cascade_id=cascade_id,
            parent_id=parent_id,
            description=description,
            target_vector=target_vector,
            priority=priority,
            source=source,
            created_at=stamp,
            updated_at=stamp,
        )
        with self.transaction() as c:
            _insert(c, "goals", record.model_dump())
            _queue(c, session_id)
        self._files_changed()
        return record

    def set_goal_status(self, goal_id: str, status: str) -> GoalRecord:
        with self.transaction() as c:
            updated = c.execute(
                "UPDATE goals SET status = ?, updated_at = ? WHERE id = ?",
                (status, now(), goal_id),
            ).rowcount
            if updated:
                c.execute(
                    "INSERT INTO file_backlog (session_id) SELECT session_id FROM goals "
                    "WHERE id = ?",
                    (goal_id,),
                )
        if not updated:
            raise NotFoundError(f"unknown goal {goal_id!r}")
        self._files_changed()
        return self.get_goal(goal_id)

    def get_goal(self, goal_id: str) -> GoalRecord:
        row = self.conn.execute("SELECT * FROM goals WHERE id = ?", (goal_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"unknown goal {goal_id!r}")
        return GoalRecord(**dict(row))

    def goals(
        self, *, session_id: str | None = None, cascade_id: str | None = None
    ) -> list[GoalRecord]:
        where, args = _where(session_id=session_id, cascade_id=cascade_id)
        rows = self.conn.execute(f"SELECT * FROM goals{where} ORDER BY created_at, id", args)
        return [GoalRecord(**dict(r)) for r in rows]

    # events -------------------------------------------------------------------------------

    def append_event(self, event: Event) -> None:
        """Persist one event (an :class:`noetic.events.EventBus` subscriber)."""
        data = event.model_dump(mode="json")
        with self.transaction() as c:
            c.execute(
                "INSERT INTO events (at, kind, engine, session_id, cascade_id, data) "
                "VALUES (?,?,?,?,?,?)",
                (
                    data["at"],
                    data["kind"],
                    data["engine"],
                    data["session_id"],
                    data["cascade_id"],
                    json.dumps(data["data"]),
                ),
            )
            if event.session_id is not None:
                _queue(c, event.session_id)

    def events(
        self,
        *,
        session_id: str | None = None,
        cascade_id: str | None = None,
        kind: str | None = None,
        after_id: int = 0,
        limit: int = 1000,
    ) -> list[EventRecord]:
        where, args = _where(session_id=session_id, cascade_id=cascade_id, kind=kind)
        where += (" AND" if where else " WHERE") + " id > ?"
        rows = self.conn.execute(
            f"SELECT * FROM events{where} ORDER BY id LIMIT ?", [*args, after_id, limit]
        )
        return [EventRecord(**{**dict(r), "data": json.loads(r["data"])}) for r in rows]

    # export / import / rebuild ------------------------------------------------------------

    def export_session(self, session_id: str) -> dict[str, Any]:
        """The whole session as one JSON-ready document (the session file's format).

        Built straight from the rows (the files are written from it, so it avoids re-validating
        what the store itself wrote); :meth:`import_session` validates it on the way back.
        """
        sid = self.get_session(session_id).id
        rows = self.conn.execute(
            "SELECT * FROM assessments WHERE session_id = ? ORDER BY seq", (sid,)
        ).fetchall()
        events = self.conn.execute(
            "SELECT * FROM events WHERE session_id = ? ORDER BY id", (sid,)
        ).fetchall()
        head, tail = self._export_parts(sid)
        return {
            **head,
            "assessments": [_export_assessment(r) for r in rows],
            **tail,
            "events": [_export_event(e) for e in events],
        }

    def _export_parts(self, sid: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """What a session document holds before its assessments (format, version, session,
        cascades) and between them and its events (investigations, goals)."""
        session = self.get_session(sid)
        cascades = self.conn.execute(
            "SELECT * FROM cascades WHERE session_id = ? ORDER BY created_at, id", (sid,)
        )
        head = {
            "format": EXPORT_FORMAT,
            "version": EXPORT_VERSION,
            "session": session.model_dump(mode="json"),
            "cascades": [_export_cascade(c) for c in cascades],
        }
        tail = {
            "investigations": [
                i.model_dump(mode="json", exclude={"id"})
                for i in self.investigations(session_id=sid)
            ],
            "goals": [g.model_dump(mode="json") for g in self.goals(session_id=sid)],
        }
        return head, tail

    def session_document(self, session_id: str, *, fresh: bool = False) -> bytes:
        """The session's file: :meth:`export_session` as one line of JSON, byte for byte.

        A session's assessments and events never change once written (import ``--replace``
        deletes and re-inserts assessments under new ids), so each is read and encoded once: this
        store keeps them encoded for its last :data:`GROWN_SESSIONS` sessions and reads only the
        rows added since, after checking (one indexed count) that the rows it holds are still
        exactly those in SQLite. So a drain costs the new rows, plus joining the text; ``fresh``
        reads everything again."""
        return self._session_document(session_id, fresh=fresh)[0]

    def _session_document(
        self, session_id: str, *, fresh: bool
    ) -> tuple[bytes, dict[int, dict[str, Any]]]:
        """:meth:`session_document`, and the assessments it read, by row id."""
        grown = self._grown.pop(session_id, None)
        if grown is None or fresh or not grown.intact(self.conn, session_id):
            grown = _Grown()
        head, tail = self._export_parts(session_id)  # NotFoundError for an unknown session
        added = grown.read(self.conn, session_id)
        self._grown[session_id] = grown
        while len(self._grown) > GROWN_SESSIONS:
            self._grown.popitem(last=False)
        return (
            _json(head)[:-1]
            + ',"assessments":['
            + ",".join(grown.assessments)
            + "],"
            + _json(tail)[1:-1]
            + ',"events":['
            + ",".join(grown.events)
            + "]}\n"
        ).encode(), added

    def import_session(self, doc: Any, *, replace: bool = False) -> SessionRecord:
        """Insert an exported session exactly as it was (same ids and timestamps)."""
        parsed = _parse_export(doc)
        sid = parsed["session"].id
        exists = self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone()
        if exists and not replace:
            raise ValidationError(
                f"session {sid} already exists in this store",
                field="session.id",
                value=sid,
                fix="pass --replace to overwrite it",
            )
        with self.transaction() as c:
            if exists:
                for table in ("goals", "investigations", "assessments", "cascades", "sessions"):
                    key = "id" if table == "sessions" else "session_id"
                    c.execute(f"DELETE FROM {table} WHERE {key} = ?", (sid,))
            _insert(c, "sessions", parsed["session"].model_dump())
            for cascade in parsed["cascades"]:
                row = cascade.model_dump()
                row["result"] = json.dumps(row["result"])
                _insert(c, "cascades", row)
            for row in parsed["assessments"]:
                _insert(c, "assessments", row)
            for row in parsed["investigations"]:
                _insert(c, "investigations", row)
            for goal in parsed["goals"]:
                _insert(c, "goals", goal.model_dump())
            if not exists:
                for event in parsed["events"]:
                    c.execute(
                        "INSERT INTO events (at, kind, engine, session_id, cascade_id, data) "
                        "VALUES (?,?,?,?,?,?)",
                        (
                            event["at"],
                            event["kind"],
                            event.get("engine"),
                            event.get("session_id"),
                            event.get("cascade_id"),
                            json.dumps(event.get("data", {})),
                        ),
                    )
            _queue(c, sid, all_reflex=True)
        self._files_changed()
        return parsed["session"]

    def rebuild_files(self) -> dict[str, int]:
        """Rewrite every session JSON and reflex log from SQLite (removing reflex logs in the
        layout before lines); the backlog is then empty. ``reflex_logs`` counts lines, one per
        assessment."""
        self.mirror.stop()
        with files.file_lock(self.home / ".files.lock"):
            ids = [r[0] for r in self.conn.execute("SELECT id FROM sessions ORDER BY created_at")]
            reflex = sum(self.write_session_files_now(sid, all_reflex=True) for sid in ids)
            for legacy in files.legacy_reflex_files(self.home):  # now lines in the logs above
                legacy.unlink(missing_ok=True)
            with self.transaction() as c:
                c.execute("DELETE FROM file_backlog")
        return {"sessions": len(ids), "reflex_logs": reflex}

    def write_session_files_now(
        self, session_id: str, assessment_ids: set[int] | None = None, *, all_reflex: bool = False
    ) -> int:
        """Write the session's JSON document and the reflex-log lines of the given assessments
        (appended), or, with ``all_reflex``, its reflex logs whole; returns the number of lines
        written. The caller holds the files lock; see :mod:`noetic.store.mirror`."""
        try:
            doc, added = self._session_document(session_id, fresh=all_reflex)
        except NotFoundError:  # deleted since it was queued: nothing to mirror
            return 0
        files.atomic_write_bytes(files.session_json_path(self.home, session_id), doc, sync=False)
        if all_reflex:  # the document was read whole
            recs = list(added.values())
        elif assessment_ids:
            recs = [added[i] for i in assessment_ids if i in added]
            missing = [i for i in assessment_ids if i not in added]  # read by an earlier drain
            if missing:
                marks = ",".join("?" for _ in missing)
                recs += [
                    _export_assessment(r)
                    for r in self.conn.execute(
                        f"SELECT * FROM assessments WHERE id IN ({marks})", missing
                    )
                ]
            recs.sort(key=lambda r: r["seq"])
        else:
            return 0
        session = self.get_session(session_id)
        tasks = dict(
            self.conn.execute("SELECT id, task FROM cascades WHERE session_id = ?", (session_id,))
        )
        days: dict[str, list[dict[str, Any]]] = {}
        for rec in recs:
            days.setdefault(rec["created_at"][:10], []).append(rec)
        written = 0
        for day, recs in days.items():
            path = files.reflex_path(self.home, session.ai_id, day, session_id)
            appended = None
            if not all_reflex:
                lines = [
                    (r["seq"], files.json_line(_reflex_frame(r, session.ai_id, tasks)))
                    for r in recs
                ]
                appended = files.extend_lines(path, lines)
            if appended is None:  # asked to, or the log's end was cut short: the whole log
                if not all_reflex:
                    recs = [
                        _export_assessment(r)
                        for r in self.conn.execute(
                            "SELECT * FROM assessments WHERE session_id = ? "
                            "AND substr(created_at, 1, 10) = ? ORDER BY seq",
                            (session_id, day),
                        )
                    ]
                whole = [files.json_line(_reflex_frame(r, session.ai_id, tasks)) for r in recs]
                files.atomic_write_bytes(path, b"".join(whole), sync=False)
                appended = len(recs)
            written += appended
        return written


@dataclass
class _Grown:
    """The parts of one session's document that only grow, each row encoded once: its
    assessments up to ``seq`` (``count`` rows, the largest id ``max_id``) and its events up to
    id ``event_id``."""

    seq: int = 0
    count: int = 0
    max_id: int | None = None
    assessments: list[str] = dataclass_field(default_factory=list)
    event_id: int = 0
    events: list[str] = dataclass_field(default_factory=list)

    def intact(self, conn: sqlite3.Connection, sid: str) -> bool:
        """Whether SQLite still holds exactly the assessments encoded here. Rows are never
        updated and ids never reused (AUTOINCREMENT), so a row deleted or re-inserted changes
        the count or the largest id of those up to ``seq`` (the (session_id, seq) index)."""
        row = conn.execute(
            "SELECT COUNT(*), MAX(id) FROM assessments WHERE session_id = ? AND seq <= ?",
            (sid, self.seq),
        ).fetchone()
        return (row[0], row[1]) == (self.count, self.max_id)

    def read(self, conn: sqlite3.Connection, sid: str) -> dict[int, dict[str, Any]]:
        """Encode the assessments and events added since the last read; returns the
        assessments read, by row id."""
        added: dict[int, dict[str, Any]] = {}
        for row in conn.execute(
            "SELECT * FROM assessments WHERE session_id = ? AND seq > ? ORDER BY seq",
            (sid, self.seq),
        ):
            added[row["id"]] = rec = _export_assessment(row)
            self.assessments.append(_json(rec))
            self.seq = row["seq"]
            self.count += 1
            self.max_id = row["id"] if self.max_id is None else max(self.max_id, row["id"])
        for event in conn.execute(
            "SELECT * FROM events WHERE session_id = ? AND id > ? ORDER BY id",
            (sid, self.event_id),
        ):
            self.events.append(_json(_export_event(event)))
            self.event_id = event["id"]
        return added


def _json(data: Any) -> str:
    """Compact JSON, as the session files hold it (see :func:`files.json_line`)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_OPEN: weakref.WeakSet[Store] = weakref.WeakSet()


@atexit.register
def _close_open_stores() -> None:
    """A process that exits without closing its stores still writes their files."""
    for store in list(_OPEN):
        with contextlib.suppress(Exception):
            store.close()


def _queue(
    c: sqlite3.Connection,
    session_id: str,
    *,
    assessment_id: int | None = None,
    all_reflex: bool = False,
) -> None:
    c.execute(
        "INSERT INTO file_backlog (session_id, assessment_id, all_reflex) VALUES (?, ?, ?)",
        (session_id, assessment_id, int(all_reflex)),
    )


def _connect(path: Path) -> sqlite3.Connection:
    # A store may be opened on one thread and used from others (an MCP server's worker
    # threads); transactions take turns (see Store.transaction).
    conn = sqlite3.connect(
        path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn)
    return conn


def _cannot_write(exc: sqlite3.OperationalError, path: Path) -> bool:
    """Whether opening failed because the database or its directory cannot be written."""
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith("SQLITE_READONLY"):
        return True
    return name.startswith("SQLITE_CANTOPEN") and path.exists() and os.access(path, os.R_OK)


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """The database opened for reading only: ``mode=ro``, or, when SQLite cannot even create
    its shared-memory file beside a WAL database, ``immutable=1``."""
    for query in ("mode=ro", "immutable=1"):
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?{query}",
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
        conn.row_factory = sqlite3.Row
        try:
            needed = pending(conn)
        except sqlite3.OperationalError:
            conn.close()
            continue
        if needed:
            conn.close()
            raise StoreError(
                f"the store database {path} is read-only and needs migrations this Noetic "
                f"would apply: {', '.join(needed)}",
                fix="open it once with write access",
            )
        return conn
    raise StoreError(f"cannot open the store database {path} even for reading")


def _open_fix(exc: sqlite3.DatabaseError) -> str:
    name = getattr(exc, "sqlite_errorname", "")
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")):
        return (
            "the file is damaged: `noetic rebuild --from-files` moves it aside and restores "
            "the sessions from their JSON files"
        )
    return "check that the file and its directory can be read"


def _insert(conn: sqlite3.Connection, table: str, row: dict[str, Any]) -> sqlite3.Cursor:
    cols = ", ".join(f'"{k}"' for k in row)
    marks = ", ".join("?" for _ in row)
    return conn.execute(f"INSERT INTO {table} ({cols}) VALUES ({marks})", list(row.values()))


def _by_id_or_prefix(conn: sqlite3.Connection, table: str, key: str) -> list[sqlite3.Row]:
    """The row whose id is ``key``, else up to two whose id starts with it (both lookups use
    the primary key, so they cost the same however many rows the table holds)."""
    exact = conn.execute(f"SELECT * FROM {table} WHERE id = ?", (key,)).fetchone()
    if exact is not None:
        return [exact]
    return conn.execute(
        f"SELECT * FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
        (key, key + "\U0010ffff"),
    ).fetchall()


def _where(**filters: Any) -> tuple[str, list[Any]]:
    present = {k: v for k, v in filters.items() if v is not None}
    if not present:
        return "", []
    return " WHERE " + " AND ".join(f"{k} = ?" for k in present), list(present.values())


def _cascade(row: sqlite3.Row) -> CascadeRecord:
    return CascadeRecord(**{**dict(row), "result": json.loads(row["result"])})


def _investigation(row: sqlite3.Row) -> InvestigationRecord:
    data = dict(row)
    if data["success"] is not None:
        data["success"] = bool(data["success"])
    return InvestigationRecord(**data)


def _assessment(row: sqlite3.Row) -> AssessmentRecord:
    assessment = Assessment(
        phase=row["phase"],
        vectors={v: row[v] for v in VECTOR_NAMES if row[v] is not None},
        rationales=json.loads(row["rationales"]),
        evidence=json.loads(row["evidence"]),
        recommended_action=row["recommended_action"],
        note=row["note"],
        carried=tuple(json.loads(row["carried"])),
    )
    decision = Decision(
        action=row["action"],
        confidence=row["confidence"],
        threshold=row["threshold"],
        rule=row["rule"],
        reason=row["reason"],
        gaps=tuple(json.loads(row["gaps"])),
    )
    return AssessmentRecord(
        id=row["id"],
        session_id=row["session_id"],
        cascade_id=row["cascade_id"],
        seq=row["seq"],
        assessment=assessment,
        decision=decision,
        created_at=row["created_at"],
    )


_CASCADE_FIELDS: Final = tuple(CascadeRecord.model_fields)


def _export_cascade(row: sqlite3.Row) -> dict[str, Any]:
    """``CascadeRecord.model_dump(mode="json")`` built without re-validation (tested equal)."""
    data = {name: row[name] for name in _CASCADE_FIELDS}
    data["result"] = json.loads(data["result"])
    return data


def _export_event(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "at": row["at"],
        "kind": row["kind"],
        "engine": row["engine"],
        "session_id": row["session_id"],
        "cascade_id": row["cascade_id"],
        "data": json.loads(row["data"]),
    }


def _export_assessment(row: sqlite3.Row) -> dict[str, Any]:
    """The export form of an assessment row: ``AssessmentRecord.model_dump(mode="json")``
    without the row id, built without re-validation (a test checks the two agree)."""
    return {
        "session_id": row["session_id"],
        "cascade_id": row["cascade_id"],
        "seq": row["seq"],
        "assessment": {
            "phase": row["phase"],
            "vectors": {v: row[v] for v in VECTOR_NAMES if row[v] is not None},
            "rationales": json.loads(row["rationales"]),
            "evidence": json.loads(row["evidence"]),
            "recommended_action": row["recommended_action"],
            "note": row["note"],
            "carried": json.loads(row["carried"]),
        },
        "decision": {
            "action": row["action"],
            "confidence": row["confidence"],
            "threshold": row["threshold"],
            "rule": row["rule"],
            "reason": row["reason"],
            "gaps": json.loads(row["gaps"]),
        },
        "created_at": row["created_at"],
    }


def _reflex_frame(rec: dict[str, Any], ai_id: str, tasks: dict[str, str]) -> dict[str, Any]:
    """A reflex log from an assessment in its export form."""
    a = rec["assessment"]
    return {
        "format": "noetic.reflex",
        "ai_id": ai_id,
        "session_id": rec["session_id"],
        "cascade_id": rec["cascade_id"],
        "task": tasks.get(rec["cascade_id"] or ""),
        "seq": rec["seq"],
        "phase": a["phase"],
        "created_at": rec["created_at"],
        "vectors": a["vectors"],
        "rationales": a["rationales"],
        "evidence": a["evidence"],
        "note": a["note"],
        "decision": rec["decision"],
    }


def _parse_export(doc: Any) -> dict[str, Any]:
    from pydantic import ValidationError as PydanticValidationError

    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise ValidationError(
            f"not a Noetic session export (expected format {EXPORT_FORMAT!r})",
            field="format",
            value=doc.get("format") if isinstance(doc, dict) else type(doc).__name__,
        )
    if doc.get("version") != EXPORT_VERSION:
        raise ValidationError(
            f"unsupported export version {doc.get('version')!r} (this Noetic reads "
            f"{EXPORT_VERSION})",
            field="version",
            value=doc.get("version"),
        )
    try:
        session = SessionRecord.model_validate(doc["session"])
        cascades = [CascadeRecord.model_validate(c) for c in doc.get("cascades", [])]
        assessments = [
            AssessmentRecord.model_validate({**a, "id": 0}) for a in doc.get("assessments", [])
        ]
        investigations = [
            InvestigationRecord.model_validate({**i, "id": 0})
            for i in doc.get("investigations", [])
        ]
        goals = [GoalRecord.model_validate(g) for g in doc.get("goals", [])]
        events = [
            EventRecord.model_validate({**e, "id": 0}).model_dump(exclude={"id"})
            for e in doc.get("events", [])
        ]
    except KeyError as exc:
        raise ValidationError(f"session export is missing {exc}", field=str(exc)) from None
    except PydanticValidationError as exc:
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"])
        raise ValidationError(
            f"session export: field {field!r}: {err['msg']}", field=field
        ) from None
    for a in assessments:
        if a.session_id != session.id:
            raise ValidationError(
                "session export: an assessment belongs to another session",
                field="assessments.session_id",
                value=a.session_id,
            )
    return {
        "session": session,
        "cascades": cascades,
        "assessments": [
            _assessment_row(
                a.session_id, a.cascade_id, a.seq, a.assessment, a.decision, a.created_at
            )
            for a in assessments
        ],
        "investigations": [i.model_dump(exclude={"id"}) for i in investigations],
        "goals": goals,
        "events": events,
    }


def _assessment_row(
    session_id: str,
    cascade_id: str | None,
    seq: int,
    a: Assessment,
    d: Decision,
    created_at: str,
) -> dict[str, Any]:
    return {
        "session_id": session_id,
        "cascade_id": cascade_id,
        "seq": seq,
        "phase": a.phase.value,
        **{v: a.vectors.get(v) for v in VECTOR_NAMES},
        "confidence": d.confidence,
        "action": d.action.value,
        "rule": d.rule,
        "reason": d.reason,
        "threshold": d.threshold,
        "gaps": json.dumps(list(d.gaps)),
        "recommended_action": a.recommended_action.value if a.recommended_action else None,
        "rationales": json.dumps(a.rationales),
        "evidence": json.dumps(a.evidence),
        "carried": json.dumps(list(a.carried)),
        "note": a.note,
        "created_at": created_at,
    }
