"""Starting an engine run: CASCADE, the observer chain, Nova (and resuming it).

Each operation does, once, what every interface needs before an engine runs: it opens a session
for the run where the engine works in one, resolves the provider (a provider string, a
:class:`~noetic.llm.base.Provider` such as the MCP server's sampling one, or None for
``$NOETIC_PROVIDER`` then ``config.toml``), builds the run context
(:func:`noetic.runtime.context.build_context`) with the workspace's tools and the configured MCP
servers where the engine offers tools, and runs the engine.

They are async and return the engine's own result, typed; what the caller shows while the run
goes is its own (``on_start``, ``on_event``, ``on_text``, ``on_turn``: ``docs/architecture.md``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from noetic.errors import InvalidValueError, UsageError

if TYPE_CHECKING:
    from noetic.cascade.engine import CascadeRun
    from noetic.events import Event
    from noetic.llm.base import Provider
    from noetic.nova.models import NovaRun
    from noetic.nova.turns import Turn
    from noetic.observer.chain import ChainResult
    from noetic.profiles import Profile
    from noetic.runtime.tracker import Tracker

    # A provider string, a provider, a function that gives one (called once the arguments are
    # checked: the MCP server's, which falls back to the client's model by sampling), or None
    # for $NOETIC_PROVIDER, then the store's config.toml.
    ProviderChoice: TypeAlias = str | Provider | Callable[[], Provider] | None

OnEvent = Callable[["Event"], None]
OnText = Callable[[str], None]


@dataclass(frozen=True)
class Started:
    """What a run opened before its engine starts: the session, the agent it was filed under,
    the profile, and the model (its provider string, or the model's name for a provider object).
    """

    session_id: str
    ai_id: str
    profile: Profile
    provider: str


def _given(provider: ProviderChoice) -> str | Provider | None:
    return provider() if callable(provider) else provider


def _model(tracker: Tracker, choice: ProviderChoice) -> tuple[str | Provider, str, str]:
    """``(what build_context takes, the provider as shown, the model's name)``: a string is
    resolved against the store's configuration first, so a missing one fails before a session
    is opened."""
    provider = _given(choice)
    if provider is not None and not isinstance(provider, str):
        return provider, provider.model, provider.model
    from noetic.llm.registry import resolve_provider_spec

    spec = resolve_provider_spec(provider, tracker.store.home)
    return spec, spec, spec.partition(":")[2].rpartition("#")[2]


async def start_cascade(
    tracker: Tracker,
    task: str,
    *,
    provider: ProviderChoice = None,
    profile: str | None = None,
    workspace: Path = Path("."),
    timeout: float = 900,
    max_tool_calls: int = 30,
    remember: bool = True,
    on_start: Callable[[Started], None] | None = None,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
) -> CascadeRun:
    """Run a whole CASCADE on a model in a new session filed under the model's name (made the
    model's current session in the store with ``remember``), with the workspace's tools and
    the configured MCP servers' tools. Async."""
    from noetic.cascade.engine import run_cascade
    from noetic.runtime.context import Limits, build_context
    from noetic.tools.discovery import discover
    from noetic.tools.mcp_servers import configured_servers

    if not task.strip():
        raise InvalidValueError("the task is empty", field="task")
    model, shown, name = _model(tracker, provider)
    session, chosen = tracker.bootstrap(ai_id=name, profile=profile, ai_model=name)
    if remember:
        from noetic.store.current import write_current_session

        write_current_session(tracker.store.home, session.id, name)
    ctx = build_context(
        "cascade",
        tracker=tracker,
        provider=model,
        session_id=session.id,
        profile=chosen,
        limits=Limits(timeout_s=timeout, max_tool_calls=max_tool_calls),
        tools=discover(workspace),
        mcp_servers=configured_servers(tracker.store.home),
        on_text=on_text,
    )
    if on_start is not None:
        on_start(Started(session.id, name, chosen, shown))
    with _watching(tracker, on_event):
        return await run_cascade(ctx, task)


async def start_chain(
    tracker: Tracker,
    query: str,
    *,
    provider: ProviderChoice = None,
    adaptive: bool = False,
    cache: bool = True,
    on_event: OnEvent | None = None,
) -> ChainResult:
    """Run the observer chain on ``query``: stages that stop once the answer has
    crystallized; with ``cache``, a known answer comes from the pattern cache. Async."""
    from noetic.observer.chain import run_chain
    from noetic.observer.crystallization import ObserverSettings
    from noetic.runtime.context import build_context

    if not query.strip():
        raise InvalidValueError("the query is empty", field="query")
    settings = ObserverSettings(adaptive=adaptive)
    try:
        ctx = build_context(
            "observer", tracker=tracker, provider=_given(provider), needs_model=True
        )
    except UsageError as exc:
        if provider is not None:
            raise
        raise UsageError(  # say what the chain needs the model for, not only that it has none
            f"noetic observe needs a model: the observer chain asks one at each of up to "
            f"{settings.max_stages} stages, and {exc.message}",
            fix=exc.fix,
        ) from None
    pattern_cache = None
    if cache:
        from noetic.embeddings import default_embedder
        from noetic.observer.cache import PatternCache

        pattern_cache = PatternCache(ctx.store, default_embedder())
    with _watching(tracker, on_event):
        return await run_chain(ctx, query, settings=settings, cache=pattern_cache)


async def start_nova(
    tracker: Tracker,
    question: str,
    *,
    provider: ProviderChoice = None,
    experts: tuple[str, ...] = (),
    max_rounds: int = 5,
    gate: float | None = None,
    epsilon: float = 0.05,
    context_tokens: int = 3000,
    personas: tuple[str, ...] = (),
    weighting: str = "dce",
    recall: bool = True,
    profile: str | None = None,
    timeout: float = 900,
    on_start: Callable[[Started], None] | None = None,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
    on_turn: Callable[[Turn], None] | None = None,
) -> NovaRun:
    """Deliberate on ``question`` with a panel of personas, in a new session filed under
    ``nova``: the DCE unpacks it, experts (``experts``, else the DCE's choice) analyse, the CHECK
    gate and the CAE's critique decide whether to loop, the DCE recommends. The gate is
    ``gate``, else 1 − the named ``profile``'s threshold, else the seed's. Async."""
    from noetic.nova import NovaSettings, run_nova
    from noetic.runtime.context import Limits, build_context

    if not question.strip():
        raise InvalidValueError("the question is empty", field="question")
    model, shown, name = _model(tracker, provider)
    settings = NovaSettings(
        max_rounds=max_rounds, gate=gate, gate_from_profile=profile is not None, epsilon=epsilon,
        context_tokens=context_tokens,
        experts=experts, personas=personas, weighting=weighting, recall=recall,
        provider=model if isinstance(model, str) else None,  # a resume runs on it again
    )  # fmt: skip
    session, chosen = tracker.bootstrap(ai_id="nova", profile=profile, ai_model=name)
    ctx = build_context(
        "nova",
        tracker=tracker,
        provider=model,
        session_id=session.id,
        profile=chosen,
        limits=Limits(timeout_s=timeout),
        on_text=on_text,
    )
    if on_start is not None:
        on_start(Started(session.id, "nova", chosen, shown))
    with _watching(tracker, on_event):
        return await run_nova(ctx, question, settings=settings, on_turn=on_turn)


async def resume_nova(
    tracker: Tracker,
    run_id: str,
    *,
    input: str | None = None,
    provider: ProviderChoice = None,
    experts: tuple[str, ...] = (),
    timeout: float = 900,
    on_event: OnEvent | None = None,
    on_text: OnText | None = None,
    on_turn: Callable[[Turn], None] | None = None,
) -> NovaRun:
    """Continue an escalated Nova run with a person's ``input``, or a failed or killed one;
    turns that already succeeded are replayed from the store (a completed run needs no
    model). ``run_id`` may be a unique prefix. Without ``provider`` the run goes on on the
    provider it began on; ``experts`` names the panel from now on. Async."""
    from noetic.nova import resume_nova as resume
    from noetic.runtime.context import Limits, build_context
    from noetic.store.nova import get_run

    row = get_run(tracker.store, run_id)
    given = _given(provider)
    if given is None:
        given = row["settings"].get("provider")  # the run's own, else the configured one
    ctx = build_context(
        "nova",
        tracker=tracker,
        provider=given,
        session_id=row["session_id"],
        limits=Limits(timeout_s=timeout),
        needs_model=row["status"] != "completed",
        on_text=on_text,
    )
    with _watching(tracker, on_event):
        return await resume(ctx, row["id"], input=input, on_turn=on_turn, experts=experts)


@contextmanager
def _watching(tracker: Tracker, on_event: OnEvent | None) -> Iterator[None]:
    """``on_event`` subscribed to the tracker's bus for the length of a run."""
    unsubscribe = None if on_event is None else tracker.bus.subscribe(on_event)
    try:
        yield
    finally:
        if unsubscribe is not None:
            unsubscribe()
