"""What the store returns: frozen records (:class:`noetic.plain.Value`s: built, compared and
shown as frozen dataclasses are, without compiling each class as the module loads), so opening
a store and reading its sessions and tasks costs no pydantic.

A record is built from a row the store wrote, so it is not validated again; what comes from
outside (a session's export) is validated at the edge (:func:`validate`, as pydantic validates
a model). A record answers the few questions code asks of a model: ``model_dump`` (the
``mode="json"`` form is what a model's was: nested assessments and decisions as their own
dumps), ``model_copy(update=…)``, ``model_validate``; pydantic models hold records as fields
and dump them the same way.

``written_by`` is the name of the access token whose request created the row (None for every
other write: see :mod:`noetic.store.writer`); a session's export carries it, and an import
keeps it."""

from __future__ import annotations

from collections.abc import Iterable

# pydantic resolves an assessment record's fields here, by these dotted names, whenever a model
# holds one: by then noetic.assessment is imported (whoever made the assessment imported it)
import noetic
from noetic.plain import Value, field, field_names

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    import noetic.assessment

    R = TypeVar("R", bound="_Record")


class _Record(Value):
    """What records share: a model's dump, copy and validation (``repr``, equality and hash are
    a :class:`~noetic.plain.Value`'s, as ``dataclasses`` would generate them)."""

    def model_dump(self, *, mode: str = "python", exclude: Iterable[str] = ()) -> dict[str, Any]:
        """The record's fields as a dict, as pydantic dumps a model: a nested model (an
        assessment, a decision) as its own dump, tuples as lists in ``mode="json"``."""
        left_out = set(exclude)
        return {
            name: _dumped(getattr(self, name), mode)
            for name in field_names(type(self))
            if name not in left_out
        }

    def model_copy(self: R, *, update: dict[str, Any] | None = None) -> R:
        return self.replaced(**(update or {}))

    @classmethod
    def model_validate(cls: type[R], data: Any) -> R:
        return validate(cls, data)


def _dumped(value: Any, mode: str) -> Any:
    dump = getattr(value, "model_dump", None)
    if dump is not None and not isinstance(value, type):
        return dump(mode=mode)
    if isinstance(value, dict):
        return {k: _dumped(v, mode) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_dumped(v, mode) for v in value]
        return items if mode == "json" or isinstance(value, list) else tuple(items)
    return value


def validate(cls: type[R], data: Any) -> R:
    """``data`` validated as the record ``cls`` as pydantic validates a model (the same errors:
    :class:`pydantic.ValidationError`); this imports pydantic."""
    from pydantic import TypeAdapter

    from noetic.assessment import Assessment, Decision  # noqa: F401 (pydantic reads them here)

    return TypeAdapter(cls).validate_python(data)


class SessionRecord(_Record, kw_only=True):
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


class CascadeRecord(_Record, kw_only=True):
    id: str
    session_id: str
    task: str
    status: str
    profile: str
    provider: str | None = None
    created_at: str
    ended_at: str | None = None
    result: dict[str, Any] = field(default_factory=dict)
    written_by: str | None = None


class AssessmentRecord(_Record, kw_only=True):
    id: int
    session_id: str
    cascade_id: str | None
    seq: int
    assessment: noetic.assessment.Assessment
    decision: noetic.assessment.Decision
    created_at: str
    written_by: str | None = None


class InvestigationRecord(_Record, kw_only=True):
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


class GoalRecord(_Record, kw_only=True):
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


class EventRecord(_Record, kw_only=True):
    id: int
    at: str
    kind: str
    engine: str | None = None
    session_id: str | None = None
    cascade_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)
    written_by: str | None = None
