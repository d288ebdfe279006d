"""The connected MCP client's own model as a :class:`Provider`, through MCP sampling.

When an agent such as Claude Code connects to Noetic's MCP server and declares the sampling
capability, any engine can run on that agent's model with no API key of Noetic's. The provider
wraps the server session of one tool call and lives only as long as that call; its requests ride
that call's channel (``related_request_id``), which over streamable HTTP is the call's own
response stream.

The MCP specification deprecates sampling from protocol 2026-07-28 in favour of input-required
rounds, which cannot carry an engine's sequence of model calls. This provider sends
``sampling/createMessage`` on connections that negotiated an earlier protocol (what clients
speak today); the server checks the connection can carry it before choosing this provider.
Clients report no token counts for sampling, so usage is recorded as zero.
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

    def __init__(
        self, session: Any, *, model: str = "client", related_request_id: Any = None
    ) -> None:
        self._session = session
        self._related = related_request_id
        self.model = model

    async def complete(self, request: Request) -> Completion:
        from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
        from mcp.types import SamplingMessage, TextContent
        from pydantic import ValidationError as PydanticValidationError

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
                    related_request_id=self._related,
                )
        except MCPError as exc:
            raise ProviderError(
                f"the MCP client did not run the sampling request: {exc}",
                provider=self.name,
                model=self.model,
                retryable=False,
            ) from exc
        except PydanticValidationError as exc:
            raise ProviderError(
                f"the MCP client answered the sampling request with a malformed result: {exc}",
                provider=self.name,
                model=self.model,
                retryable=False,
            ) from exc
        text = getattr(result.content, "text", None)
        if text is None:
            raise ProviderError(
                f"the MCP client answered with {result.content.type} content, not text",
                provider=self.name,
                model=self.model,
                retryable=False,
            )
        return Completion(
            text=text,
            usage=Usage(),
            model=result.model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
        )
