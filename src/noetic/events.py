"""One typed event stream shared by every engine.

CASCADE, the observer chain, Nova and the agent all emit :class:`Event` values through an
:class:`EventBus`. Subscribers decide what happens to them: the store persists them, the CLI
renders them live, the dashboard streams them. Emitting never fails the emitter: a subscriber
that raises is reported once through :mod:`warnings` and the event still reaches the others.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


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


def utcnow() -> datetime:
    return datetime.now(UTC)


class Event(BaseModel):
    """Something that happened, with when, where (session / cascade) and the details."""

    model_config = ConfigDict(frozen=True)

    kind: EventKind
    at: datetime = Field(default_factory=utcnow)
    session_id: str | None = None
    cascade_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


Subscriber = Callable[[Event], None]


class EventBus:
    """Fan events out to subscribers, in subscription order."""

    def __init__(self) -> None:
        self._subscribers: list[Subscriber] = []

    def subscribe(self, subscriber: Subscriber) -> Callable[[], None]:
        """Add a subscriber; returns a function that removes it."""
        self._subscribers.append(subscriber)
        return lambda: self._subscribers.remove(subscriber)

    def emit(self, kind: EventKind, **fields: Any) -> Event:
        event = Event(kind=kind, **fields)
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
