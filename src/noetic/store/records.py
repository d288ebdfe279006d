"""What the store returns: plain pydantic records, ready for ``model_dump(mode="json")``.

``written_by`` is the name of the access token whose request created the row (None for every
other write: see :mod:`noetic.store.writer`); a session's export carries it, and an import
keeps it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.assessment import Assessment, Decision


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)


class SessionRecord(_Record):
    id: str
    ai_id: str
    ai_model: str | None = None
    domain: str | None = None
    profile: str
    project: str | None = None
    session_type: str | None = None
    status: str = "active"
    created_at: str
    ended_at: str | None = None
    written_by: str | None = None


class CascadeRecord(_Record):
    id: str
    session_id: str
    task: str
    status: str
    profile: str
    provider: str | None = None
    created_at: str
    ended_at: str | None = None
    result: dict[str, Any] = {}
    written_by: str | None = None


class AssessmentRecord(_Record):
    id: int
    session_id: str
    cascade_id: str | None
    seq: int
    assessment: Assessment
    decision: Decision
    created_at: str
    written_by: str | None = None


class InvestigationRecord(_Record):
    id: int
    session_id: str
    cascade_id: str | None
    round: int | None = None
    note: str = ""
    tool: str | None = None
    purpose: str | None = None
    target_vector: str | None = None
    success: bool | None = None
    information_gained: str | None = None
    created_at: str
    written_by: str | None = None


class GoalRecord(_Record):
    id: str
    session_id: str
    cascade_id: str | None = None
    parent_id: str | None = None
    description: str
    status: str = "open"
    target_vector: str | None = None
    priority: float = 0.5
    source: str
    created_at: str
    updated_at: str
    written_by: str | None = None


class EventRecord(_Record):
    id: int
    at: str
    kind: str
    engine: str | None = None
    session_id: str | None = None
    cascade_id: str | None = None
    data: dict[str, Any] = {}
    written_by: str | None = None
