"""What both store backends share about rows: records built from them, a session's export form
(the JSON document and reflex-log lines), and an export validated back into rows.

Pure functions of a row (anything indexable by column name: :class:`sqlite3.Row`, or the
PostgreSQL store's rows), so the dialects differ only in how they read and write.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime

from noetic.errors import InvalidValueError
from noetic.plain import field_names
from noetic.store.records import (
    AssessmentRecord,
    CascadeRecord,
    EventRecord,
    GoalRecord,
    InvestigationRecord,
    SessionRecord,
)
from noetic.vector_names import VECTOR_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Sequence
    from typing import Any, Final

    from noetic.assessment import Assessment, Decision

    Row = Any  # a row indexable by column name

EXPORT_FORMAT: Final = "noetic.session"
EXPORT_VERSION: Final = 1


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def new_id(prefix: str) -> str:
    # the first half of a random UUID (version 4, so its 13th digit is 4), without the uuid
    # module (which loads platform)
    head = bytearray(os.urandom(8))
    head[6] = (head[6] & 0x0F) | 0x40
    return f"{prefix}_{head.hex()}"


def where(*more: tuple[str, Sequence[Any]], **equal: Any) -> tuple[str, list[Any]]:
    """`` WHERE`` each column of ``equal`` whose value is not None is equal to it and each
    condition of ``more`` (with its arguments) holds ("" when none is), and the arguments."""
    parts = [(f"{k} = ?", [v]) for k, v in equal.items() if v is not None] + list(more)
    if not parts:
        return "", []
    return " WHERE " + " AND ".join(p for p, _ in parts), [a for _, args in parts for a in args]


def update_sql(
    table: str,
    fields: dict[str, Any],
    allowed: Collection[str],
    encoded: Collection[str] = (),
    **always: Any,
) -> tuple[str, list[Any]]:
    """``UPDATE table SET`` the ``fields`` (each one of ``allowed``, those in ``encoded`` as
    JSON) and the columns ``always`` set, for the caller's ``WHERE``, and the values."""
    unknown = set(fields) - set(allowed)
    if unknown:
        raise ValueError(f"{table} has no settable column {sorted(unknown)}")
    values = {k: json.dumps(v) if k in encoded else v for k, v in fields.items()} | always
    return f"UPDATE {table} SET " + ", ".join(f"{k} = ?" for k in values), list(values.values())


def compact_json(data: Any) -> str:
    """Compact JSON, as the session files hold it (see :func:`files.json_line`)."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def cascade_record(row: Row) -> CascadeRecord:
    return CascadeRecord(**{**dict(row), "result": json.loads(row["result"])})


def investigation_record(row: Row) -> InvestigationRecord:
    data = dict(row)
    if data["success"] is not None:
        data["success"] = bool(data["success"])
    return InvestigationRecord(**data)


def assessment_record(row: Row) -> AssessmentRecord:
    from noetic.assessment import Assessment, Decision

    exported = export_assessment(row)
    assessment = Assessment(**exported["assessment"])
    return _record(row, assessment, Decision(**exported["decision"]))


_RECORDED: Final = ("id", "session_id", "cascade_id", "seq", "created_at", "written_by")


def _record(row: Row, assessment: Assessment, decision: Decision) -> AssessmentRecord:
    columns = {name: row[name] for name in _RECORDED}
    return AssessmentRecord(**columns, assessment=assessment, decision=decision)


def recorded_assessment(row: Row, assessment: Assessment, decision: Decision) -> AssessmentRecord:
    """The record of an assessment just inserted as ``row``: built from the values given, which
    were checked when they were made, when reading the row back would give them again (the
    vectors in their canonical order, every number a float); else read from ``row``."""
    vectors = assessment.vectors
    numbers = (*vectors.values(), assessment.p_success, decision.confidence, decision.threshold)
    if list(vectors) != [v for v in VECTOR_NAMES if v in vectors] or any(
        type(n) is not float for n in numbers if n is not None
    ):
        return assessment_record(row)
    return _record(row, assessment, decision)


_CASCADE_FIELDS: Final = field_names(CascadeRecord)


def export_cascade(row: Row) -> dict[str, Any]:
    """``CascadeRecord.model_dump(mode="json")`` built without re-validation (tested equal)."""
    data = {name: row[name] for name in _CASCADE_FIELDS}
    data["result"] = json.loads(data["result"])
    return data


_EVENT_FIELDS: Final = field_names(EventRecord)[1:]  # without the row id


def export_event(row: Row) -> dict[str, Any]:
    data = {name: row[name] for name in _EVENT_FIELDS}
    data["data"] = json.loads(data["data"])
    return data


def export_assessment(row: Row) -> dict[str, Any]:
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
            "p_success": row["p_success"],
            "review": row["review"],
        },
        "decision": {
            "action": row["action"],
            "confidence": row["confidence"],
            "threshold": row["threshold"],
            "rule": row["rule"],
            "reason": row["reason"],
            "gaps": json.loads(row["gaps"]),
            **({"calibrated": json.loads(row["calibrated"])} if row["calibrated"] else {}),
        },
        "created_at": row["created_at"],
        "written_by": row["written_by"],
    }


def reflex_frame(rec: dict[str, Any], ai_id: str, tasks: dict[str, str]) -> dict[str, Any]:
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
        **{name: a[name] for name in ("vectors", "rationales", "evidence", "note", "p_success")},
        "decision": rec["decision"],
    }


def parse_export(doc: Any) -> dict[str, Any]:
    from pydantic import ValidationError

    from noetic.cached import first_error
    from noetic.events import EventKind

    if not isinstance(doc, dict) or doc.get("format") != EXPORT_FORMAT:
        raise InvalidValueError(
            f"not a Noetic session export (expected format {EXPORT_FORMAT!r})",
            field="format",
            value=doc.get("format") if isinstance(doc, dict) else type(doc).__name__,
        )
    if doc.get("version") != EXPORT_VERSION:
        raise InvalidValueError(
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
        raise InvalidValueError(f"session export is missing {exc}", field=str(exc)) from None
    except ValidationError as exc:
        field, message = first_error(exc)
        text = f"session export: field {field!r}: {message}"
        raise InvalidValueError(text, field=field) from None
    known = {k.value for k in EventKind}
    for i, e in enumerate(events):
        if e["kind"] not in known:
            raise InvalidValueError(
                f"session export: event {i} has the unknown kind {str(e['kind'])[:60]!r}; "
                f"known kinds: {', '.join(sorted(known))}",
                field=f"events.{i}.kind",
                value=str(e["kind"])[:60],
            )
    for a in assessments:
        if a.session_id != session.id:
            raise InvalidValueError(
                "session export: an assessment belongs to another session",
                field="assessments.session_id",
                value=a.session_id,
            )
    return {
        "session": session,
        "cascades": cascades,
        "assessments": [
            {
                **assessment_row(
                    a.session_id, a.cascade_id, a.seq, a.assessment, a.decision, a.created_at
                ),
                "written_by": a.written_by,
            }
            for a in assessments
        ],
        "investigations": [i.model_dump(exclude={"id"}) for i in investigations],
        "goals": goals,
        "events": events,
    }


def assessment_row(
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
        "calibrated": json.dumps(d.calibrated.model_dump()) if d.calibrated else None,
        "recommended_action": a.recommended_action.value if a.recommended_action else None,
        "rationales": json.dumps(a.rationales),
        "evidence": json.dumps(a.evidence),
        "carried": json.dumps(list(a.carried)),
        "note": a.note,
        "p_success": a.p_success,
        "review": a.review.value if a.review else None,
        "created_at": created_at,
    }
