"""The state one MCP server's tools share: the store and the tracker over it (opened on first
use), the workspace, each client's current session and the embedding thread.

Each client has its own current session (docs/mcp.md, "Each client has its own current
session"): over stdio the client is the process, over streamable HTTP the MCP session. The
store's per-agent current sessions (the CLI's) are neither read nor written here.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from pathlib import Path
from typing import TYPE_CHECKING

from mcp.server.mcpserver import Context

from noetic.errors import InvalidValueError, NoeticError, UsageError

if TYPE_CHECKING:
    from noetic.llm.base import Provider
    from noetic.recall.index import BackgroundEmbedder
    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore as Store


REMEMBERED = 10_000
"""At most this many clients' current sessions (and pending tasks) are kept; the oldest go
first, so a long-running HTTP server's memory stays bounded."""


class ServerState:
    """One MCP server's state (module docstring); ``workspace`` defaults to the directory the
    server was started in, and ``per_connection`` keys the current sessions by MCP session id
    (HTTP) rather than keeping one for the process (stdio). The store and the tracker are opened
    on first use, so a server lists its tools before it has loaded them; the embedding thread
    starts at once unless ``embed_at_start`` is false (then :meth:`start_background`)."""

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
        self.pending_tasks: dict[str, str] = {}
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
                tracker.bus.subscribe(lambda event: self.embedding.on_event(event))
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

    def start_background(self, *, thread: bool = True) -> None:
        """Open the store and the tracker and wake the embedding thread, once; with ``thread``, on a
        thread of their own, so the caller (the event loop, right after answering ``tools/list``) is
        not held up (docs/mcp.md, "Start-up")."""
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
        _remember(self.pending_tasks, session_id, task)

    def _client(self, ctx: Context | None, *, required: bool) -> str | None:
        """Who is calling: "" for the one client of a stdio server (or a direct call, without
        ``ctx``), else the MCP session id; None when an HTTP request carries none."""
        if not self.per_connection:
            return ""
        headers = ctx.headers if ctx is not None else None
        client = headers.get("mcp-session-id") if headers is not None else None
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
