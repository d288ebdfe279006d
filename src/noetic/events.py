"""One typed event stream shared by every engine.

CASCADE, the observer chain, Nova and the agent all emit :class:`Event` values through an
:class:`EventBus`. Subscribers decide what happens to them: the store persists them and the CLI
renders them live. The dashboard is no subscriber: it reads the persisted events back from the
store and polls the store for new ones, so it also shows runs of other processes. Emitting never
fails the emitter: a subscriber that raises is reported once through :mod:`warnings` and the
event still reaches the others.

Every event has the same envelope, whichever engine sent it::

    {"kind": "phase_completed", "at": "2026-…Z", "engine": "cascade",
     "session_id": "…", "cascade_id": "…", "data": {"phase": "CHECK", "ms": 12.5}}

``engine`` names the engine whose run emitted it (``None`` for the agent-driven workflow, where
the agent itself is the engine); ``cascade_id`` is the task's id. ``data`` has one model per kind
(:data:`PAYLOADS`), validated when the event is emitted, so a reader never has to guess its
shape: a field an emitter misspells is a bug that fails at once, not a key a dashboard misses.
``docs/architecture.md`` lists every payload.

The engine is taken from :func:`engine_scope` when the emitter does not name it, so the shared
tracker's assessment and decision events inside a CASCADE run say ``"cascade"`` without the
tracker knowing which engine called it.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from enum import StrEnum

from noetic.plain import Plain, field

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class EventKind(StrEnum):
    SESSION_STARTED = "session_started"
    PHASE_ENTERED = "phase_entered"
    PHASE_COMPLETED = "phase_completed"
    ASSESSMENT_RECORDED = "assessment_recorded"
    DECISION = "decision"
    INVESTIGATION = "investigation"
    TOOL_CALL = "tool_call"
    LLM_CALL = "llm_call"
    CONSTRAINT_ENFORCED = "constraint_enforced"
    OBSERVATION = "observation"
    RUN_FINISHED = "run_finished"
    HOST_EVENT = "host_event"


def utcnow() -> datetime:
    return datetime.now(UTC)


class Payload(Plain):
    """The base of every event's ``data``: frozen, and unknown fields are refused."""

    _closed: ClassVar = True


class SessionStarted(Payload):
    ai_id: str
    profile: str
    ai_model: str | None = None
    domain: str | None = None


class PhaseEntered(Payload):
    """A phase (CASCADE, the agent's nodes) or a stage (observer, Nova turns) begins."""

    phase: str
    stage: int | None = None
    role: str | None = None


class PhaseCompleted(PhaseEntered):
    ms: float


class AssessmentRecorded(Payload):
    phase: str
    seq: int
    confidence: float
    missing: list[str] = field(default_factory=list)
    carried: list[str] = field(default_factory=list)
    p_success: float | None = None
    review: str | None = None


class DecisionMade(Payload):
    action: str
    reason: str = ""
    rule: str | None = None


class InvestigationLogged(Payload):
    round: int
    tool: str | None = None
    note: str = ""
    target_vector: str | None = None


class ToolCalled(Payload):
    tool: str
    success: bool
    round: int | None = None
    ms: float | None = None
    error: str | None = None


class LLMCalled(Payload):
    provider: str
    model: str
    attempt: int
    outcome: str
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    error_class: str | None = None
    status: int | None = None
    tokens_cached: int = 0
    tokens_cache_write: int = 0
    cost_usd: float | None = None
    stop_reason: str | None = None
    note: str | None = None


class ConstraintEnforced(Payload):
    rule: str
    value: float
    limit: float


class Observed(Payload):
    stage: int
    role: str
    confidence: float
    layers: list[str]
    content: str


class RunFinished(Payload):
    status: str
    ms: float | None = None
    summary: dict[str, Any] = field(default_factory=dict)


class HostReported(Payload):
    """Something the agent's host reported that is neither a tool call nor an outcome: Claude
    Code's PermissionDenied (a tool call the user or a rule refused) or StopFailure (the turn
    ended on an error). ``event`` is the host's name for it."""

    host: str
    event: str
    tool: str | None = None
    detail: str = ""


PAYLOADS: dict[EventKind, type[Payload]] = {
    EventKind.SESSION_STARTED: SessionStarted,
    EventKind.PHASE_ENTERED: PhaseEntered,
    EventKind.PHASE_COMPLETED: PhaseCompleted,
    EventKind.ASSESSMENT_RECORDED: AssessmentRecorded,
    EventKind.DECISION: DecisionMade,
    EventKind.INVESTIGATION: InvestigationLogged,
    EventKind.TOOL_CALL: ToolCalled,
    EventKind.LLM_CALL: LLMCalled,
    EventKind.CONSTRAINT_ENFORCED: ConstraintEnforced,
    EventKind.OBSERVATION: Observed,
    EventKind.RUN_FINISHED: RunFinished,
    EventKind.HOST_EVENT: HostReported,
}


class Event(Plain):
    """Something that happened: when, which engine, where (session / task), and the details."""

    kind: EventKind
    at: datetime = field(default_factory=utcnow)
    engine: str | None = None
    session_id: str | None = None
    cascade_id: str | None = None
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def payload(self) -> Payload:
        """``data`` as its kind's typed model."""
        return PAYLOADS[self.kind].model_validate(self.data)


_engine: ContextVar[str | None] = ContextVar("noetic_engine", default=None)


def current_engine() -> str | None:
    """The engine named by the innermost :func:`engine_scope`, if any."""
    return _engine.get()


@contextmanager
def engine_scope(name: str) -> Iterator[None]:
    """Events emitted inside this block (and tasks it starts) name ``name`` as their engine."""
    token = _engine.set(name)
    try:
        yield
    finally:
        _engine.reset(token)


Subscriber = Callable[[Event], None]


class EventBus:
    """Fan events out to subscribers, in subscription order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def emit(
        self,
        kind: EventKind,
        *,
        data: Payload | None = None,
        engine: str | None = None,
        session_id: str | None = None,
        cascade_id: str | None = None,
    ) -> Event:
        """Validate ``data`` against the kind's payload model and publish the event.

        Emitters pass the kind's payload model (:data:`PAYLOADS`); a plain mapping is still
        validated into it, for callers outside Noetic's typed code."""
        model = PAYLOADS[kind]
        if isinstance(data, Payload) and type(data) is not model:
            raise TypeError(
                f"a {kind.value} event carries {model.__name__}, not {type(data).__name__}"
            )
        payload = data if isinstance(data, model) else model.model_validate(data or {})
        fields: dict[str, Any] = {
            "kind": kind,
            "engine": engine or _engine.get(),
            "session_id": session_id,
            "cascade_id": cascade_id,
            "data": payload.model_dump(mode="json"),  # a checked payload's JSON dump
        }
        if type(kind) is EventKind and all(  # what the event's checks would leave as it is
            v is None or type(v) is str for v in (fields["engine"], session_id, cascade_id)
        ):
            event = Event.trusted(**fields)
        else:
            event = Event(**fields)
        self.publish(event)
        return event

    def publish(self, event: Event) -> None:
        for subscriber in list(self._subscribers):
            try:
                subscriber(event)
            except Exception as exc:
                warnings.warn(
                    f"event subscriber {subscriber!r} failed on {event.kind}: {exc!r}",
                    RuntimeWarning,
                    stacklevel=2,
                )


class Timer:
    """Milliseconds since creation; phases report their duration with it."""

    def __init__(self) -> None:
        self._start = time.perf_counter()

    @property
    def ms(self) -> float:
        return round((time.perf_counter() - self._start) * 1000, 3)
