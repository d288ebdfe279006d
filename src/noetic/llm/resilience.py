"""Retries, per-call timeouts and recording, wrapped around any provider.

Retried (by :attr:`ProviderError.retryable` and status codes, never message text): 429, waiting
the server's ``retry-after`` when it sent one, 5xx, connection errors and timeouts; the SDKs'
own retries are off so these are the only ones. Every attempt, failed ones included, becomes an
:class:`LLMCall` recorded with its ``llm_call`` event in one write, priced from ``prices`` (an
unknown price is an unknown cost, never 0). A caller whose next step is a write of its own may
``hold`` the answered calls for it (:meth:`ResilientProvider.flush`), saving a commit a call;
they are never held across a wait nor past a failure.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager, aclosing, nullcontext
from typing import Any

from pydantic import Field

from noetic.errors import ProviderError, StreamInterrupted
from noetic.events import EventBus, EventKind, LLMCalled, current_engine
from noetic.frozen import Frozen
from noetic.llm.base import (
    Completion,
    LLMCall,
    Provider,
    Request,
    UsageTotals,
    ended_without_reply,
    failure,
    stream_completion,
)
from noetic.llm.prices import PriceTable
from noetic.plain import field_names


class RetryPolicy(Frozen):
    max_attempts: int = Field(4, ge=1, le=20)
    base_delay: float = Field(0.5, ge=0)
    max_delay: float = Field(30.0, ge=0)
    timeout: float = Field(120.0, gt=0)

    def backoff(self, attempt: int, rand: float) -> float:
        """Exponential backoff with equal jitter: half fixed, half random."""
        cap = min(self.max_delay, self.base_delay * 2 ** (attempt - 1))
        return float(cap / 2 + rand * cap / 2)


class ResilientProvider:
    """A provider that retries, times out, and records every attempt."""

    def __init__(
        self,
        inner: Provider,
        policy: RetryPolicy | None = None,
        *,
        record: Callable[[LLMCall], None] | None = None,
        bus: EventBus | None = None,
        unit: Callable[[], AbstractContextManager[Any]] = nullcontext,
        session_id: str | None = None,
        cascade_id: str | None = None,
        prices: PriceTable | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rand: Callable[[], float] = random.random,
        hold: bool = False,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.policy = policy or RetryPolicy()
        self._record = record
        self._bus = bus
        self._unit = unit  # the call's row and its event: one write (the store's unit)
        self.session_id = session_id
        self.cascade_id = cascade_id
        self._sleep = sleep
        self._rand = rand
        self.prices = prices
        self.totals = UsageTotals()
        self.hold = hold  # answered calls wait for :meth:`flush` (module docstring)
        self._held: list[LLMCall] = []

    @property
    def native_tools(self) -> bool:
        return bool(getattr(self.inner, "native_tools", False))

    @property
    def native_schema(self) -> bool:
        return bool(getattr(self.inner, "native_schema", False))

    async def complete(self, request: Request) -> Completion:
        self.flush()  # nothing held waits on a model
        policy = self.policy
        for attempt in range(1, policy.max_attempts + 1):
            start = time.perf_counter()
            try:
                result = await asyncio.wait_for(self.inner.complete(request), policy.timeout)
            except (TimeoutError, ProviderError) as exc:
                error = self._as_error(exc)
            else:
                self._log(attempt, start, result=result)
                return result
            await self._wait_or_raise(error, attempt, start)
        raise AssertionError("unreachable: the loop returns or raises")

    async def stream(self, request: Request) -> AsyncIterator[str | Completion]:
        """Text deltas, then the :class:`Completion`; see :func:`noetic.llm.base.stream_completion`.

        The policy's ``timeout`` bounds the wait for each piece, not the whole reply. A stream
        that breaks before any text arrived is retried like a failed call; one that breaks
        after raises :class:`StreamInterrupted` carrying the text that did arrive."""
        self.flush()
        policy = self.policy
        for attempt in range(1, policy.max_attempts + 1):
            start = time.perf_counter()
            received: list[str] = []
            result: Completion | None = None
            try:
                async with aclosing(stream_completion(self.inner, request)) as pieces:
                    while True:
                        try:
                            item = await asyncio.wait_for(anext(pieces), policy.timeout)
                        except StopAsyncIteration:
                            break
                        if isinstance(item, Completion):
                            result = item
                        else:
                            received.append(item)
                            yield item
                if result is None:
                    raise ended_without_reply(self)
            except (TimeoutError, ProviderError) as exc:
                error = self._as_error(exc)
            else:
                self._log(attempt, start, result=result)
                yield result
                return
            if received:
                text = "".join(received)
                error = StreamInterrupted(
                    f"{error.message} (the stream broke after {len(text)} characters of reply)",
                    received=text,
                    provider=self.name,
                    model=self.model,
                    status=error.status,
                    kind=error.kind,
                )
                self._log(attempt, start, error=error)
                raise error
            await self._wait_or_raise(error, attempt, start)

    def _as_error(self, exc: TimeoutError | ProviderError) -> ProviderError:
        """A failed attempt's error: a timeout as a retryable :class:`ProviderError`."""
        if isinstance(exc, ProviderError):
            return exc
        return failure(
            self,
            f"{self.name}:{self.model} gave no answer within {self.policy.timeout:g} s",
            retryable=True,
            kind="timeout",
        )

    async def _wait_or_raise(self, error: ProviderError, attempt: int, start: float) -> None:
        """Log the failed attempt, then sleep before the next one, or raise ``error`` when there
        is none to make."""
        self._log(attempt, start, error=error)
        policy = self.policy
        if not error.retryable or attempt == policy.max_attempts:
            raise error
        delay = policy.backoff(attempt, self._rand())
        if error.retry_after is not None:
            if error.retry_after > policy.max_delay:
                raise failure(
                    self,
                    f"{error.message}; the server asks to wait {error.retry_after:g} s, "
                    f"more than the {policy.max_delay:g} s allowed",
                    status=error.status,
                    retry_after=error.retry_after,
                    kind=error.kind,
                ) from error
            delay = error.retry_after
        await self._sleep(delay)

    def _log(
        self,
        attempt: int,
        start: float,
        *,
        result: Completion | None = None,
        error: ProviderError | None = None,
    ) -> None:
        call = LLMCall(
            provider=self.name,
            model=result.model if result else self.model,
            attempt=attempt,
            outcome="ok" if result else "error",
            tokens_in=result.usage.input_tokens if result else 0,
            tokens_out=result.usage.output_tokens if result else 0,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            error_class=None if result else (error.kind if error else None),
            status=error.status if error else None,
            session_id=self.session_id,
            cascade_id=self.cascade_id,
            tokens_cached=result.usage.cached_tokens if result else 0,
            tokens_cache_write=result.usage.cache_write_tokens if result else 0,
            stop_reason=result.stop_reason if result else None,
            note=result.note if result else (error.message if error else None),
            engine=current_engine(),
            cost_usd=(
                self.prices.cost(self.name, result.model, result.usage)
                if result is not None and self.prices is not None
                else None
            ),
        )
        self.totals = self.totals.add(call)
        self._held.append(call)
        if not (self.hold and result is not None):
            self.flush()

    def take(self) -> list[LLMCall]:
        """The calls held for the caller's next write, no longer held: it writes them
        (:meth:`write`)."""
        held, self._held = self._held, []
        return held

    def flush(self) -> None:
        """Write the calls held (see ``hold``), each row with its event, in one write (joining
        the caller's, when it has one open)."""
        if self._held:
            self.write(self.take())

    def write(self, calls: list[LLMCall]) -> None:
        """Record ``calls``, each row with its ``llm_call`` event, in one write."""
        with self._unit():
            for call in calls:
                if self._record is not None:
                    self._record(call)
                if self._bus is not None:
                    self._bus.emit(
                        EventKind.LLM_CALL,
                        engine=call.engine,
                        session_id=call.session_id,
                        cascade_id=call.cascade_id,
                        data=LLMCalled(**{f: getattr(call, f) for f in field_names(LLMCalled)}),
                    )
