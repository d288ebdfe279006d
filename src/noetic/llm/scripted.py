"""``ScriptedProvider``: a deterministic stand-in for a model, for tests and demos only.

It is never a default and never chosen by a provider string in production paths. Give it a
list of replies (consumed in order) or a function of the request; every request is kept in
``calls``. Running out of replies raises :class:`ScriptExhausted` naming how many were given,
so a test that makes an unexpected extra call fails loudly. A reply may also be an exception
instance, which is raised instead of answering (to script provider failures), a
:class:`ToolCall` or a list of them (the model calling tools; see :func:`calling`), or a whole
:class:`Completion`.

Tool calls are checked as a real adapter checks them: a call to a tool the request did not offer
comes back with :attr:`ToolCall.error` set, and scripting a tool call for a request that offered
no tools at all raises, since no model could make it. ``native_tools=False`` makes the provider
one without native tool calls, for testing an engine's JSON-object path.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from noetic.errors import ProviderError
from noetic.llm.base import Completion, Request, ToolCall, Usage, failure, parse_tool_call

Reply = str | BaseException | ToolCall | Sequence[ToolCall] | Completion


def calling(*calls: tuple[str, dict[str, Any] | str] | ToolCall, text: str = "") -> Completion:
    """A scripted reply in which the model calls tools: ``calling(("read_file", {"path": "a"}),
    ("grep", {"pattern": "x"}))``; ids are ``call_1``, ``call_2``… unless given. Arguments given
    as a string are parsed as the JSON text a model sent (``'{"path": '`` scripts a malformed
    call)."""
    made = tuple(
        c if isinstance(c, ToolCall) else parse_tool_call(f"call_{i}", c[0], c[1], ())
        for i, c in enumerate(calls, 1)
    )
    return Completion(
        text=text,
        tool_calls=made,
        stop_reason="tool_use" if made else "end",
        model="scripted",
        provider="scripted",
    )


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
        native_tools: bool = True,
    ) -> None:
        self.model = model
        self.native_tools = native_tools
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
        if request.tools and not self.native_tools:
            raise failure(
                self,
                f"request {len(self.calls)} offers tools to a provider without native tool calls",
                kind="unsupported",
            )
        if isinstance(reply, ToolCall):
            reply = calling(reply)
        elif not isinstance(reply, str | Completion):
            reply = calling(*reply)
        if isinstance(reply, str):
            reply = Completion(text=reply, model=self.model, provider=self.name)
        if reply.tool_calls and not request.tools:
            raise failure(
                self,
                f"the script answers request {len(self.calls)} with tool calls, but the "
                "request offered no tools",
            )
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        return reply.model_copy(
            update={
                "usage": Usage(input_tokens=prompt_words, output_tokens=len(reply.text.split())),
                "model": self.model,
                "provider": self.name,
                "tool_calls": tuple(
                    c if c.error else parse_tool_call(c.id, c.name, c.arguments, request.tools)
                    for c in reply.tool_calls
                ),
            }
        )
