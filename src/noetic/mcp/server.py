"""The MCP server: one store, one tracker, the seed's tools, the resources and the prompt.

Tool calls are function calls inside this process; every tool is a thin call into the operation
the matching CLI command calls (:mod:`noetic.operations`). Noetic's errors come back as tool
errors whose text names the problem and the fix, so the calling agent can correct itself.

Each client has its own current session, set by its ``bootstrap_session`` and used by every
tool called without a ``session_id``. Over stdio the client is the process (one client per
server); over streamable HTTP it is the MCP session (the ``Mcp-Session-Id`` the transport
assigned at initialize), so clients of one server never act on each other's session. The
store's per-agent current sessions (the CLI's) are neither read nor written here.
"""

from __future__ import annotations

import asyncio
import atexit
import inspect
import threading
import weakref
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from functools import partial, wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from noetic.errors import InvalidValueError, NoeticError, UsageError
from noetic.mcp import guidance
from noetic.mcp.sdk import plain_logging
from noetic.untrusted import check_text_field

if TYPE_CHECKING:
    from mcp.server.context import ServerMiddleware, ServerRequestContext
    from mcp.server.mcpserver.tools import Tool

    from noetic.events import Event
    from noetic.llm.base import Provider
    from noetic.operations.access_tokens import Identity
    from noetic.recall.index import BackgroundEmbedder
    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore as Store

F = TypeVar("F", bound=Callable[..., Any])


SESSION_HEADER = "mcp-session-id"
REMEMBERED = 10_000
"""At most this many clients' current sessions (and pending tasks) are kept; the oldest go
first, so a long-running HTTP server's memory stays bounded."""


class ServerState:
    """One MCP server's state, which every tool shares: the store under ``home``, the tracker
    over it, the workspace the built-in tools may read (the directory the server was started
    in), and each client's current session (``per_connection``: keyed by the MCP session id,
    for HTTP; otherwise one for the process, for stdio).

    The store and the tracker are opened on first use, so a server lists its tools before it
    has loaded them. Finished tasks are embedded for recall on a thread of its own
    (:attr:`embedding`), started at once unless ``embed_at_start`` is false; then
    :meth:`start_background` starts it."""

    def __init__(
        self,
        home: Path,
        workspace: Path | None = None,
        *,
        per_connection: bool = False,
        embed_at_start: bool = True,
    ) -> None:
        self.home = home
        self.workspace = (workspace or Path.cwd()).resolve()
        self.per_connection = per_connection
        self._current: dict[str, str] = {}
        self._pending_tasks: dict[str, str] = {}
        self._lock = threading.RLock()
        self._store: Store | None = None
        self._tracker: Tracker | None = None
        # finished tasks are embedded on a thread of its own; at start it embeds what is
        # pending (a changed embedder, an older store) and loads the embedder and the index
        self._embedding: BackgroundEmbedder | None = None
        self._started = False
        self._start_thread: threading.Thread | None = None
        if embed_at_start:
            self.start_background(thread=False)

    @property
    def store(self) -> Store:
        """The store, opened on first use (its files follow a moment after each write)."""
        with self._lock:
            if self._store is None:
                from noetic.store import open_store

                self._store = open_store(self.home, create=True, background=True)
            return self._store

    @property
    def tracker(self) -> Tracker:
        """The tracker over :attr:`store`, made on first use."""
        with self._lock:
            if self._tracker is None:
                from noetic.runtime.opening import tracker_over

                tracker = tracker_over(self.store)
                tracker.bus.subscribe(self._on_event)
                self._tracker = tracker
            return self._tracker

    @property
    def embedding(self) -> BackgroundEmbedder:
        """The embedding thread's owner, made on first use (importing recall's index, and with
        it numpy, is left out of the server's start)."""
        with self._lock:
            if self._embedding is None:
                from noetic.recall.index import BackgroundEmbedder

                self._embedding = BackgroundEmbedder(self.store, progress=_embedding_progress)
            return self._embedding

    def _on_event(self, event: Event) -> None:
        self.embedding.on_event(event)

    def start_background(self, *, thread: bool = True) -> None:
        """Open the store and the tracker and wake the embedding thread, once: it embeds what
        is pending and loads the embedder and the index. With ``thread``, the imports and the
        opening happen on a thread of their own, so the caller (the event loop, right after
        answering ``tools/list``) is not held up; a store that cannot be opened is reported on
        stderr there, and again to each tool that needs it."""
        with self._lock:
            if self._started:
                return
            self._started = True
        _STARTED.add(self)
        if not thread:
            _ = self.tracker
            self.embedding.wake()
            return

        def start() -> None:
            try:
                _ = self.tracker
            except NoeticError as exc:
                import sys

                print(f"noetic: {exc}", file=sys.stderr, flush=True)
                return
            self.embedding.wake()

        self._start_thread = threading.Thread(target=start, name="noetic-start", daemon=True)
        self._start_thread.start()

    def stop_background(self) -> None:
        """Let the start thread finish and stop the embedding thread (after the batch or the
        loading it is in), so that neither is inside an extension module's code when the
        interpreter shuts down, which can crash it. Called at exit."""
        if self._start_thread is not None:
            self._start_thread.join()
        if self._embedding is not None:
            self._embedding.stop()

    def session_id(self, given: str | None, ctx: Context | None) -> str:
        """The session a tool acts on: the one given, else this client's current session."""
        if given:
            return self.store.get_session(given).id
        remembered = self._current.get(self._client(ctx, required=True) or "")
        if remembered is None:
            raise InvalidValueError(
                "no session_id given and this client has no current session",
                fix="call bootstrap_session first, or pass the session_id it returned",
            )
        return self.store.get_session(remembered).id

    def current(self, ctx: Context | None) -> str | None:
        """This client's current session, if it has one."""
        client = self._client(ctx, required=False)
        return None if client is None else self._current.get(client)

    def set_current(self, ctx: Context | None, session_id: str) -> None:
        """Make ``session_id`` this client's current session (and nobody else's)."""
        client = self._client(ctx, required=False)
        if client is not None:
            _remember(self._current, client, session_id)

    def remember_task(self, session_id: str, task: str) -> None:
        """The task of the session's latest ``execute_preflight``, for a submission without one."""
        _remember(self._pending_tasks, session_id, task)

    def pending_task(self, session_id: str) -> str | None:
        return self._pending_tasks.get(session_id)

    def forget_task(self, session_id: str) -> None:
        self._pending_tasks.pop(session_id, None)

    def _client(self, ctx: Context | None, *, required: bool) -> str | None:
        """Who is calling: "" for the one client of a stdio server (or a direct call, without
        ``ctx``), else the MCP session id; None when an HTTP request carries none."""
        if not self.per_connection:
            return ""
        headers = ctx.headers if ctx is not None else None
        client = headers.get(SESSION_HEADER) if headers is not None else None
        if client is None and required:
            raise InvalidValueError(
                "no session_id given, and this connection has no MCP session to keep a "
                "current session in (stateless HTTP)",
                field="session_id",
                fix="pass the session_id that bootstrap_session returned",
            )
        return client

    def recorded(self, provider: Provider, *, session_id: str | None = None) -> Provider:
        """``provider`` retried and recorded like every model call."""
        from noetic.runtime.context import recorded_provider

        return recorded_provider(provider, self.tracker, session_id=session_id)

    def provider(self, spec: str | None, ctx: Context) -> Provider:
        """The provider named, else the configured one, else the client's model by sampling."""
        from noetic.llm.registry import parse_provider, resolve_provider_spec
        from noetic.llm.sampling import SamplingProvider

        try:
            configured = resolve_provider_spec(spec, self.home)
        except InvalidValueError:  # a config file that does not parse: say so, don't sample
            raise
        except UsageError:  # nothing given, nothing configured
            configured = None
        if configured is not None:
            return parse_provider(configured)
        fix = "pass provider='ollama:llama3.2' (or another), or set NOETIC_PROVIDER"
        caps = ctx.client_capabilities
        if caps is None or caps.sampling is None:
            raise InvalidValueError(
                "no provider configured and this client does not support MCP sampling",
                field="provider",
                fix=fix,
            )
        if not ctx.session.can_send_request:
            raise InvalidValueError(
                f"this connection (protocol {ctx.protocol_version}) cannot carry sampling "
                "requests mid-call",
                field="provider",
                fix="connect with the initialize handshake (protocol 2025-11-25 or earlier), "
                f"or {fix}",
            )
        params = ctx.session.client_params
        client = params.client_info.name if params is not None else "client"
        return SamplingProvider(ctx.session, model=client, related_request_id=ctx.request_id)


Noetic = ServerState
"""The class's former name, kept for code that imported it."""

ToolFunction = Callable[..., Awaitable[Any]]


def bind(fn: ToolFunction, noetic: ServerState) -> ToolFunction:
    """``fn(noetic, ...)`` as a tool function without its first argument.

    The SDK builds the tool's input schema from the signature and the resolved type hints, so
    the bound function carries both, less the ``ServerState`` argument; a tool stays a
    module-level function that a test can call directly with a ``ServerState`` of its own.
    """
    signature = inspect.signature(fn)
    hints = get_type_hints(fn, include_extras=True)
    first, *rest = signature.parameters.values()
    params = [p.replace(annotation=hints.get(p.name, p.annotation)) for p in rest]

    async def bound(*args: Any, **kwargs: Any) -> Any:
        return await fn(noetic, *args, **kwargs)

    bound.__name__ = bound.__qualname__ = fn.__name__
    bound.__doc__ = fn.__doc__
    bound.__module__ = fn.__module__
    bound.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=params, return_annotation=hints.get("return", signature.return_annotation)
    )
    bound.__annotations__ = {k: v for k, v in hints.items() if k != first.name}
    return bound


_STARTED: weakref.WeakSet[ServerState] = weakref.WeakSet()


@atexit.register
def _stop_background() -> None:
    """At exit, before the interpreter shuts down: every server's background threads stop."""
    for noetic in list(_STARTED):
        noetic.stop_background()


def _embedding_progress(done: int, total: int, batch: int = 64) -> None:
    """A re-embed at start (more than one batch pending) shows its progress on stderr, every
    tenth of the way; a task or a few finishing say nothing."""
    if total <= batch:
        return
    if done == total or done * 10 // total != max(done - batch, 0) * 10 // total:
        import sys

        print(f"noetic: embedding finished tasks for recall: {done:,}/{total:,}",
              file=sys.stderr, flush=True)  # fmt: skip


def _remember(memory: dict[str, str], key: str, value: str) -> None:
    memory.pop(key, None)  # re-inserted last: the most recently used is kept longest
    memory[key] = value
    while len(memory) > REMEMBERED:
        del memory[next(iter(memory))]


TOOL_TIMEOUT_S = 120.0
"""How long a tool that does local work (no model call) may take before its caller gets an error.
Tools that call a model run under their own budgets (``create_cascade``'s ``timeout``)."""


def _talks_to_client(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` talks to the client mid-call (sampling): it requires the request
    :class:`Context` and must run on the event loop. Tools whose ``ctx`` is optional
    (``Context | None``) only read who is calling, which a worker thread can do."""
    return any(
        p.annotation in (Context, "Context") for p in inspect.signature(fn).parameters.values()
    )


def _check_arguments(name: str, kwargs: dict[str, Any]) -> None:
    """Every text in the arguments is valid and within ``text_chars`` (walked without
    recursion, so a deeply nested value cannot exhaust the stack)."""
    pending: list[tuple[str, Any]] = list(kwargs.items())
    while pending:
        where, value = pending.pop()
        if isinstance(value, str):
            check_text_field(value, where)
        elif isinstance(value, dict):
            pending.extend((f"{where}.{k}", v) for k, v in value.items())
            pending.extend((f"{where} key", k) for k in value)
        elif isinstance(value, list | tuple):
            pending.extend((f"{where}[{i}]", v) for i, v in enumerate(value))


WRITES = frozenset(
    {
        "bootstrap_session",
        "submit_preflight_assessment",
        "submit_check_assessment",
        "submit_postflight_assessment",
        "record_outcome",
        "execute_cli_command",
        "query_ai",
        "generate_goals",
        "create_cascade",
        "observe",
        "nova_process",
    }
)
"""The tools that write to the store (``query_ai`` records its model call); a read-only
token may call every other one."""

CALLER: ContextVar[Identity | None] = ContextVar("noetic_caller", default=None)
"""Who is calling, over HTTP with a token (:func:`_identifies`); None over stdio or without."""


def _check_writer(name: str) -> None:
    who = CALLER.get()
    if who is not None and who.read_only and name in WRITES:
        raise ToolError(
            f"{name} writes to the store and {who.label} is read-only; the read tools "
            "(get_session_summary, get_calibration_report, …) work with it, and writing "
            "needs a token made without --read-only"
        )


def _run_to_end(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    from noetic.errors import counting_commits

    with counting_commits():  # the call's own writes (a write failing after one says so)
        result = fn(*args, **kwargs)
        return asyncio.run(result) if inspect.iscoroutine(result) else result


def tool_errors(fn: F) -> F:
    """Noetic's errors become tool errors the calling agent can read and act on.

    Text arguments are checked first (:func:`noetic.untrusted.check_text_field`). A tool that
    does not talk to the client runs on a worker thread under :data:`TOOL_TIMEOUT_S`, so its
    blocking work (the store, the CLI bridge, recall and its embeddings, files) never holds up
    the event loop, and with it every other client's calls; past the timeout the caller gets
    an error and the server goes on (the abandoned thread finishes in the background)."""
    on_loop = _talks_to_client(fn)

    @wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            _check_writer(fn.__name__)
            _check_arguments(fn.__name__, kwargs)
            if on_loop:
                return await fn(*args, **kwargs)
            timeout = TOOL_TIMEOUT_S
            try:
                with anyio.fail_after(timeout):
                    return await anyio.to_thread.run_sync(
                        partial(_run_to_end, fn, args, kwargs), abandon_on_cancel=True
                    )
            except TimeoutError:
                raise ToolError(
                    f"{fn.__name__} took longer than {timeout:g} s and was abandoned; "
                    "try a smaller request"
                ) from None
        except NoeticError as exc:
            raise ToolError(str(exc)) from exc

    return wrapper  # type: ignore[return-value]


def build_server(
    home: Path, workspace: Path | None = None, *, per_connection: bool = False
) -> MCPServer:
    """An MCP server over the store at ``home``; built-in tools read ``workspace`` (default:
    the working directory at start). ``per_connection``: each MCP session (HTTP) has its own
    current session; otherwise the process is the one client (stdio).

    The tools are listed from the cached tool list when it is current (:mod:`~noetic.mcp.
    tool_cache`), each built the SDK's way on its first call; otherwise they are built now and
    the list is cached for the next start. The embedding thread starts once the server has
    answered its first request after ``initialize``, so it does not slow the start."""
    from noetic.mcp.resources import register_resources

    noetic = ServerState(home, workspace, per_connection=per_connection, embed_at_start=False)
    from noetic import __version__

    with plain_logging():
        server = MCPServer(
            "noetic",
            version=__version__,
            instructions=guidance.INTRODUCTION + "\n\n" + guidance.workflow_guidance(),
            log_level="WARNING",  # tool errors go back to the client; stderr keeps what is wrong
            tools=listed_tools(noetic),
            middleware=[_identifies, _starts_background(noetic)],
        )
    register_resources(server, noetic)
    return server


def listed_tools(noetic: ServerState) -> list[Tool]:
    """The server's tools: from the cached list when it is current, else built (and cached)."""
    from noetic.mcp import tool_cache

    key = tool_cache.cache_key()
    cached = tool_cache.load(key)
    if cached is not None:
        return [
            tool_cache.DeferredTool.listed(entry, partial(_build_tool, noetic, entry["name"]))
            for entry in cached
        ]
    from noetic.mcp.tools import build_tools

    tools = build_tools(noetic)
    tool_cache.save(key, [tool_cache.describe(t) for t in tools])
    return tools


def _build_tool(noetic: ServerState, name: str) -> Tool:
    from noetic.mcp.tools import build_tool

    return build_tool(noetic, name)


_HANDSHAKE = frozenset({"initialize", "server/discover", "ping"})


def _starts_background(noetic: ServerState) -> ServerMiddleware[Any]:
    """Middleware: after the first request other than the handshake (``initialize``, or
    ``server/discover`` from 2026-07-28 on) and ``ping`` has been answered (for a client
    starting up, ``tools/list``), the embedding thread starts."""

    async def middleware(
        ctx: ServerRequestContext[Any, Any],
        call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[Any]],
    ) -> Any:
        result = await call_next(ctx)
        if ctx.request_id is not None and ctx.method not in _HANDSHAKE:
            noetic.start_background()
        return result

    return middleware


async def _identifies(
    ctx: ServerRequestContext[Any, Any],
    call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[Any]],
) -> Any:
    """Middleware: a request that came over HTTP with a token (the bearer check put its
    identity in the ASGI scope) runs as that caller, its writes recording the token's name
    (:mod:`noetic.store.writer`); :func:`tool_errors` refuses a read-only caller's writes. The
    transport hands the message to the server's own task, so the identity is carried here from
    the request rather than inherited."""
    scope = getattr(ctx.request, "scope", None)
    who = scope.get("noetic.identity") if isinstance(scope, dict) else None
    if who is None:
        return await call_next(ctx)
    from noetic.store.writer import writing_as

    reset = CALLER.set(who)
    try:
        with writing_as(who.name):
            return await call_next(ctx)
    finally:
        CALLER.reset(reset)
