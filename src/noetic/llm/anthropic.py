"""Anthropic's Messages API through the official ``anthropic`` SDK.

Tools, tool calls and their results map onto ``tools``, ``tool_choice``, ``tool_use`` and
``tool_result`` blocks; a ``json_schema`` request is answered through a forced tool (``reply``)
whose input is the reply (``docs/providers.md`` has the table). A system prompt long enough to
be cached is marked ``cache_control: ephemeral`` so the stable prefix is read from Anthropic's
cache at a tenth of the input price; :data:`CACHE_MIN_CHARS` estimates the 1,024-token minimum
generously so no cacheable prefix goes unmarked. A stream that ends before ``message_stop`` is a
retryable connection error, never a short reply.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

from noetic.errors import ProviderError, UsageError
from noetic.llm._http import SdkProvider
from noetic.llm.base import Completion, Message, Request, StopReason, Usage, parse_tool_call
from noetic.llm.structured import NativeSchemaMemory, with_instruction

#: A system prompt (with the tools' definitions) at least this long is marked for caching.
CACHE_MIN_CHARS = 3072

#: The forced tool that carries a structured reply.
REPLY_TOOL = "reply"

_STOP: dict[str, StopReason] = {
    "end_turn": "end",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "stop_sequence": "stop_sequence",
    "refusal": "refusal",
}

#: Endpoints (base URLs) that refused the forced-tool structured reply during this process.
NO_NATIVE_SCHEMA = NativeSchemaMemory("tools")


class AnthropicProvider(SdkProvider):
    """``anthropic:MODEL``. The key comes from ``ANTHROPIC_API_KEY`` unless a client is given.

    The current Messages API (SDK 2.x) takes no sampling temperature, so
    :attr:`Request.temperature` is not sent; the model's default applies.
    """

    name = "anthropic"
    native_tools = True
    native_schema = True

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        base_url: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.model = model

        def connect(sdk: Any) -> Any:
            key = os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise UsageError(
                    "no Anthropic API key",
                    fix="export ANTHROPIC_API_KEY=… (never put keys in code)",
                )
            return sdk.AsyncAnthropic(
                api_key=key, base_url=base_url, max_retries=0, timeout=timeout
            )

        super().__init__("anthropic", client, connect)

    def wire(self, request: Request, *, native_schema: bool) -> dict[str, Any]:
        """The ``messages.create`` arguments for ``request``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [_message(m) for m in request.messages],
        }
        system = request.system
        tools = [
            {"name": t.name, "description": t.description, "input_schema": t.parameters}
            for t in request.tools
        ]
        choice = _choice(request.tool_choice)
        if request.json_schema is not None:
            if native_schema and not request.tools:
                tools = [
                    {
                        "name": REPLY_TOOL,
                        "description": "Give your reply: one object matching the schema.",
                        "input_schema": request.json_schema,
                    }
                ]
                choice = {"type": "tool", "name": REPLY_TOOL}
            else:
                system = with_instruction(system, request.json_schema)
        if system:
            prefix = len(system) + len(json.dumps(tools)) if tools else len(system)
            kwargs["system"] = (
                [{"type": "text", "text": system, "cache_control": {"type": "ephemeral"}}]
                if prefix >= CACHE_MIN_CHARS
                else system
            )
        if tools:
            kwargs["tools"] = tools
        if choice is not None:
            kwargs["tool_choice"] = choice
        return kwargs

    async def _send(
        self, request: Request, send: Callable[[dict[str, Any]], Awaitable[Any]]
    ) -> tuple[Any, bool, str | None]:
        """What ``send`` answers to ``request``'s arguments, whether the schema went natively,
        and the note saying why it did not, when the endpoint refused it."""
        native = request.json_schema is not None and not request.tools
        native = native and NO_NATIVE_SCHEMA.allows(self.endpoint)
        try:
            return await send(self.wire(request, native_schema=native)), native, None
        except ProviderError as exc:
            if not (native and NO_NATIVE_SCHEMA.rejected(exc)):
                raise
            note = NO_NATIVE_SCHEMA.remember(self.endpoint, exc)
            return await send(self.wire(request, native_schema=False)), False, note

    async def complete(self, request: Request) -> Completion:
        start = time.perf_counter()
        reply, native, note = await self._send(request, self._create)
        return self._completion(reply, request, start, native=native, note=note)

    async def stream(self, request: Request) -> AsyncIterator[str | Completion]:
        start = time.perf_counter()
        async with AsyncExitStack() as stack:
            events, native, note = await self._send(
                request, lambda kwargs: self._open(stack, kwargs)
            )
            finished = False
            try:
                async for event in events:
                    if event.type == "text" and event.text:
                        yield event.text
                    elif event.type == "message_stop":
                        finished = True
                reply = await events.get_final_message() if finished else None
            except Exception as exc:
                raise self._broken(exc) from exc
            if reply is None or reply.stop_reason is None:
                raise self._cut_short()
        yield self._completion(reply, request, start, native=native, note=note)

    async def _open(self, stack: AsyncExitStack, kwargs: dict[str, Any]) -> Any:
        return await self._translated(
            stack.enter_async_context(self._client.messages.stream(**kwargs))
        )

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        return await self._translated(self._client.messages.create(**kwargs))

    def _completion(
        self, reply: Any, request: Request, start: float, *, native: bool, note: str | None
    ) -> Completion:
        texts: list[str] = []
        calls = []
        for block in reply.content:
            if block.type == "text":
                texts.append(getattr(block, "text", ""))
            elif block.type == "tool_use":
                if native and block.name == REPLY_TOOL:
                    texts.append(json.dumps(block.input))
                else:
                    calls.append(parse_tool_call(block.id, block.name, block.input, request.tools))
        stop = _STOP.get(reply.stop_reason or "", "other")
        if native and stop == "tool_use" and not calls:
            stop = "end"  # the forced reply tool is the answer, not a call to run
        usage = reply.usage
        structured = (
            None if request.json_schema is None else ("native" if native else "instruction")
        )
        return Completion(
            text="".join(texts),
            usage=Usage(
                input_tokens=(usage.input_tokens or 0)
                + (getattr(usage, "cache_read_input_tokens", 0) or 0)
                + (getattr(usage, "cache_creation_input_tokens", 0) or 0),
                output_tokens=usage.output_tokens or 0,
                cached_tokens=getattr(usage, "cache_read_input_tokens", 0) or 0,
                cache_write_tokens=getattr(usage, "cache_creation_input_tokens", 0) or 0,
            ),
            model=reply.model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            tool_calls=tuple(calls),
            stop_reason=stop,
            structured=structured,
            note=note,
        )


def _message(m: Message) -> dict[str, Any]:
    if not m.tool_calls and not m.tool_results:
        return {"role": m.role, "content": m.content}
    blocks: list[dict[str, Any]] = [
        {
            "type": "tool_result",
            "tool_use_id": r.call_id,
            "content": r.content,
            **({"is_error": True} if r.is_error else {}),
        }
        for r in m.tool_results
    ]
    if m.content:
        blocks.append({"type": "text", "text": m.content})
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls
    ]
    return {"role": m.role, "content": blocks}


def _choice(choice: str | None) -> dict[str, Any] | None:
    if choice is None:
        return None
    if choice in ("auto", "none"):
        return {"type": choice}
    if choice == "required":
        return {"type": "any"}
    return {"type": "tool", "name": choice}
