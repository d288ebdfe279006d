"""Anthropic's Messages API through the official ``anthropic`` SDK."""

from __future__ import annotations

import os
import time
from typing import Any

from noetic.errors import UsageError
from noetic.llm._http import missing_sdk, translate
from noetic.llm.base import Completion, Request, Usage


class AnthropicProvider:
    """``anthropic:MODEL``. The key comes from ``ANTHROPIC_API_KEY`` unless a client is given.

    The current Messages API (SDK 2.x) takes no sampling temperature, so
    :attr:`Request.temperature` is not sent; the model's default applies.
    """

    name = "anthropic"

    def __init__(
        self,
        model: str,
        *,
        client: Any = None,
        base_url: str | None = None,
        timeout: float = 120.0,
    ) -> None:
        self.model = model
        try:
            import anthropic
        except ImportError:
            raise missing_sdk("anthropic", "anthropic") from None
        self._sdk = anthropic
        if client is None:
            key = os.environ.get("ANTHROPIC_API_KEY")
            if not key:
                raise UsageError(
                    "no Anthropic API key",
                    fix="export ANTHROPIC_API_KEY=… (never put keys in code)",
                )
            client = anthropic.AsyncAnthropic(
                api_key=key, base_url=base_url, max_retries=0, timeout=timeout
            )
        self._client = client

    async def complete(self, request: Request) -> Completion:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
        }
        if request.system:
            kwargs["system"] = request.system
        start = time.perf_counter()
        try:
            reply = await self._client.messages.create(**kwargs)
        except self._sdk.APIError as exc:
            raise translate(exc, self._sdk, self.name, self.model) from exc
        text = "".join(
            getattr(block, "text", "") for block in reply.content if block.type == "text"
        )
        return Completion(
            text=text,
            usage=Usage(
                input_tokens=reply.usage.input_tokens or 0,
                output_tokens=reply.usage.output_tokens or 0,
            ),
            model=reply.model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
        )
