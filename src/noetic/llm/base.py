"""The provider contract every engine talks to.

A provider turns a :class:`Request` into a :class:`Completion` with one async method,
``complete``. Everything else (retries, recording, structured output) is layered on top by
functions in this package, so an adapter stays a thin translation of one wire format.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Literal["user", "assistant"]
    content: str


class Request(BaseModel):
    """What is asked of a model."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    system: str | None = None
    max_tokens: int = Field(1024, gt=0)
    temperature: float = Field(0.0, ge=0, le=2)
    json_schema: dict[str, Any] | None = None

    @classmethod
    def of(cls, prompt: str, **kwargs: Any) -> Request:
        """A single-user-message request."""
        return cls(messages=(Message(role="user", content=prompt),), **kwargs)


class Usage(BaseModel):
    model_config = ConfigDict(frozen=True)

    input_tokens: int = 0
    output_tokens: int = 0


class Completion(BaseModel):
    """A model's reply and what it cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    usage: Usage = Usage()
    model: str
    provider: str
    latency_ms: float = 0.0


@runtime_checkable
class Provider(Protocol):
    """Anything with a name, a model and an async ``complete``."""

    name: str
    model: str

    async def complete(self, request: Request) -> Completion: ...


def complete_sync(provider: Provider, request: Request) -> Completion:
    """Run one completion from synchronous code (the CLI edge); not for use inside a loop."""
    return asyncio.run(provider.complete(request))


class LLMCall(BaseModel):
    """One attempt at a model call, as recorded in ``llm_calls`` and emitted as an event."""

    model_config = ConfigDict(frozen=True)

    provider: str
    model: str
    attempt: int
    outcome: Literal["ok", "error"]
    tokens_in: int = 0
    tokens_out: int = 0
    latency_ms: float = 0.0
    error_class: str | None = None
    status: int | None = None
    session_id: str | None = None
    cascade_id: str | None = None
