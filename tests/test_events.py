"""Typed events: one payload model per kind, one envelope for every engine."""

import asyncio

import pytest

from noetic.errors import ValidationError
from noetic.events import PAYLOADS, Event, EventBus, EventKind, PhaseCompleted, engine_scope


def test_every_kind_has_a_payload_model():
    assert set(PAYLOADS) == set(EventKind)


def test_emit_validates_the_payload():
    bus = EventBus()
    event = bus.emit(EventKind.PHASE_COMPLETED, data={"phase": "CHECK", "ms": 12})
    assert event.data == {"phase": "CHECK", "stage": None, "role": None, "ms": 12.0}
    assert isinstance(event.payload, PhaseCompleted) and event.payload.ms == 12.0
    with pytest.raises(ValidationError, match="field 'phse': unknown field") as info:
        bus.emit(EventKind.PHASE_ENTERED, data={"phse": "CHECK"})
    assert info.value.field == "phse"
    with pytest.raises(ValidationError, match="field 'ms': field required"):
        bus.emit(EventKind.PHASE_COMPLETED, data={"phase": "CHECK"})
    with pytest.raises(ValidationError, match=r"field 'ms': must be a number \(got '12.5'\)"):
        bus.emit(EventKind.PHASE_COMPLETED, data={"phase": "CHECK", "ms": "12.5"})


def test_engine_comes_from_the_scope_unless_named():
    bus = EventBus()
    seen: list[Event] = []
    bus.subscribe(seen.append)

    async def inner() -> None:
        bus.emit(EventKind.RUN_FINISHED, data={"status": "ok"})

    with engine_scope("nova"):
        bus.emit(EventKind.RUN_FINISHED, data={"status": "ok"})
        bus.emit(EventKind.RUN_FINISHED, engine="agent", data={"status": "ok"})
        asyncio.run(inner())  # tasks inherit the scope
    bus.emit(EventKind.RUN_FINISHED, data={"status": "ok"})
    assert [e.engine for e in seen] == ["nova", "agent", "nova", None]


def test_a_failing_subscriber_warns_and_others_still_receive():
    bus = EventBus()
    seen: list[Event] = []

    def broken(_: Event) -> None:
        raise RuntimeError("boom")

    bus.subscribe(broken)
    bus.subscribe(seen.append)
    with pytest.warns(RuntimeWarning, match="boom"):
        bus.emit(EventKind.DECISION, data={"action": "PROCEED"})
    assert len(seen) == 1


def test_the_store_keeps_the_envelope(store):
    bus = EventBus()
    bus.subscribe(store.append_event)
    with engine_scope("cascade"):
        bus.emit(EventKind.DECISION, session_id="s1", cascade_id="c1", data={"action": "PROCEED"})
    (stored,) = store.events(session_id="s1")
    assert (stored.kind, stored.engine, stored.cascade_id) == ("decision", "cascade", "c1")
    assert stored.data == {"action": "PROCEED", "reason": "", "rule": None}


def test_an_emitted_event_is_the_event_its_checked_fields_make():
    """An event around a typed payload is built without checking its fields again, and is the
    event construction makes of them; a field of the wrong type is still refused."""
    bus = EventBus()
    payload = PhaseCompleted(phase="CHECK", ms=1.5)
    with engine_scope("eval"):
        event = bus.emit(EventKind.PHASE_COMPLETED, session_id="s1", cascade_id=None, data=payload)
    assert event == Event(
        kind=EventKind.PHASE_COMPLETED, at=event.at, engine="eval", session_id="s1",
        cascade_id=None, data={"phase": "CHECK", "stage": None, "role": None, "ms": 1.5},
    )  # fmt: skip
    assert event.at.tzinfo is not None and isinstance(event.kind, EventKind)
    with pytest.raises(ValidationError, match="field 'session_id': must be text"):
        bus.emit(EventKind.PHASE_COMPLETED, session_id=7, data=payload)


def test_a_payload_of_another_kind_is_refused():
    bus = EventBus()
    with pytest.raises(TypeError, match="phase_entered event carries PhaseEntered"):
        bus.emit(EventKind.PHASE_ENTERED, data=PhaseCompleted(phase="CHECK", ms=1.0))
    event = bus.emit(EventKind.PHASE_COMPLETED, data=PhaseCompleted(phase="CHECK", ms=1.0))
    assert event.data["ms"] == 1.0


@pytest.mark.slow
def test_noetics_own_emitters_pass_typed_payloads():
    """Every ``emit(EventKind.X, …)`` in the package hands over the kind's payload model, never
    a mapping, so a misspelt field is a type error before it is a runtime one."""
    import ast
    from pathlib import Path

    import noetic

    untyped = []
    for path in Path(noetic.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "emit"):
                continue
            given = node.args[1:] + [k.value for k in node.keywords if k.arg == "data"]
            if any(isinstance(arg, ast.Dict) for arg in given):
                untyped.append(f"{path.name}:{node.lineno}")
    assert untyped == []
