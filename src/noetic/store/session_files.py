"""Writing a session's derived files from its rows: the JSON document whole, the reflex-log
lines appended (or a day's log whole when asked, or when its end was cut short).

The store calls :func:`write` with its files lock held (:mod:`noetic.store.mirror`);
:mod:`noetic.store.derived_files` holds the formats and the atomic writes.
"""

from __future__ import annotations

from noetic.errors import NotFoundError
from noetic.store import derived_files, document
from noetic.store.rows import export_assessment, reflex_frame

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.store.mirror import Mirrored


def write(
    store: Mirrored, session_id: str, assessment_ids: set[int] | None, *, all_reflex: bool
) -> int:
    """The number of reflex-log lines written (see :meth:`BaseStore.write_session_files_now`)."""
    try:
        doc, added, grown = store._session_document(session_id, fresh=all_reflex, recorded=True)
    except NotFoundError:  # deleted since it was queued: nothing to mirror
        return 0
    derived_files.atomic_write_bytes(
        derived_files.session_json_path(store.home, session_id), doc, sync=False
    )
    database = store.database_id()
    if database is not None:  # for the next process's drain: see noetic.store.document
        document.keep(
            derived_files.grown_path(store.home, session_id), session_id, database, grown, doc
        )
    if all_reflex:  # the document was read whole
        recs = list(added.values())
    elif assessment_ids:
        recs = [added[i] for i in assessment_ids if i in added]
        missing = [i for i in assessment_ids if i not in added]  # read by an earlier drain
        if missing:
            recs += _exported(store, f"id IN ({','.join('?' for _ in missing)})", missing)
        recs.sort(key=lambda r: r["seq"])
    else:
        return 0
    session = store.get_session(session_id)
    tasks = dict(
        store.conn.execute("SELECT id, task FROM cascades WHERE session_id = ?", (session_id,))
    )
    days: dict[str, list[dict[str, Any]]] = {}
    for rec in recs:
        days.setdefault(rec["created_at"][:10], []).append(rec)
    written = 0
    for day, recs in days.items():
        path = derived_files.reflex_path(store.home, session.ai_id, day, session_id)
        appended = None
        if not all_reflex:
            lines = [
                (r["seq"], derived_files.json_line(reflex_frame(r, session.ai_id, tasks)))
                for r in recs
            ]
            appended = derived_files.extend_lines(path, lines)
        if appended is None:  # asked to, or the log's end was cut short: the whole log
            if not all_reflex:
                that_day = "session_id = ? AND substr(created_at, 1, 10) = ? ORDER BY seq"
                recs = _exported(store, that_day, (session_id, day))
            whole = [derived_files.json_line(reflex_frame(r, session.ai_id, tasks)) for r in recs]
            derived_files.atomic_write_bytes(path, b"".join(whole), sync=False)
            appended = len(recs)
        written += appended
    return written


def _exported(store: Mirrored, where: str, args: Any) -> list[dict[str, Any]]:
    """The export form of the assessments matching ``where``."""
    rows = store.conn.execute(f"SELECT * FROM assessments WHERE {where}", args)
    return [export_assessment(r) for r in rows]
