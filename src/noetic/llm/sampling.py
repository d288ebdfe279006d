"""The connected MCP client's own model as a :class:`Provider`, through MCP sampling.

When an agent such as Claude Code connects to Noetic's MCP server and declares the sampling
capability, any engine can run on that agent's model with no API key of Noetic's. The provider
wraps the server session of one tool call and lives only as long as that call; its requests ride
that call's channel (``related_request_id``). The specification deprecates sampling from
protocol 2026-07-28, so ``sampling/createMessage`` goes only on connections that negotiated an
earlier one (the server checks). Clients report no token counts: usage is zero, cost unknown.
Tools travel only when the client declared ``sampling.tools`` (protocol 2025-11-25), a request
naming one tool as that tool alone and ``required``, the closest the protocol allows; without
it a request with tools fails with kind ``unsupported`` and engines take their JSON path. No JSON
schema travels natively (``docs/mcp.md``).
"""

from __future__ import annotations

import time
import warnings
from typing import TYPE_CHECKING, Any

from noetic.errors import ProviderError
from noetic.llm.base import Completion, Message, Request, StopReason, Usage, parse_tool_call

if TYPE_CHECKING:  # the MCP SDK loads only when a client samples
    from mcp.server.session import ServerSession
    from mcp.types import RequestId

_STOP: dict[str, StopReason] = {
    "endTurn": "end",
    "toolUse": "tool_use",
    "maxTokens": "max_tokens",
    "stopSequence": "stop_sequence",
}


def client_takes_tools(session: ServerSession) -> bool:
    """Whether the client declared ``sampling.tools`` when it connected."""
    params = getattr(session, "client_params", None)
    sampling = getattr(getattr(params, "capabilities", None), "sampling", None)
    return getattr(sampling, "tools", None) is not None


class SamplingProvider:
    """``complete`` asks the MCP client to run the request on its model."""

    name = "mcp-sampling"
    native_schema = False

    def __init__(
        self,
        session: ServerSession,
        *,
        model: str = "client",
        related_request_id: RequestId | None = None,
    ) -> None:
        self._session = session
        self._related = related_request_id
        self.model = model
        self.native_tools = client_takes_tools(session)

    async def complete(self, request: Request) -> Completion:
        from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
        from mcp.types import Tool, ToolChoice
        from pydantic import ValidationError as PydanticValidationError

        extra: dict[str, Any] = {}
        if request.tools:
            if not self.native_tools:
                raise ProviderError(
                    "the MCP client did not declare the sampling.tools capability (protocol "
                    "2025-11-25), so a request with tools cannot be sent through it",
                    provider=self.name,
                    model=self.model,
                    kind="unsupported",
                    fix="use a client that supports tools in sampling, or a provider string",
                )
            offered = request.tools
            mode = request.tool_choice
            if mode not in (None, "auto", "required", "none"):
                offered = tuple(t for t in request.tools if t.name == mode)
                mode = "required"
            extra["tools"] = [
                Tool(name=t.name, description=t.description, input_schema=t.parameters)
                for t in offered
            ]
            if mode is not None:
                extra["tool_choice"] = ToolChoice(mode=mode)
        messages = [m for message in request.messages for m in _messages(message)]
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                result = await self._session.create_message(
                    messages,
                    max_tokens=request.max_tokens,
                    system_prompt=request.system,
                    temperature=request.temperature,
                    related_request_id=self._related,
                    **extra,
                )
        except (MCPError, PydanticValidationError) as exc:
            what = (
                "did not run the sampling request"
                if isinstance(exc, MCPError)
                else "answered the sampling request with a malformed result"
            )
            raise ProviderError(
                f"the MCP client {what}: {exc}",
                provider=self.name,
                model=self.model,
                retryable=False,
            ) from exc
        blocks = result.content if isinstance(result.content, list) else [result.content]
        texts = [b.text for b in blocks if b.type == "text"]
        calls = tuple(
            parse_tool_call(b.id, b.name, b.input, request.tools)
            for b in blocks
            if b.type == "tool_use"
        )
        if not texts and not calls:
            kinds = ", ".join(sorted({b.type for b in blocks})) or "no"
            raise ProviderError(
                f"the MCP client answered with {kinds} content, not text",
                provider=self.name,
                model=self.model,
                retryable=False,
            )
        return Completion(
            text="".join(texts),
            usage=Usage(),
            model=result.model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
            tool_calls=calls,
            stop_reason=_STOP.get(result.stop_reason or "", "tool_use" if calls else "end"),
        )


def _messages(m: Message) -> list[Any]:
    """One message as sampling messages: tool results go alone in their own user message, as
    the protocol requires, and any text of that turn follows in another."""
    from mcp.types import SamplingMessage, TextContent, ToolResultContent, ToolUseContent

    if not m.tool_calls and not m.tool_results:
        return [SamplingMessage(role=m.role, content=TextContent(type="text", text=m.content))]
    out: list[Any] = []
    if m.tool_results:
        results = [
            ToolResultContent(
                type="tool_result",
                tool_use_id=r.call_id,
                content=[TextContent(type="text", text=r.content)],
                is_error=r.is_error or None,
            )
            for r in m.tool_results
        ]
        out.append(SamplingMessage(role="user", content=results))
        if m.content:
            out.append(
                SamplingMessage(role="user", content=TextContent(type="text", text=m.content))
            )
        return out
    content: list[Any] = [TextContent(type="text", text=m.content)] if m.content else []
    content += [
        ToolUseContent(type="tool_use", id=c.id, name=c.name, input=c.arguments)
        for c in m.tool_calls
    ]
    return [SamplingMessage(role="assistant", content=content)]
