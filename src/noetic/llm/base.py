"""The provider contract every engine talks to.

A provider turns a :class:`Request` into a :class:`Completion` with one async method,
``complete``. Everything else (retries, recording, structured output) is layered on top by
functions in this package, so an adapter stays a thin translation of one wire format.

Tool calls are part of the contract, in one shape for every wire format::

    Request(messages=…, tools=(ToolSpec(name="read_file", description="…", parameters={…}),),
            tool_choice="auto")                     # or "required", "none", a tool's name
    → Completion(tool_calls=(ToolCall(id="call_1", name="read_file", arguments={…}),),
                 stop_reason="tool_use")
    → the next request's messages end with completion.message() and
      Message.results(ToolCallResult(call_id="call_1", content="…"))

A provider that speaks this natively says so with ``native_tools = True``; one that cannot
refuses a request with tools with a :class:`~noetic.errors.ProviderError` of kind
``unsupported``.

Streaming: a provider may also have ``stream(request)``, an async iterator of text deltas
(``str``) that ends with the full :class:`Completion` (usage, tool calls and all).
:func:`stream_completion` gives that shape for any provider (one delta, the whole text, for
those that cannot stream), and :func:`complete_streaming` runs a call while handing each delta
to a callback, which is how the CLI shows a reply as it is written.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import Field, computed_field, model_validator

from noetic.errors import InvalidValueError, ProviderError
from noetic.frozen import Frozen

#: Tool names both wire formats accept (Anthropic and OpenAI share the rule).
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

StopReason = Literal["end", "tool_use", "max_tokens", "stop_sequence", "refusal", "other"]


class ToolSpec(Frozen):
    """A tool offered to the model: its name, what it does, the JSON schema of its arguments."""

    name: str = Field(pattern=TOOL_NAME.pattern)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class ToolCall(Frozen):
    """One tool call the model made. ``arguments`` is the parsed JSON object; when the model
    sent something that is not one (malformed JSON, a list, an unknown tool), ``arguments`` is
    empty and ``error`` says what was wrong, so an engine can send that back as the result."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class ToolCallResult(Frozen):
    """What a tool call produced, sent back to the model in a user message."""

    call_id: str
    content: str
    is_error: bool = False


class Message(Frozen):
    """One turn. An assistant turn may carry the tool calls it made; a user turn may carry
    the results of those calls (before any text)."""

    role: Literal["user", "assistant"]
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_results: tuple[ToolCallResult, ...] = ()

    @model_validator(mode="after")
    def _fits_role(self) -> Message:
        if self.tool_calls and self.role != "assistant":
            raise ValueError("only an assistant message carries tool calls")
        if self.tool_results and self.role != "user":
            raise ValueError("only a user message carries tool results")
        return self

    @classmethod
    def results(cls, *results: ToolCallResult, text: str = "") -> Message:
        """The user turn that answers the previous turn's tool calls."""
        return cls(role="user", content=text, tool_results=results)


class Request(Frozen):
    """What is asked of a model.

    ``json_schema`` asks for a reply that is one JSON object matching the schema (see
    :func:`noetic.llm.structured.complete_structured`); ``tools`` and ``tool_choice`` offer tools
    (``tool_choice``: ``"auto"``, ``"required"``, ``"none"`` or the name of one offered tool).
    """

    messages: tuple[Message, ...]
    system: str | None = None
    max_tokens: int = Field(1024, gt=0)
    temperature: float = Field(0.0, ge=0, le=2)
    json_schema: dict[str, Any] | None = None
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: str | None = None

    @model_validator(mode="after")
    def _tools_are_consistent(self) -> Request:
        names = [t.name for t in self.tools]
        if len(set(names)) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"tool {dup!r} is offered twice")
        choice = self.tool_choice
        if choice is not None and choice not in ("auto", "required", "none", *names):
            raise ValueError(
                f"tool_choice {choice!r} is not 'auto', 'required', 'none' or an offered "
                f"tool ({', '.join(names) or 'none offered'})"
            )
        if choice == "required" and not self.tools:
            raise ValueError("tool_choice 'required' with no tools offered")
        return self

    @classmethod
    def of(cls, prompt: str, **kwargs: Any) -> Request:
        """A single-user-message request."""
        return cls(messages=(Message(role="user", content=prompt),), **kwargs)


class Usage(Frozen):
    """Tokens as the provider reported them. ``input_tokens`` counts every prompt token,
    ``cached_tokens`` those of them read from the provider's prompt cache and
    ``cache_write_tokens`` those written to it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0


class Completion(Frozen):
    """A model's reply and what it cost.

    ``stop_reason`` is one vocabulary for every provider: ``end`` (the model finished),
    ``tool_use`` (it wants ``tool_calls`` run), ``max_tokens``, ``stop_sequence``,
    ``refusal``, ``other``. ``structured`` says how a ``json_schema`` request was honoured:
    ``native`` (the provider's own mechanism) or ``instruction`` (a prompt instruction, after
    the endpoint refused the native one); ``note`` says why, when it fell back.
    """

    text: str
    usage: Usage = Usage()
    model: str
    provider: str
    latency_ms: float = 0.0
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason = "end"
    structured: Literal["native", "instruction"] | None = None
    note: str | None = None

    def message(self) -> Message:
        """This reply as the assistant turn of the next request."""
        return Message(role="assistant", content=self.text, tool_calls=self.tool_calls)


@runtime_checkable
class Provider(Protocol):
    """Anything with a name, a model and an async ``complete``."""

    name: str
    model: str

    async def complete(self, request: Request) -> Completion: ...


def complete_sync(provider: Provider, request: Request) -> Completion:
    """Run one completion from synchronous code (the CLI edge); not for use inside a loop."""
    return asyncio.run(provider.complete(request))


async def stream_completion(
    provider: Provider, request: Request
) -> AsyncGenerator[str | Completion, None]:
    """Text deltas then the :class:`Completion`, from any provider."""
    method = getattr(provider, "stream", None)
    if method is None:
        completion = await provider.complete(request)
        if completion.text:
            yield completion.text
        yield completion
        return
    async for item in method(request):
        yield item


async def complete_streaming(
    provider: Provider, request: Request, on_text: Callable[[str], None] | None
) -> Completion:
    """``provider.complete(request)``, with each text delta handed to ``on_text`` as it
    arrives (a plain ``complete`` when ``on_text`` is None)."""
    if on_text is None:
        return await provider.complete(request)
    result: Completion | None = None
    async for item in stream_completion(provider, request):
        if isinstance(item, Completion):
            result = item
        else:
            on_text(item)
    if result is None:
        raise ended_without_reply(provider)
    return result


def failure(provider: Any, message: str, **kwargs: Any) -> ProviderError:
    """A :class:`ProviderError` naming ``provider``'s name and model."""
    return ProviderError(message, provider=provider.name, model=provider.model, **kwargs)


def ended_without_reply(provider: Any) -> ProviderError:
    """A stream that ended before its :class:`Completion`: a retryable connection error."""
    return failure(
        provider,
        f"{provider.name}:{provider.model}: the stream ended without a reply",
        retryable=True,
        kind="connection",
    )


def supports_tools(provider: Provider) -> bool:
    """Whether ``provider`` takes :attr:`Request.tools` natively."""
    return bool(getattr(provider, "native_tools", False))


def parse_tool_call(call_id: str, name: str, raw: Any, offered: tuple[ToolSpec, ...]) -> ToolCall:
    """A :class:`ToolCall` from what the wire carried: ``raw`` is a JSON text (OpenAI) or an
    already-decoded object (Anthropic). Never raises: problems land in ``error``.

    The text is read under the nesting and number limits of :mod:`noetic.untrusted`; a key given
    twice is refused, while keys that differ only in case are two arguments."""
    error: str | None = None
    arguments: dict[str, Any] = {}
    value: Any = raw
    if isinstance(raw, str):
        try:
            value = _arguments(raw.strip() or "{}", f"the arguments of tool call {name!r}")
        except json.JSONDecodeError as exc:
            error = f"the arguments are not valid JSON: {exc.msg} at position {exc.pos}"
        except InvalidValueError as exc:
            error = exc.message
    if error is None:
        if isinstance(value, dict):
            arguments = value
        else:
            error = f"the arguments must be a JSON object, not {type(value).__name__}"
    if offered and name not in {t.name for t in offered}:
        known = ", ".join(t.name for t in offered)
        error = f"there is no tool {name!r}; the tools are: {known}"
        arguments = {}
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=arguments, error=error)


def _arguments(text: str, source: str) -> Any:
    from noetic.limits import NUMBER_CHARS
    from noetic.untrusted import check_depth

    def number(convert: Any) -> Any:
        def parse(digits: str) -> Any:
            NUMBER_CHARS.check(len(digits), f"{source}: the number {digits[:20]}…")
            return convert(digits)

        return parse

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            twice = next(k for k in keys if keys.count(k) > 1)
            raise InvalidValueError(f"{source} give the key {twice!r} twice", field=twice)
        return dict(pairs)

    check_depth(text, source)
    value = json.loads(
        text, parse_int=number(int), parse_float=number(float), object_pairs_hook=unique
    )
    try:  # an escape such as "\ud800" decodes to a lone surrogate, which is not text
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValueError(f"{source} hold an escaped lone surrogate", field=source) from None
    return value


class LLMCall(Frozen):
    """One attempt at a model call, as recorded in ``llm_calls`` and emitted as an event.

    ``cost_usd`` is None when the model has no known price (see :mod:`noetic.llm.prices`): an
    unknown cost is never shown as 0."""

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
    tokens_cached: int = 0
    tokens_cache_write: int = 0
    cost_usd: float | None = None
    stop_reason: str | None = None
    note: str | None = None
    engine: str | None = None


class UsageTotals(Frozen):
    """What model calls came to: attempts, failures, tokens and cost. ``cost_usd`` is None as
    soon as one answered call had no known price (``unpriced`` counts them): an unknown cost is
    never shown as 0, nor a partial sum as the whole."""

    calls: int = 0
    failed: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    known_cost_usd: float = 0.0
    unpriced: int = 0
    latency_ms: float = 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cost_usd(self) -> float | None:
        return None if self.unpriced else self.known_cost_usd

    def add(self, call: LLMCall) -> UsageTotals:
        ok = call.outcome == "ok"
        return UsageTotals(
            calls=self.calls + 1,
            failed=self.failed + (0 if ok else 1),
            input_tokens=self.input_tokens + call.tokens_in,
            output_tokens=self.output_tokens + call.tokens_out,
            cached_tokens=self.cached_tokens + call.tokens_cached,
            known_cost_usd=round(self.known_cost_usd + (call.cost_usd or 0.0), 8),
            unpriced=self.unpriced + (1 if ok and call.cost_usd is None else 0),
            latency_ms=round(self.latency_ms + call.latency_ms, 3),
        )

    def since(self, earlier: UsageTotals) -> UsageTotals:
        """The calls made after ``earlier`` was taken from the same running total."""
        return self._joined(earlier, -1)

    def plus(self, other: UsageTotals) -> UsageTotals:
        """These calls and ``other``'s together."""
        return self._joined(other, 1)

    def _joined(self, other: UsageTotals, sign: int) -> UsageTotals:
        return UsageTotals(
            **{
                f: round(
                    getattr(self, f) + sign * getattr(other, f), 8 if f == "known_cost_usd" else 3
                )
                for f in UsageTotals.model_fields
            }
        )

    @classmethod
    def of(cls, calls: Iterable[LLMCall]) -> UsageTotals:
        totals = cls()
        for call in calls:
            totals = totals.add(call)
        return totals

    def line(self) -> str:
        """One line for a person: ``3 model calls · 1,200 in / 300 out tokens · $0.0081``."""
        if self.cost_usd is not None:
            cost = money(self.cost_usd)
        elif self.unpriced == self.calls - self.failed:
            cost = "cost unknown"
        else:
            calls = "call" if self.unpriced == 1 else "calls"
            cost = (
                f"cost unknown ({self.unpriced} {calls} unpriced; "
                f"{money(self.known_cost_usd)} known)"
            )
        failed = f" ({self.failed} failed)" if self.failed else ""
        cached = f", {self.cached_tokens:,} cached" if self.cached_tokens else ""
        return (
            f"{self.calls} model call{'s' if self.calls != 1 else ''}{failed} · "
            f"{self.input_tokens:,} in{cached} / {self.output_tokens:,} out tokens · {cost}"
        )


def money(usd: float) -> str:
    """Dollars for a person: four decimals, six under a cent (a small call costs $0.000150)."""
    return f"${usd:.4f}" if usd >= 0.01 or usd == 0 else f"${usd:.6f}"
