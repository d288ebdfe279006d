"""The growing parts of a session's JSON document, each row encoded once.

A session's assessments and events never change once written, so a store keeps them encoded for
its recent sessions and reads only the rows added since (see
:meth:`noetic.store.base.BaseStore.session_document`).
"""

from __future__ import annotations

from noetic.store.rows import compact_json, export_assessment, export_event

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Grown:
    """The parts of one session's document that only grow, each row encoded once: its
    assessments up to ``seq`` (``count`` rows, the largest id ``max_id``) and its events up to
    id ``event_id``. (A plain class: a dataclass would be compiled as the store loads.)"""

    def __init__(self) -> None:
        self.seq = 0
        self.count = 0
        self.max_id: int | None = None
        self.assessments: list[str] = []
        self.event_id = 0
        self.events: list[str] = []

    def intact(self, conn: Any, sid: str) -> bool:
        """Whether SQLite still holds exactly the assessments encoded here. Rows are never
        updated and ids never reused (AUTOINCREMENT), so a row deleted or re-inserted changes
        the count or the largest id of those up to ``seq`` (the (session_id, seq) index)."""
        row = conn.execute(
            "SELECT COUNT(*), MAX(id) FROM assessments WHERE session_id = ? AND seq <= ?",
            (sid, self.seq),
        ).fetchone()
        return (row[0], row[1]) == (self.count, self.max_id)

    def read(self, conn: Any, sid: str) -> dict[int, dict[str, Any]]:
        """Encode the assessments and events added since the last read; returns the
        assessments read, by row id."""
        added: dict[int, dict[str, Any]] = {}
        for row in conn.execute(
            "SELECT * FROM assessments WHERE session_id = ? AND seq > ? ORDER BY seq",
            (sid, self.seq),
        ):
            added[row["id"]] = rec = export_assessment(row)
            self.assessments.append(compact_json(rec))
            self.seq = row["seq"]
            self.count += 1
            self.max_id = row["id"] if self.max_id is None else max(self.max_id, row["id"])
        for event in conn.execute(
            "SELECT * FROM events WHERE session_id = ? AND id > ? ORDER BY id",
            (sid, self.event_id),
        ):
            self.events.append(compact_json(export_event(event)))
            self.event_id = event["id"]
        return added
