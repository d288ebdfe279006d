"""The run context: everything an engine needs, built in one place.

Every engine takes a :class:`RunContext` and nothing else from the outside world: the recorded,
resilient provider, the store, the event bus and the tracker over them, the session and task,
the profile, the limits and the Sentinel that enforces them, and the tools on offer.
:func:`build_context` makes one from CLI options, the MCP server's state or Python arguments,
so the wiring (resolve the provider string, retry and record every call, subscribe the store to
the bus) is written once (``docs/architecture.md`` shows it in use).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager, AsyncExitStack, nullcontext
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import Field

from noetic.errors import InvalidValueError, UsageError
from noetic.events import Event, EventBus, EventKind, Payload, engine_scope
from noetic.llm.base import Provider, UsageTotals
from noetic.profiles import Profile
from noetic.runtime.opening import open_tracker
from noetic.runtime.sentinel import Sentinel, SentinelLimits
from noetic.runtime.tracker import Tracker
from noetic.store.base import BaseStore
from noetic.tools.base import Tool


class Limits(SentinelLimits):
    """What bounds one run: wall-clock time and tool calls (the Sentinel's), engine steps,
    model tokens."""

    max_steps: int = Field(50, ge=1)
    max_tokens: int | None = Field(None, gt=0, description="Token budget for the run's calls.")


@dataclass
class RunContext:
    """One engine run's collaborators. Built by :func:`build_context`; engines only read it."""

    engine: str | None
    tracker: Tracker
    provider: Provider | None = None
    session_id: str | None = None
    task_id: str | None = None
    profile: Profile | None = None
    limits: Limits = field(default_factory=Limits)
    tools: list[Tool] = field(default_factory=list)
    mcp_servers: dict[str, list[str]] = field(default_factory=dict)
    on_text: Callable[[str], None] | None = None
    sentinel: Sentinel = field(init=False)
    _calls_before: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        from noetic.store.llm_calls import last_call_id

        self.sentinel = Sentinel(self.limits, self.emit)
        self._calls_before = last_call_id(self.tracker.store)

    @property
    def store(self) -> BaseStore:
        return self.tracker.store

    @property
    def bus(self) -> EventBus:
        return self.tracker.bus

    @property
    def home(self) -> Path:
        return self.tracker.store.home

    @property
    def model(self) -> Provider:
        """The run's provider; a clear error when the run was built without one."""
        if self.provider is None:
            raise UsageError(
                f"{self.engine or 'this run'} needs a model and none was given",
                fix="pass --provider (e.g. ollama:llama3.2) or set NOETIC_PROVIDER",
            )
        return self.provider

    def usage(self) -> UsageTotals | None:
        """The running total of this context's model calls (None without a recorded model).
        An engine takes it when it starts and reports ``ctx.usage().since(start)`` in its run
        summary: calls, tokens, cost."""
        return getattr(self.provider, "totals", None)

    def usage_since(self, start: UsageTotals | None) -> UsageTotals | None:
        """The calls made since ``start`` (a value of :meth:`usage`)."""
        now = self.usage()
        return None if now is None or start is None else now.since(start)

    def scope(self) -> AbstractContextManager[None]:
        """Run the engine inside this: every event emitted meanwhile (the tracker's, the
        provider's) names the engine."""
        return engine_scope(self.engine) if self.engine else nullcontext()

    def emit(self, kind: EventKind, data: Payload) -> Event:
        """Emit an event stamped with this run's engine, session and task."""
        return self.bus.emit(
            kind,
            data=data,
            engine=self.engine,
            session_id=self.session_id,
            cascade_id=self.task_id,
        )

    def recorded(self, provider: Provider) -> Provider:
        """``provider`` retried and recorded like every model call of this run."""
        return recorded_provider(
            provider, self.tracker, session_id=self.session_id, task_id=self.task_id
        )

    def provider_for(self, spec: str | None) -> Provider:
        """The run's provider, or another model for one part of the run (a persona's own)."""
        if spec is None:
            return self.model
        from noetic.llm.registry import parse_provider

        return self.recorded(parse_provider(spec))

    def start_task(self, task_id: str) -> None:
        """The run has opened its task: later events and model calls carry its id, and the
        run's calls made before it (the PREFLIGHT that opened it) are filed under it too."""
        if self.task_id is None and self.session_id is not None:
            from noetic.store.llm_calls import file_under_task

            file_under_task(self.tracker.store, self.session_id, task_id, self._calls_before)
        self.task_id = task_id
        if self.provider is not None and hasattr(self.provider, "cascade_id"):
            self.provider.cascade_id = task_id

    async def open_tools(self, stack: AsyncExitStack) -> list[Tool]:
        """The run's tools plus those of the configured MCP servers (closed with ``stack``)."""
        if not self.mcp_servers:
            return list(self.tools)
        from noetic.tools.mcp_servers import server_tools

        return [*self.tools, *await server_tools(stack, self.mcp_servers)]


def recorded_provider(
    provider: Provider,
    tracker: Tracker,
    *,
    session_id: str | None = None,
    task_id: str | None = None,
) -> Provider:
    """Wrap ``provider`` with retries, a per-call timeout, the ``llm_calls`` record and events,
    each call priced from the store's ``[prices]`` and the built-in table."""
    from noetic.llm.prices import PriceTable
    from noetic.llm.resilience import ResilientProvider
    from noetic.store.llm_calls import record_llm_call

    if isinstance(provider, ResilientProvider):
        return provider
    return ResilientProvider(
        provider,
        record=partial(record_llm_call, tracker.store),
        bus=tracker.bus,
        unit=tracker.store.unit,
        session_id=session_id,
        cascade_id=task_id,
        prices=PriceTable.from_config(tracker.store.home),
    )


def build_context(
    engine: str | None,
    *,
    tracker: Tracker | None = None,
    home: Path | None = None,
    provider: str | Provider | None = None,
    session_id: str | None = None,
    task_id: str | None = None,
    profile: Profile | str | None = None,
    limits: Limits | None = None,
    tools: list[Tool] | None = None,
    mcp_servers: dict[str, list[str]] | None = None,
    needs_model: bool = False,
    on_text: Callable[[str], None] | None = None,
) -> RunContext:
    """A :class:`RunContext` from whatever the caller has.

    ``tracker`` (the MCP server's, a test's) or ``home`` (a CLI ``--store``) gives the store.
    ``provider`` is a provider string, a :class:`Provider`, or None, which falls back to
    ``$NOETIC_PROVIDER`` and then the store's ``config.toml``. With none of them the context has
    no model (an engine that needs one says so), or, with ``needs_model``, this raises the
    error that names how to configure one.
    ``profile`` defaults to the session's own (with the guardian's corrections).
    ``on_text`` receives model text as it streams where a person waits on it (CASCADE's ACT,
    a persona's turn): engines pass it to :func:`noetic.llm.base.complete_streaming`.
    """
    if tracker is None:
        if home is None:
            raise UsageError("build_context needs a tracker or a store directory")
        tracker = open_tracker(home, create=True)
    model = _resolve(provider, tracker, needs_model)
    if isinstance(profile, str):
        chosen: Profile | None = tracker.registry.get(profile)
    elif profile is None and session_id is not None:
        chosen = tracker.profile_of(tracker.store.get_session(session_id))
    else:
        chosen = profile
    return RunContext(
        engine=engine,
        tracker=tracker,
        provider=(
            recorded_provider(model, tracker, session_id=session_id, task_id=task_id)
            if model is not None
            else None
        ),
        session_id=session_id,
        task_id=task_id,
        profile=chosen,
        limits=limits or Limits(),
        tools=list(tools or []),
        mcp_servers=dict(mcp_servers or {}),
        on_text=on_text,
    )


def _resolve(provider: str | Provider | None, tracker: Tracker, needs_model: bool) -> Any:
    if provider is not None and not isinstance(provider, str):
        return provider
    from noetic.llm.registry import parse_provider, resolve_provider_spec

    try:
        spec = resolve_provider_spec(provider, tracker.store.home)
    except InvalidValueError:  # a config file that does not parse: say so
        raise
    except UsageError:
        if provider is not None or needs_model:
            raise
        return None  # nothing given, nothing configured: a model-less context
    return parse_provider(spec)
