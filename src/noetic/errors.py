"""Noetic's exception tree. Every error says what failed, the value, and the fix.

::

    NoeticError
    ├── UsageError            the caller's mistake (bad vectors, unknown profile, wrong order)
    │   ├── InvalidValueError a value failed validation; names the field and the value
    │   │   └── LimitExceeded an input over one of the limits in noetic.limits; names it
    │   ├── NotFoundError     an id, profile or file that does not exist
    │   └── WorkflowError     a step out of order (CHECK before PREFLIGHT, POSTFLIGHT twice)
    └── RuntimeFailure        something outside the caller's control
        ├── StoreError        the store could not be read or written
        │   ├── MigrationError
        │   └── StoredIncomplete  stored, but a step after the write failed (exit 6)
        ├── ProviderError     a model call failed (provider, model, status, retryable)
        │   └── StreamInterrupted  a streamed reply broke after text arrived (carries it)
        └── ParseError        a model reply could not be understood (carries the raw text)

Retry decisions look at types and status codes, never at message text. The CLI maps
:class:`UsageError` to exit code 1 and renders ``{"error": ...}`` with ``--json``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar


class NoeticError(Exception):
    """Base of every error Noetic raises on purpose."""

    def __init__(self, message: str, *, fix: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return f"{self.message} ({self.fix})" if self.fix else self.message

    @property
    def type_name(self) -> str:
        """The error's name in JSON and logs: its class's, or the name a renamed class keeps
        (``reported_as``, for that class only, not its subclasses)."""
        cls = type(self)
        return str(cls.__dict__.get("reported_as", cls.__name__))

    def to_dict(self) -> dict[str, str]:
        data = {"type": self.type_name, "message": self.message}
        if self.fix:
            data["fix"] = self.fix
        return data


class UsageError(NoeticError):
    """The caller asked for something that cannot be done as asked."""


class InvalidValueError(UsageError):
    """A value failed validation. ``field`` names it, ``value`` is what was given.

    Reported as ``ValidationError`` (its name before it was renamed to stop clashing with
    pydantic's), so ``{"error": {"type": …}}`` and logs read as they did."""

    reported_as: ClassVar[str] = "ValidationError"

    def __init__(
        self,
        message: str,
        *,
        field: str | None = None,
        value: object = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.field = field
        self.value = value

    @classmethod
    def first_of(cls, exc: Any, source: str, whole: str) -> InvalidValueError:
        """The first error of pydantic's ``ValidationError`` ``exc`` about ``source``: the
        field it names (``whole`` for the document itself), pydantic's message and the input."""
        err = exc.errors()[0]
        field = ".".join(str(p) for p in err["loc"]) or whole
        return cls(
            f"{source}: field {field!r}: {err['msg']} (got {err.get('input')!r})",
            field=field,
            value=err.get("input"),
        )


class LimitExceeded(InvalidValueError):
    """An input is over a limit in :mod:`noetic.limits`: ``limit`` names it, ``maximum`` and
    ``size`` are the bound and what was seen."""

    def __init__(
        self,
        message: str,
        *,
        limit: str,
        maximum: int,
        size: int,
        field: str | None = None,
        fix: str | None = None,
    ) -> None:
        super().__init__(message, field=field, value=size, fix=fix)
        self.limit = limit
        self.maximum = maximum
        self.size = size


class PolicyRefusal(InvalidValueError):
    """The shell gate's policy refused an action (a command, a write); ``rule`` names the rule.
    Reported as ``ValidationError``, as before it had a class of its own."""

    def __init__(self, message: str, *, rule: str, field: str | None = None, value: object = None):
        super().__init__(message, field=field, value=value)
        self.rule = rule


class NotFoundError(UsageError):
    """A session, cascade, profile or file that does not exist."""


class WorkflowError(UsageError):
    """A workflow step taken out of order."""


class RuntimeFailure(NoeticError):
    """A failure outside the caller's control."""


class StoreError(RuntimeFailure):
    """The store could not be opened, read or written."""


class MigrationError(StoreError):
    """A schema migration failed or the database is newer than this Noetic."""


class StoredIncomplete(StoreError):
    """The write was stored, and a step after it failed (the message names both): running the
    command again would store it twice. The CLI exits 6."""


COMMITTED: ContextVar[int] = ContextVar("noetic_committed", default=0)
"""Writes the current command (or MCP tool call) has committed, so a write failing after one
raises :class:`StoredIncomplete` saying what stays, never that nothing was stored."""


@contextmanager
def counting_commits() -> Iterator[None]:
    """Count the commits made inside the block from zero (a command, a tool call)."""
    reset = COMMITTED.set(0)
    try:
        yield
    finally:
        COMMITTED.reset(reset)


def committed() -> None:
    """One more write committed by the current command."""
    COMMITTED.set(COMMITTED.get() + 1)


class ProviderError(RuntimeFailure):
    """A model call failed. ``kind`` is one of ``status`` (an HTTP error, see ``status``),
    ``timeout``, ``connection``, ``config`` or ``error``; ``retry_after`` is the server's
    ``retry-after`` in seconds, when it sent one."""

    def __init__(
        self,
        message: str,
        *,
        provider: str,
        model: str,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
        kind: str = "error",
        fix: str | None = None,
    ) -> None:
        super().__init__(message, fix=fix)
        self.provider = provider
        self.model = model
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after
        self.kind = kind


class StreamInterrupted(ProviderError):
    """A streamed reply broke after some text had been shown; ``received`` is that text. It is
    not retried: the reader has seen the start of a reply another attempt would not repeat."""

    def __init__(self, message: str, *, received: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.received = received


class ParseError(RuntimeFailure):
    """A model reply could not be parsed. ``raw`` keeps the reply for inspection."""

    def __init__(self, message: str, *, raw: str, fix: str | None = None) -> None:
        super().__init__(message, fix=fix)
        self.raw = raw


def error_name(exc: BaseException) -> str:
    """How an exception is named in messages and logs: :attr:`NoeticError.type_name` for
    Noetic's own, the class name for anything else."""
    return exc.type_name if isinstance(exc, NoeticError) else type(exc).__name__


ValidationError = InvalidValueError
"""The former name of :class:`InvalidValueError`, kept for code that imports it."""
