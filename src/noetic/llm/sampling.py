"""The connected MCP client's own model as a :class:`Provider`, through MCP sampling.

When an agent such as Claude Code connects to Noetic's MCP server and declares the sampling
capability, any engine can run on that agent's model with no API key of Noetic's. The provider
wraps one tool call's server session; it lives only as long as that call.

The MCP specification marks sampling as deprecated from protocol 2026-07-28 in favour of
input-required rounds, which cannot carry an engine's sequence of model calls; this provider
uses ``sampling/createMessage`` on connections that negotiated an earlier protocol (what
clients speak today) and says so when a client cannot sample.
"""

from __future__ import annotations

import time
import warnings
from typing import Any

from noetic.errors import ProviderError
from noetic.llm.base import Completion, Request, Usage


class SamplingProvider:
    """``complete`` asks the MCP client to run the request on its model."""

    name = "mcp-sampling"

    def __init__(self, session: Any, *, model: str = "client") -> None:
        self._session = session
        self.model = model

    async def complete(self, request: Request) -> Completion:
        from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
        from mcp.types import SamplingMessage, TextContent

        messages = [
            SamplingMessage(role=m.role, content=TextContent(type="text", text=m.content))
            for m in request.messages
        ]
        start = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                result = await self._session.create_message(
                    messages,
                    max_tokens=request.max_tokens,
                    system_prompt=request.system,
                    temperature=request.temperature,
                )
        except MCPError as exc:
            raise ProviderError(
                f"the MCP client refused the sampling request: {exc}",
                provider=self.name,
                model=self.model,
                retryable=False,
            ) from exc
        content = result.content
        text = getattr(content, "text", None)
        if text is None:
            raise ProviderError(
                f"the MCP client answered with {getattr(content, 'type', '?')} content, not text",
                provider=self.name,
                model=self.model,
            )
        return Completion(
            text=text,
            usage=Usage(),
            model=result.model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
        )
