"""The growing parts of a session's JSON document, each row encoded once, kept across processes.

A session's assessments and events never change once written, so a store keeps them encoded for
its recent sessions and reads only the rows added since (see
:meth:`noetic.store.base.BaseStore.session_document`). So that a fresh process (every CLI command
and hook) need not encode the whole session again, each drain also writes beside the document a
small record of what it holds, ``sessions/.<session_id>.grown`` (:func:`keep`), which the next
process checks and starts from (:func:`restore`). It trusts nothing it has not checked: the
record's own checksum, format and session; the database's identity (when its first migration
was applied); the document's size and checksum; and, as for a store's own memory, that SQLite
still holds exactly the rows encoded (:meth:`Grown.intact`). Any mismatch means the document is
built from SQLite whole; the bytes written are the same either way (``docs/storage.md``).
"""

from __future__ import annotations

import marshal

from noetic.store.derived_files import atomic_write_bytes
from noetic.store.rows import compact_json, export_assessment, export_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

# The record's first bytes: raise the digit when its layout changes (an older record is then
# not read, and the next drain writes the new one).
MAGIC = b"noetic-grown-1\n"
_ASSESSMENTS = b',"assessments":['
_EVENTS = b',"events":['
_END = b"]}\n"


class Grown:
    """The parts of one session's document that only grow, each row encoded once: its
    assessments up to ``seq`` (``count`` rows, the largest id ``max_id``) and its events up to
    id ``event_id`` (``event_count`` rows). ``assessments`` and ``events`` hold the encoded
    rows as UTF-8, one item per row or several joined with commas (as read back from a
    document). (A plain class: a dataclass would be compiled as the store loads.)"""

    def __init__(self) -> None:
        self.seq = 0
        self.count = 0
        self.max_id: int | None = None
        self.assessments: list[bytes] = []
        self.event_id = 0
        self.event_count = 0
        self.events: list[bytes] = []
        # where the last document built put its assessments and events: (start, end) of each
        self.spans = (0, 0, 0, 0)

    def intact(self, conn: Any, sid: str) -> bool:
        """Whether SQLite still holds exactly the assessments and events encoded here. Rows are
        never updated and ids never reused (AUTOINCREMENT; events cannot be deleted either), so
        a row deleted or re-inserted, or another database, changes the count or the largest id
        of those up to ``seq`` (the (session_id, seq) index) or up to ``event_id`` (the
        (session_id, id) index)."""
        row = conn.execute(
            "SELECT (SELECT COUNT(*) FROM assessments WHERE session_id = ? AND seq <= ?), "
            "(SELECT MAX(id) FROM assessments WHERE session_id = ? AND seq <= ?), "
            "(SELECT COUNT(*) FROM events WHERE session_id = ? AND id <= ?), "
            "(SELECT MAX(id) FROM events WHERE session_id = ? AND id <= ?)",
            (sid, self.seq, sid, self.seq, sid, self.event_id, sid, self.event_id),
        ).fetchone()
        return (row[0], row[1], row[2], row[3]) == (
            self.count,
            self.max_id,
            self.event_count,
            self.event_id if self.event_count else None,
        )

    def read(self, conn: Any, sid: str) -> dict[int, dict[str, Any]]:
        """Encode the assessments and events added since the last read; returns the
        assessments read, by row id."""
        added: dict[int, dict[str, Any]] = {}
        for row in conn.execute(
            "SELECT * FROM assessments WHERE session_id = ? AND seq > ? ORDER BY seq",
            (sid, self.seq),
        ):
            added[row["id"]] = rec = export_assessment(row)
            self.assessments.append(compact_json(rec).encode())
            self.seq = row["seq"]
            self.count += 1
            self.max_id = row["id"] if self.max_id is None else max(self.max_id, row["id"])
        for event in conn.execute(
            "SELECT * FROM events WHERE session_id = ? AND id > ? ORDER BY id",
            (sid, self.event_id),
        ):
            self.events.append(compact_json(export_event(event)).encode())
            self.event_id = event["id"]
            self.event_count += 1
        return added

    def document(self, head: dict[str, Any], tail: dict[str, Any]) -> bytes:
        """The session's document: ``head``, the assessments, ``tail``, the events (the export's
        order), as one line of JSON; notes where its assessments and events lie."""
        if len(self.assessments) > 1:  # joined once: the next document joins one item
            self.assessments = [b",".join(self.assessments)]
        if len(self.events) > 1:
            self.events = [b",".join(self.events)]
        start = compact_json(head)[:-1].encode() + _ASSESSMENTS
        assessments = self.assessments[0] if self.assessments else b""
        middle = b"]," + compact_json(tail)[1:-1].encode() + _EVENTS
        events = self.events[0] if self.events else b""
        a_end = len(start) + len(assessments)
        e_start = a_end + len(middle)
        self.spans = (len(start), a_end, e_start, e_start + len(events))
        return b"".join((start, assessments, middle, events, _END))


def keep(path: Path, sid: str, database: str, grown: Grown, document: bytes) -> None:
    """Record at ``path`` what ``document`` (just written) holds of ``grown``, for
    :func:`restore` in the next process; ``database`` names the database it was read from."""
    from binascii import crc32  # zlib's, built in beside marshal; loaded by drains only

    payload = marshal.dumps(
        (
            sid,
            database,
            grown.seq,
            grown.count,
            grown.max_id,
            grown.event_id,
            grown.event_count,
            len(document),
            crc32(document),
            *grown.spans,
        )
    )
    record = MAGIC + crc32(payload).to_bytes(4, "little") + payload
    try:
        atomic_write_bytes(path, record, sync=False)
    except OSError:  # the document is written; the old record no longer matches it
        return


def restore(path: Path, document_path: Path, sid: str, database: str) -> Grown | None:
    """The :class:`Grown` recorded at ``path`` for the document at ``document_path``, or
    ``None`` when either is missing or unreadable, the record is damaged or of another format,
    session or database, or the document is not the one it describes. The caller still checks
    it against SQLite (:meth:`Grown.intact`)."""
    from binascii import crc32

    try:
        raw = path.read_bytes()
        if not raw.startswith(MAGIC):
            return None
        payload = raw[len(MAGIC) + 4 :]
        if crc32(payload).to_bytes(4, "little") != raw[len(MAGIC) : len(MAGIC) + 4]:
            return None
        fields = marshal.loads(payload)
        if not (
            type(fields) is tuple
            and len(fields) == 13
            and fields[:2] == (sid, database)
            and all(type(f) is int for f in fields[2:4] + fields[5:])
            and (fields[4] is None or type(fields[4]) is int)
        ):
            return None
        seq, count, max_id, event_id, event_count, size, checksum, a0, a1, e0, e1 = fields[2:]
        document = document_path.read_bytes()
    except (OSError, ValueError, EOFError, TypeError):
        return None
    if (
        len(document) != size
        or crc32(document) != checksum
        or not (0 < a0 <= a1 < e0 <= e1 == size - len(_END))
        or document[a0 - len(_ASSESSMENTS) : a0] != _ASSESSMENTS
        or document[e0 - len(_EVENTS) : e0] != _EVENTS
        or document[a1 : a1 + 2] != b"],"
        or (a0 == a1) != (count == 0)
        or (e0 == e1) != (event_count == 0)
    ):
        return None
    grown = Grown()
    grown.seq, grown.count, grown.max_id = seq, count, max_id
    grown.event_id, grown.event_count = event_id, event_count
    grown.assessments = [document[a0:a1]] if count else []
    grown.events = [document[e0:e1]] if event_count else []
    return grown
