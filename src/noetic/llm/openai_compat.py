"""OpenAI Chat Completions through the official ``openai`` SDK: OpenAI itself, a local Ollama
(its ``/v1`` endpoint), and any OpenAI-compatible server (vLLM, LM Studio, OpenRouter…).

Tools map onto ``tools``/``tool_choice``/``tool_calls`` and ``role: "tool"`` results; a
``json_schema`` request sends ``response_format``, strict when the schema allows it
(``docs/providers.md`` has the table). An endpoint that refuses ``response_format`` or ignores
it gets the prompt instruction from then on; one that refuses tools (a 400 naming them) stops
being ``native_tools`` for the rest of the process, so engines take their JSON path there. A
stream that ends without a ``finish_reason`` is a retryable connection error, never a short
reply.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import AsyncIterator, Awaitable
from typing import Any

from noetic.errors import ProviderError
from noetic.llm._http import SdkProvider
from noetic.llm.base import Completion, Message, Request, StopReason, Usage, parse_tool_call
from noetic.llm.structured import NativeSchemaMemory, with_instruction

_STOP: dict[str, StopReason] = {
    "stop": "end",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}

#: Endpoints (base URLs) that refused ``response_format`` during this process.
NO_NATIVE_SCHEMA = NativeSchemaMemory("response_format")

#: Endpoints that refused ``tools`` (a 400 naming them): they are no longer ``native_tools``,
#: so engines take their JSON path there for the rest of the process.
NO_NATIVE_TOOLS = NativeSchemaMemory("tool")


class OpenAICompatibleProvider(SdkProvider):
    """One wire format, many hosts: ``name`` says which (``openai``, ``ollama``, …)."""

    native_schema = True

    def __init__(
        self,
        model: str,
        *,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        client: Any = None,
        timeout: float = 120.0,
    ) -> None:
        self.name = name
        self.model = model
        super().__init__(
            "openai",
            client,
            lambda sdk: sdk.AsyncOpenAI(
                api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
            ),
        )

    @property
    def native_tools(self) -> bool:
        """True until this endpoint refuses tools (a server started without tool support)."""
        return NO_NATIVE_TOOLS.allows(self.endpoint)

    def wire(self, request: Request, *, native_schema: bool) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments for ``request``."""
        system = request.system
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
        }
        if request.json_schema is not None:
            if native_schema:
                kwargs["response_format"] = response_format(request.json_schema)
            else:
                system = with_instruction(system, request.json_schema)
        messages: list[dict[str, Any]] = []
        if system:
            messages.append({"role": "system", "content": system})
        for m in request.messages:
            messages += _messages(m)
        kwargs["messages"] = messages
        if request.tools:
            # a ToolSpec's fields are the function's: name, description, parameters
            kwargs["tools"] = [
                {"type": "function", "function": t.model_dump()} for t in request.tools
            ]
        if request.tool_choice in ("auto", "required", "none"):
            kwargs["tool_choice"] = request.tool_choice
        elif request.tool_choice is not None:
            kwargs["tool_choice"] = {"type": "function", "function": {"name": request.tool_choice}}
        return kwargs

    async def _send(self, request: Request, **extra: Any) -> tuple[Any, bool, str | None]:
        """The SDK's answer to ``request``, whether the schema went natively, and the note
        saying why it did not, when an endpoint refused it."""
        native = request.json_schema is not None and NO_NATIVE_SCHEMA.allows(self.endpoint)

        def send(native: bool) -> Awaitable[Any]:
            return self._create({**self.wire(request, native_schema=native), **extra})

        try:
            return await send(native), native, None
        except ProviderError as exc:
            if request.tools and NO_NATIVE_TOOLS.rejected(exc):
                NO_NATIVE_TOOLS.remember(self.endpoint, exc)
                raise ProviderError(
                    f"{self.name}:{self.model} does not take tools here: {exc.message}",
                    provider=self.name,
                    model=self.model,
                    status=exc.status,
                    kind="unsupported",
                    fix="start the server with tool calling on (vLLM: --enable-auto-tool-choice "
                    "--tool-call-parser …), or use a model that supports tools",
                ) from exc
            if not (native and NO_NATIVE_SCHEMA.rejected(exc)):
                raise
            note = NO_NATIVE_SCHEMA.remember(self.endpoint, exc)
            return await send(False), False, note

    async def complete(self, request: Request) -> Completion:
        start = time.perf_counter()
        reply, native, note = await self._send(request)
        choice = reply.choices[0] if reply.choices else None
        calls = tuple(
            parse_tool_call(c.id, c.function.name, c.function.arguments or "", request.tools)
            for c in ((choice.message.tool_calls or []) if choice else [])
            if getattr(c, "function", None) is not None
        )
        return self._completion(
            request,
            start,
            text=(choice.message.content or "") if choice else "",
            usage=_usage(reply.usage),
            model=reply.model,
            calls=calls,
            finish=(choice.finish_reason or "") if choice else "",
            native=native,
            note=note,
        )

    async def stream(self, request: Request) -> AsyncIterator[str | Completion]:
        start = time.perf_counter()
        chunks, native, note = await self._send(
            request, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        parts: dict[int, dict[str, str]] = {}
        finish: str | None = None
        usage: Any = None
        model: str | None = None
        try:
            async for chunk in chunks:
                model = chunk.model or model
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices or []:
                    if choice.index != 0:
                        continue
                    delta = choice.delta
                    if delta is not None and delta.content:
                        text.append(delta.content)
                        yield delta.content
                    for fragment in (delta.tool_calls or []) if delta is not None else []:
                        part = parts.setdefault(fragment.index, {"id": "", "name": "", "args": ""})
                        part["id"] = fragment.id or part["id"]
                        if fragment.function is not None:
                            part["name"] += fragment.function.name or ""
                            part["args"] += fragment.function.arguments or ""
                    if choice.finish_reason:
                        finish = choice.finish_reason
        except Exception as exc:
            raise self._broken(exc) from exc
        finally:
            await chunks.close()
        if finish is None:
            raise self._cut_short()
        calls = tuple(
            parse_tool_call(p["id"], p["name"], p["args"], request.tools)
            for _, p in sorted(parts.items())
        )
        yield self._completion(
            request,
            start,
            text="".join(text),
            usage=_usage(usage),
            model=model,
            calls=calls,
            finish=finish,
            native=native,
            note=note,
        )

    def _completion(
        self,
        request: Request,
        start: float,
        *,
        text: str,
        usage: Usage,
        model: str | None,
        calls: tuple[Any, ...],
        finish: str,
        native: bool,
        note: str | None,
    ) -> Completion:
        schema = request.json_schema
        if native and schema is not None and finish == "stop" and not calls:
            note = note if _held_to(text, schema) else NO_NATIVE_SCHEMA.ignored(self.endpoint)
        return Completion(
            text=text,
            usage=usage,
            model=model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            tool_calls=calls,
            stop_reason=_STOP.get(finish, "other"),
            structured=(
                None if request.json_schema is None else ("native" if native else "instruction")
            ),
            note=note,
        )

    async def _create(self, kwargs: dict[str, Any]) -> Any:
        return await self._translated(self._client.chat.completions.create(**kwargs))


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "prompt_tokens_details", None)
    return Usage(
        input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0,
        cached_tokens=(getattr(details, "cached_tokens", 0) or 0) if details else 0,
    )


def _messages(m: Message) -> list[dict[str, Any]]:
    if m.role == "assistant" and m.tool_calls:
        return [
            {
                "role": "assistant",
                "content": m.content or None,
                "tool_calls": [
                    {
                        "id": c.id,
                        "type": "function",
                        "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
                    }
                    for c in m.tool_calls
                ],
            }
        ]
    out: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": r.call_id,
            "content": f"error: {r.content}" if r.is_error else r.content,
        }
        for r in m.tool_results
    ]
    if m.content or not m.tool_results:
        out.append({"role": m.role, "content": m.content})
    return out


_NAME = re.compile(r"[^A-Za-z0-9_-]")


def strict_allowed(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts ``schema``: every object closes its properties
    (``additionalProperties: false``) and requires all of them, all the way down."""
    if isinstance(schema, dict):
        if schema.get("type") == "object" or "properties" in schema:
            props = schema.get("properties", {})
            if schema.get("additionalProperties") is not False:
                return False
            if set(schema.get("required", [])) != set(props):
                return False
        return all(strict_allowed(v) for v in schema.values())
    if isinstance(schema, list):
        return all(strict_allowed(v) for v in schema)
    return True


def _held_to(text: str, schema: dict[str, Any]) -> bool:
    """Whether ``text`` looks like a reply held to ``schema`` by ``response_format``: one JSON
    object and nothing else, with every top-level property the schema requires."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return False
    required = schema.get("required", [])
    return isinstance(value, dict) and all(k in value for k in required)


def response_format(schema: dict[str, Any]) -> dict[str, Any]:
    """The ``response_format`` field for ``schema``."""
    title = schema.get("title")
    name = _NAME.sub("_", title)[:64] if isinstance(title, str) and title else "reply"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema, "strict": strict_allowed(schema)},
    }
