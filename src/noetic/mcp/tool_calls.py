"""How a tool function is called: bound to the server's state (:func:`bind`), its text
arguments checked, run on a worker thread under a timeout, a read-only caller's writes refused,
and Noetic's errors turned into tool errors whose text names the problem and the fix, so the
calling agent can correct itself (:func:`tool_errors`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from functools import partial, wraps
from typing import TYPE_CHECKING, Any, TypeVar, get_type_hints

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from noetic.errors import NoeticError
from noetic.mcp.state import ServerState
from noetic.untrusted import check_text_field

if TYPE_CHECKING:
    from noetic.operations.access_tokens import Identity

F = TypeVar("F", bound=Callable[..., Any])


ToolFunction = Callable[..., Awaitable[Any]]


def bind(fn: ToolFunction, noetic: ServerState) -> ToolFunction:
    """``fn(noetic, ...)`` as a tool function without its first argument: it carries the
    signature and the resolved type hints the SDK builds the input schema from, less the
    ``ServerState`` argument."""
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
"""Who is calling, over HTTP with a token (:func:`noetic.mcp.server._identifies`); None over
stdio or without."""


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

    A tool that does not talk to the client runs on a worker thread under :data:`TOOL_TIMEOUT_S`,
    so its blocking work never holds up the event loop, and with it every other client's calls
    (docs/mcp.md, "One client cannot stall another")."""
    on_loop = _talks_to_client(fn)

    @wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            _check_writer(fn.__name__)
            _check_arguments(fn.__name__, kwargs)
            if on_loop:
                return await fn(*args, **kwargs)
            try:
                with anyio.fail_after(TOOL_TIMEOUT_S):
                    return await anyio.to_thread.run_sync(
                        partial(_run_to_end, fn, args, kwargs), abandon_on_cancel=True
                    )
            except TimeoutError:
                raise ToolError(
                    f"{fn.__name__} took longer than {TOOL_TIMEOUT_S:g} s and was abandoned; "
                    "try a smaller request"
                ) from None
        except NoeticError as exc:
            raise ToolError(str(exc)) from exc

    return wrapper  # type: ignore[return-value]
