"""``ScriptedProvider``: a deterministic stand-in for a model, for tests and demos only.

It is never a default and never chosen by a provider string in production paths. Give it a
list of replies (consumed in order) or a function of the request; every request is kept in
``calls``. Running out of replies raises :class:`ScriptExhausted` naming how many were given,
so a test that makes an unexpected extra call fails loudly. A reply may also be an exception
instance, which is raised instead of answering (to script provider failures).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from noetic.errors import ProviderError
from noetic.llm.base import Completion, Request, Usage

Reply = str | BaseException


class ScriptExhausted(ProviderError):
    """The script had no reply left for a request."""


class ScriptedProvider:
    """A test double: replies come from a script, not from a model."""

    name = "scripted"

    def __init__(
        self,
        replies: Iterable[Reply] | Callable[[Request], Reply],
        *,
        model: str = "scripted",
    ) -> None:
        self.model = model
        self.calls: list[Request] = []
        if callable(replies):
            self._fn: Callable[[Request], Reply] | None = replies
            self._queue: list[Reply] = []
        else:
            self._fn = None
            self._queue = list(replies)
        self._given = len(self._queue)

    def enqueue(self, *replies: Reply) -> None:
        self._queue.extend(replies)
        self._given += len(replies)

    @property
    def remaining(self) -> int:
        return len(self._queue)

    async def complete(self, request: Request) -> Completion:
        self.calls.append(request)
        if self._fn is not None:
            reply = self._fn(request)
        elif self._queue:
            reply = self._queue.pop(0)
        else:
            raise ScriptExhausted(
                f"ScriptedProvider ran out of replies after {self._given} "
                f"(request {len(self.calls)})",
                provider=self.name,
                model=self.model,
            )
        if isinstance(reply, BaseException):
            raise reply
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        return Completion(
            text=reply,
            usage=Usage(input_tokens=prompt_words, output_tokens=len(reply.split())),
            model=self.model,
            provider=self.name,
        )
