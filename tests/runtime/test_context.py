"""The run context: one place builds the recorded provider, the store, the bus and the limits."""

import asyncio

import pytest

from noetic.errors import UsageError
from noetic.events import EventKind
from noetic.llm.base import Request
from noetic.llm.resilience import ResilientProvider
from noetic.llm.scripted import ScriptedProvider
from noetic.runtime.context import Limits, build_context
from noetic.runtime.sentinel import SentinelStop


def test_a_context_without_any_provider_says_how_to_configure_one(store, monkeypatch):
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    ctx = build_context("nova", home=store.home)
    assert ctx.provider is None
    with pytest.raises(UsageError, match="nova needs a model") as err:
        ctx.model  # noqa: B018
    assert "--provider" in err.value.fix
    with pytest.raises(UsageError, match="no model provider configured"):
        build_context("nova", home=store.home, needs_model=True)


def test_the_configured_provider_is_used_and_recorded(store, monkeypatch):
    monkeypatch.setenv("NOETIC_PROVIDER", "ollama:llama3.2")
    ctx = build_context("observer", home=store.home)
    assert isinstance(ctx.provider, ResilientProvider)
    assert (ctx.model.name, ctx.model.model) == ("ollama", "llama3.2")


def test_every_call_through_the_context_is_recorded_with_session_and_task(store):
    session = store.create_session(ai_id="a", profile="balanced")
    ctx = build_context(
        "agent", home=store.home, provider=ScriptedProvider(["hi"]), session_id=session.id
    )
    ctx.start_task("task-1")
    with ctx.scope():
        asyncio.run(ctx.model.complete(Request.of("hello")))
    (call,) = store.conn.execute("SELECT session_id, cascade_id, outcome FROM llm_calls")
    assert tuple(call) == (session.id, "task-1", "ok")
    (event,) = store.events(kind="llm_call")
    assert (event.engine, event.session_id, event.cascade_id) == ("agent", session.id, "task-1")


def test_a_calls_record_and_its_event_are_one_write(store):
    session = store.create_session(ai_id="a", profile="balanced")
    ctx = build_context(
        "agent", home=store.home, provider=ScriptedProvider(["hi"]), session_id=session.id
    )
    store.conn.execute(  # the event's write fails, as on a disk that gave out
        "CREATE TRIGGER refuse BEFORE INSERT ON events WHEN NEW.kind = 'llm_call' "
        "BEGIN SELECT RAISE(ABORT, 'no room for the event'); END"
    )
    with ctx.scope(), pytest.raises(Exception, match="no room for the event"):
        asyncio.run(ctx.model.complete(Request.of("hello")))
    assert store.conn.execute("SELECT COUNT(*) FROM llm_calls").fetchone()[0] == 0


def test_profile_defaults_to_the_sessions_own(store):
    session = store.create_session(ai_id="a", profile="critical_domain")
    ctx = build_context("cascade", home=store.home, session_id=session.id)
    assert ctx.profile is not None and ctx.profile.name == "critical_domain"
    named = build_context("cascade", home=store.home, profile="exploratory")
    assert named.profile is not None and named.profile.name == "exploratory"


def test_emit_stamps_engine_session_and_task(store):
    session = store.create_session(ai_id="a", profile="balanced")
    ctx = build_context("nova", home=store.home, session_id=session.id, task_id="t")
    event = ctx.emit(EventKind.PHASE_ENTERED, {"phase": "UNPACK"})
    assert (event.engine, event.session_id, event.cascade_id) == ("nova", session.id, "t")


def test_the_sentinel_enforces_the_contexts_limits(store):
    ctx = build_context("agent", home=store.home, limits=Limits(max_tool_calls=1))
    ctx.sentinel.tool_call()
    with pytest.raises(SentinelStop, match="tool_limit"):
        ctx.sentinel.tool_call()
    (event,) = store.events(kind="constraint_enforced")
    assert event.engine == "agent" and event.data == {"rule": "tool_limit", "value": 2, "limit": 1}


def test_provider_for_gives_another_recorded_model(store):
    ctx = build_context("nova", home=store.home, provider=ScriptedProvider(["x"]))
    assert ctx.provider_for(None) is ctx.model
    other = ctx.provider_for("ollama:qwen2.5")
    assert isinstance(other, ResilientProvider) and other.model == "qwen2.5"
