"""What a Noetic store is, whatever database holds it: sessions, tasks (cascades), assessments,
investigations, goals and events, a session's export and import, and the session files written
from the rows (see :mod:`noetic.store.mirror`).

A backend (:mod:`noetic.store.sqlite`, :mod:`noetic.store.postgres`) supplies the connection and
the few things its dialect does its own way: opening and closing, the transaction that makes one
logical write, inserting a row and getting its id, finding an id by prefix, and serialising the
writers of one session so its sequence numbers stay contiguous. All SQL here is written once, in
the subset both dialects read (``?`` placeholders; the PostgreSQL connection translates them).
"""

from __future__ import annotations

import atexit
import contextlib
import json
import weakref
from collections import OrderedDict
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

from noetic.errors import InvalidValueError, NotFoundError, StoreError
from noetic.plain import dumped
from noetic.store import derived_files, document, session_files
from noetic.store.document import Grown
from noetic.store.mirror import Mirror, drain
from noetic.store.records import (
    AssessmentRecord,
    CascadeRecord,
    EventRecord,
    GoalRecord,
    InvestigationRecord,
    SessionRecord,
)
from noetic.store.rows import (
    EXPORT_FORMAT,
    EXPORT_VERSION,
    assessment_record,
    assessment_row,
    cascade_record,
    export_assessment,
    export_cascade,
    export_event,
    investigation_record,
    new_id,
    now,
    parse_export,
    where,
)
from noetic.store.writer import WRITER, insert_sql, stamped, writing_as
from noetic.untrusted import check_identifier, check_text_field

TYPE_CHECKING = False
if TYPE_CHECKING:
    import threading
    from collections.abc import Iterator
    from typing import Any, Final

    from noetic.assessment import Assessment, Decision
    from noetic.events import Event
    from noetic.store.rows import Row

GROWN_SESSIONS: Final = 16  # sessions whose documents' growing parts a store keeps encoded


class BaseStore:
    """A store's rows and the JSON and reflex-log files derived from them."""

    home: Path
    conn: Any  # reads: ``execute(sql, args)`` returning rows indexable by name and position
    write_files: bool
    background: bool
    read_only: bool
    mirror: Mirror
    _grown: OrderedDict[str, Grown]
    _writing: threading.RLock
    queues_files: bool = True  # writes mark the session files behind (file_backlog)
    _marked: set[tuple[str, int | None, bool]] | None = None  # by the open write, if it keeps them
    dialect: str = "sqlite"
    _database: str | None = None  # database_id(), once read
    _database_read = False

    @property
    def shown(self) -> str:
        """The store as a person is told it: its directory here, the database for PostgreSQL."""
        return str(self.home)

    def transaction(self) -> AbstractContextManager[Any]:
        """One logical write, committed whole or not at all; yields the connection to use."""
        raise NotImplementedError

    def insert(self, c: Any, table: str, row: dict[str, Any]) -> int | None:
        """Insert ``row``; returns its integer id when the table has one."""
        raise NotImplementedError

    def writing(self) -> bool:
        """Whether this thread has a write open that a new transaction would join."""
        return False

    def unit(self) -> AbstractContextManager[Any]:
        """Several writes that are one: stored together or not at all, where the backend can
        join transactions (SQLite); elsewhere each write inside is its own transaction."""
        return nullcontext()

    def write(self, sql: str, args: Any = ()) -> int:
        """One statement as its own write; how many rows it changed."""
        with self.transaction() as c:
            changed: int = c.execute(sql, args).rowcount
        return changed

    def insert_returning(self, c: Any, table: str, row: dict[str, Any]) -> Row:
        """Insert ``row`` and return it as stored (its id and defaults filled in), in one
        statement."""
        stored: Row = c.execute(*insert_sql(table, row, " RETURNING *")).fetchall()[0]
        return stored

    def _by_id_or_prefix(self, table: str, key: str) -> list[Row]:
        """The row whose id is ``key``, else up to two whose id starts with it. Both lookups use
        the primary key (PostgreSQL compares ids byte by byte, ``COLLATE "C"``, so the range
        is the prefix's there too), so they cost the same however many rows the table holds."""
        exact = self.conn.execute(f"SELECT * FROM {table} WHERE id = ?", (key,)).fetchone()
        if exact is not None:
            return [exact]
        near: list[Row] = self.conn.execute(
            f"SELECT * FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 2",
            (key, key + "\U0010ffff"),
        ).fetchall()
        return near

    def _one(self, table: str, key: str, field: str, fix: str | None = None) -> Row:
        """The row of ``table`` whose id is ``key``, else the only one whose id begins with it:
        an empty key or one that begins two ids is refused, and so is one that finds nothing
        (naming the ``field`` it was given as)."""
        rows = self._by_id_or_prefix(table, key) if key else []
        what = field.removesuffix("_id")
        if len(rows) > 1:
            raise InvalidValueError(
                f"{what} id prefix {key!r} is ambiguous",
                field=field,
                value=key,
                fix="give more characters of the id",
            )
        if not rows:
            raise NotFoundError(f"unknown {what} {key!r}", fix=fix)
        return rows[0]

    def _reader(self) -> BaseStore:
        """Another store on the same database that writes no files (the mirror's thread reads
        through it, so the files never wait for this store's connection)."""
        raise NotImplementedError

    def order_appends(self, c: Any, table: str) -> None:
        """Make the rows appended to ``table`` (``events``, ``recall_vectors``) visible in id
        order, so a reader that asks for the rows after the last id it saw never skips one
        committed later under a smaller id. SQLite's writers already take turns."""

    def _lock_session(self, c: Any, session_id: str) -> None:
        """Serialise the writers of one session's sequence numbers (until the transaction
        ends); a backend whose transactions already exclude each other does nothing."""

    def _queue(
        self,
        c: Any,
        session_id: str,
        *,
        assessment_id: int | None = None,
        all_reflex: bool = False,
    ) -> None:
        """Mark the session's files behind, in the write's own transaction."""
        marked = self._marked  # a mark the same write made already says it all
        if marked is not None:
            key = (session_id, assessment_id, all_reflex)
            if key in marked:
                return
            marked.add(key)
        c.execute(
            "INSERT INTO file_backlog (session_id, assessment_id, all_reflex) VALUES (?, ?, ?)",
            (session_id, assessment_id, int(all_reflex)),
        )

    @contextlib.contextmanager
    def _changing(self, session_id: str) -> Iterator[Any]:
        """A write that changes the session's files: it marks them behind (:meth:`_queue`)."""
        with self.transaction() as c:
            yield c
            self._queue(c, session_id)
        self._files_changed()

    def _no_sessions(self) -> bool:
        return self.conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is None

    def close(self) -> None:
        """Write the files still in the backlog, then close the connection.

        The files are derived from the database, which already holds every committed write: a
        file that cannot be written (a full disk) is a warning on stderr, not a failure of the
        command that committed. The backlog keeps naming it, so the next store closed on this
        directory (or ``noetic rebuild``) writes it."""
        if getattr(self, "_closed", True):
            return
        self._closed = True
        _OPEN.discard(self)
        try:
            self.mirror.stop()
            if self.write_files and not self.read_only:
                try:
                    drain(self)
                except Exception as exc:  # the rows are committed; only their copies lag
                    import logging  # loaded only to warn

                    logging.getLogger("noetic.store").warning(
                        "noetic: the session files in %s could not be written (%s); the "
                        "database holds every write, and the files catch up on the next write "
                        "or with `noetic rebuild`",
                        self.home,
                        exc,
                    )
        finally:
            self._disconnect()

    def _disconnect(self) -> None:
        self.conn.close()

    def _opened(self) -> None:
        """Register an open store, so one nobody closes still writes its files at exit."""
        self._closed = False
        _OPEN.add(self)

    def flush_files(self) -> int:
        """Bring every session file the backlog names up to date now."""
        self.mirror.stop()
        return drain(self)

    def _files_changed(self) -> None:
        if self.write_files and self.background:
            self.mirror.wake()

    def __enter__(self) -> BaseStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # sessions -----------------------------------------------------------------------------

    def create_session(
        self,
        *,
        ai_id: str,
        profile: str,
        ai_model: str | None = None,
        domain: str | None = None,
        project: str | None = None,
        session_type: str | None = None,
    ) -> SessionRecord:
        named = {"ai_id": ai_id, "profile": profile, "ai_model": ai_model, "domain": domain}
        for field, value in {**named, "project": project, "session_type": session_type}.items():
            if value is not None:
                check_identifier(value, field)
        record = SessionRecord(
            id=new_id("s"),
            ai_id=ai_id,
            ai_model=ai_model,
            domain=domain,
            profile=profile,
            project=project,
            session_type=session_type,
            created_at=now(),
            written_by=WRITER.get(),
        )
        with self._changing(record.id) as c:
            self.insert(c, "sessions", record.model_dump())
        return record

    def get_session(self, session_id: str) -> SessionRecord:
        """A session by id or unique id prefix."""
        fix = "`noetic sessions list` shows the sessions"
        return SessionRecord(**dict(self._one("sessions", session_id, "session_id", fix)))

    def end_session(self, session_id: str) -> SessionRecord:
        """Mark a session ended (its tasks stay as they are); ending it again changes nothing."""
        session = self.get_session(session_id)
        if session.status == "ended":
            return session
        with self._changing(session.id) as c:
            c.execute(
                "UPDATE sessions SET status = 'ended', ended_at = ? WHERE id = ?",
                (now(), session.id),
            )
        return self.get_session(session.id)

    def list_sessions(self, *, limit: int = 50, ai_id: str | None = None) -> list[SessionRecord]:
        cond, args = where(ai_id=ai_id or None)
        sql = f"SELECT * FROM sessions{cond} ORDER BY created_at DESC, id DESC LIMIT ?"
        return [SessionRecord(**dict(r)) for r in self.conn.execute(sql, [*args, limit])]

    # cascades -----------------------------------------------------------------------------

    def open_cascade(
        self,
        session_id: str,
        task: str,
        *,
        profile: str,
        provider: str | None = None,
        result: dict[str, Any] | None = None,
    ) -> CascadeRecord:
        check_text_field(task, "task")
        record = CascadeRecord(
            id=new_id("c"),
            session_id=session_id,
            task=task,
            status="open",
            profile=profile,
            provider=provider,
            result=result or {},
            created_at=now(),
            written_by=WRITER.get(),
        )
        with self._changing(session_id) as c:  # the session's document lists its tasks
            row = record.model_dump()
            row["result"] = json.dumps(row["result"])
            self.insert(c, "cascades", row)
        return record

    def get_cascade(self, cascade_id: str) -> CascadeRecord:
        """A task by id or unique id prefix."""
        return cascade_record(self._one("cascades", cascade_id, "cascade_id"))

    def cascades(self, session_id: str) -> list[CascadeRecord]:
        rows = self.conn.execute(
            "SELECT * FROM cascades WHERE session_id = ? ORDER BY created_at, id", (session_id,)
        )
        return [cascade_record(r) for r in rows]

    def open_cascade_of(self, session_id: str) -> CascadeRecord | None:
        """The session's newest cascade that is still open, if any."""
        row = self.conn.execute(
            "SELECT * FROM cascades WHERE session_id = ? AND status = 'open' "
            "ORDER BY created_at DESC, id DESC LIMIT 1",
            (session_id,),
        ).fetchone()
        return cascade_record(row) if row else None

    def finish_cascade(self, cascade_id: str, status: str, result: dict[str, Any]) -> CascadeRecord:
        cascade = self.get_cascade(cascade_id)
        ended, text = now(), json.dumps(result)
        with self._changing(cascade.session_id) as c:
            c.execute(
                "UPDATE cascades SET status = ?, ended_at = ?, result = ? WHERE id = ?",
                (status, ended, text, cascade.id),
            )
        # the row as written, not read back: its result as a read gives it
        return cascade.model_copy(
            update={"status": status, "ended_at": ended, "result": json.loads(text)}
        )

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
        row = assessment_row(session_id, cascade_id, 0, assessment, decision, now())
        del row["seq"]  # the insert takes the next one
        row = stamped("assessments", row)
        cols = ", ".join(f'"{k}"' for k in row)
        marks = ", ".join("?" for _ in row)
        with self.transaction() as c:
            self._lock_session(c, session_id)
            # one statement numbers, inserts and returns the row (after the session's lock,
            # so it reads the numbers committed before it)
            new_row = c.execute(
                f"INSERT INTO assessments ({cols}, seq) VALUES ({marks}, (SELECT "
                "COALESCE(MAX(seq), 0) + 1 FROM assessments WHERE session_id = ?)) RETURNING *",
                [*row.values(), session_id],
            ).fetchall()[0]
            self._queue(c, session_id, assessment_id=new_row["id"])
        self._files_changed()
        from noetic.store.rows import recorded_assessment

        return recorded_assessment(new_row, assessment, decision)

    def assessments(
        self, *, session_id: str | None = None, cascade_id: str | None = None
    ) -> list[AssessmentRecord]:
        cond, args = where(session_id=session_id, cascade_id=cascade_id)
        rows = self.conn.execute(f"SELECT * FROM assessments{cond} ORDER BY session_id, seq", args)
        return [assessment_record(r) for r in rows]

    def outcomes_of(self, cascade_id: str) -> list[dict[str, Any]]:
        """The outcomes recorded for one task, oldest first: id, at, source, score, evidence."""
        rows = self.conn.execute(
            "SELECT id, at, source, score, evidence FROM outcomes WHERE cascade_id = ? "
            "ORDER BY at, id",
            (cascade_id,),
        )
        return [dict(r) for r in rows]

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
        row: dict[str, Any] = {
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
            "written_by": WRITER.get(),
        }
        with self._changing(session_id) as c:
            row_id = self.insert(c, "investigations", row)
        assert row_id is not None  # the table has an integer id
        return InvestigationRecord(id=row_id, **row)

    def investigations(
        self, *, session_id: str | None = None, cascade_id: str | None = None
    ) -> list[InvestigationRecord]:
        cond, args = where(session_id=session_id, cascade_id=cascade_id)
        rows = self.conn.execute(f"SELECT * FROM investigations{cond} ORDER BY id", args)
        return [investigation_record(r) for r in rows]

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
            written_by=WRITER.get(),
        )
        with self._changing(session_id) as c:
            self.insert(c, "goals", record.model_dump())
        return record

    def get_goal(self, goal_id: str) -> GoalRecord:
        row = self.conn.execute("SELECT * FROM goals WHERE id = ?", (goal_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"unknown goal {goal_id!r}")
        return GoalRecord(**dict(row))

    def goals(
        self, *, session_id: str | None = None, cascade_id: str | None = None
    ) -> list[GoalRecord]:
        cond, args = where(session_id=session_id, cascade_id=cascade_id)
        rows = self.conn.execute(f"SELECT * FROM goals{cond} ORDER BY created_at, id", args)
        return [GoalRecord(**dict(r)) for r in rows]

    # events -------------------------------------------------------------------------------

    def append_event(self, event: Event) -> None:
        """Persist one event (an :class:`noetic.events.EventBus` subscriber)."""
        # the event's JSON dump, built from its fields: its data is a payload's JSON dump
        # already (EventBus.emit), dumped again only when it holds what JSON cannot
        try:
            data = json.dumps(event.data)
        except TypeError:
            data = json.dumps(dumped(event.data, "json"))
        row = {
            "kind": dumped(event.kind, "json"),
            "at": dumped(event.at, "json"),
            "engine": event.engine,
            "session_id": event.session_id,
            "cascade_id": event.cascade_id,
            "data": data,
        }
        with self.transaction() as c:
            self.order_appends(c, "events")
            self.insert(c, "events", row)
            if event.session_id is not None:
                self._queue(c, event.session_id)

    def events(
        self,
        *,
        session_id: str | None = None,
        cascade_id: str | None = None,
        kind: str | None = None,
        limit: int = 1000,
    ) -> list[EventRecord]:
        cond, args = where(session_id=session_id, cascade_id=cascade_id, kind=kind)
        rows = self.conn.execute(f"SELECT * FROM events{cond} ORDER BY id LIMIT ?", [*args, limit])
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
            "assessments": [export_assessment(r) for r in rows],
            **tail,
            "events": [export_event(e) for e in events],
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
            "cascades": [export_cascade(c) for c in cascades],
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
        """The session's file: :meth:`export_session` as one line of JSON, byte for byte, built
        from the assessments and events this store keeps encoded for its last
        :data:`GROWN_SESSIONS` sessions (or the last drain recorded: :mod:`noetic.store.document`)
        and the rows added since; ``fresh`` reads everything again."""
        return self._session_document(session_id, fresh=fresh)[0]

    def _session_document(
        self, session_id: str, *, fresh: bool, recorded: bool = False
    ) -> tuple[bytes, dict[int, dict[str, Any]], Grown]:
        """:meth:`session_document`, the assessments it read (by row id), and its growing
        parts; ``recorded``: a store that does not hold them yet starts from the record the last
        drain kept beside the session's file (the caller holds the files lock)."""
        grown = self._grown.pop(session_id, None)
        if grown is None and recorded and not fresh:
            database = self.database_id()
            if database is not None:
                grown = document.restore(
                    derived_files.grown_path(self.home, session_id),
                    derived_files.session_json_path(self.home, session_id),
                    session_id,
                    database,
                )
        if grown is None or fresh or not grown.intact(self.conn, session_id):
            grown = Grown()
        head, tail = self._export_parts(session_id)  # NotFoundError for an unknown session
        added = grown.read(self.conn, session_id)
        self._grown[session_id] = grown
        while len(self._grown) > GROWN_SESSIONS:
            self._grown.popitem(last=False)
        return grown.document(head, tail), added, grown

    def database_id(self) -> str | None:
        """What tells this database from another: when its first migration was applied, to the
        microsecond (a copy of it, a backup, has the same: what it lacks since is caught by the
        counts of :meth:`Grown.intact`); ``None`` if it cannot be read."""
        if not self._database_read:
            try:
                found = self.conn.execute("SELECT MIN(applied_at) FROM schema_migrations")
                first = found.fetchone()
            except Exception:  # no such table: nothing is recorded against this database
                first = None
            self._database = first[0] if first and isinstance(first[0], str) else None
            self._database_read = True
        return self._database

    def import_session(self, doc: Any, *, replace: bool = False) -> SessionRecord:
        """Insert an exported session exactly as it was (same ids, timestamps and writers: a
        row the document names no writer for stays unnamed, whoever imports it)."""
        parsed = parse_export(doc)
        sid = parsed["session"].id
        exists = self.conn.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone()
        if exists and not replace:
            raise InvalidValueError(
                f"session {sid} already exists in this store",
                field="session.id",
                value=sid,
                fix="pass --replace to overwrite it",
            )
        # the rows are the document's, writers included: none is stamped by this import
        with writing_as(None), self.transaction() as c:
            if exists:
                for table in ("goals", "investigations", "assessments", "cascades", "sessions"):
                    key = "id" if table == "sessions" else "session_id"
                    c.execute(f"DELETE FROM {table} WHERE {key} = ?", (sid,))
            self.insert(c, "sessions", parsed["session"].model_dump())
            for cascade in parsed["cascades"]:
                row = cascade.model_dump()
                row["result"] = json.dumps(row["result"])
                self.insert(c, "cascades", row)
            for table in ("assessments", "investigations"):
                for row in parsed[table]:
                    self.insert(c, table, row)
            for goal in parsed["goals"]:
                self.insert(c, "goals", goal.model_dump())
            if not exists:
                self.order_appends(c, "events")
                for event in parsed["events"]:
                    self.insert(c, "events", {**event, "data": json.dumps(event["data"])})
            self._queue(c, sid, all_reflex=True)
        self._files_changed()
        session: SessionRecord = parsed["session"]
        return session

    def rebuild_files(self) -> dict[str, int]:
        """Rewrite every session JSON and reflex log from SQLite (removing reflex logs in the
        layout before lines); the backlog is then empty. ``reflex_logs`` counts lines, one per
        assessment."""
        if self.read_only:
            raise StoreError(
                f"the store {self.home} is read-only: rebuild rewrites its session files and "
                "reflex logs, which cannot be written here",
                fix="run it where the store's directory is writable; the database itself "
                "reads as it is (noetic state, sessions list)",
            )
        self.mirror.stop()
        with derived_files.file_lock(self.home / ".files.lock"):
            ids = [r[0] for r in self.conn.execute("SELECT id FROM sessions ORDER BY created_at")]
            for record in derived_files.grown_records(self.home):  # each written again below
                record.unlink(missing_ok=True)
            reflex = sum(self.write_session_files_now(sid, all_reflex=True) for sid in ids)
            # the old per-assessment logs: now lines in the logs above
            for legacy in derived_files.legacy_reflex_files(self.home):
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
        return session_files.write(self, session_id, assessment_ids, all_reflex=all_reflex)


_OPEN: weakref.WeakSet[BaseStore] = weakref.WeakSet()


@atexit.register
def _close_open_stores() -> None:
    """A process that exits without closing its stores still writes their files."""
    for store in list(_OPEN):
        with contextlib.suppress(Exception):
            store.close()
