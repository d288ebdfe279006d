"""OpenAI Chat Completions through the official ``openai`` SDK: OpenAI itself, a local Ollama
(its ``/v1`` endpoint), and any OpenAI-compatible server (vLLM, LM Studio, OpenRouter…)."""

from __future__ import annotations

import time
from typing import Any

from noetic.llm._http import missing_sdk, translate
from noetic.llm.base import Completion, Request, Usage


class OpenAICompatibleProvider:
    """One wire format, many hosts: ``name`` says which (``openai``, ``ollama``, …)."""

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
        try:
            import openai
        except ImportError:
            raise missing_sdk("openai", "openai") from None
        self._sdk = openai
        if client is None:
            client = openai.AsyncOpenAI(
                api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout
            )
        self._client = client

    async def complete(self, request: Request) -> Completion:
        messages: list[dict[str, str]] = []
        if request.system:
            messages.append({"role": "system", "content": request.system})
        messages += [{"role": m.role, "content": m.content} for m in request.messages]
        start = time.perf_counter()
        try:
            reply = await self._client.chat.completions.create(
                model=self.model,
                messages=messages,
                max_tokens=request.max_tokens,
                temperature=request.temperature,
            )
        except self._sdk.APIError as exc:
            raise translate(exc, self._sdk, self.name, self.model) from exc
        choice = reply.choices[0] if reply.choices else None
        usage = reply.usage
        return Completion(
            text=(choice.message.content or "") if choice else "",
            usage=Usage(
                input_tokens=(usage.prompt_tokens or 0) if usage else 0,
                output_tokens=(usage.completion_tokens or 0) if usage else 0,
            ),
            model=reply.model or self.model,
            provider=self.name,
            latency_ms=round((time.perf_counter() - start) * 1000, 3),
        )
