"""Provider strings → providers: ``anthropic:MODEL``, ``openai:MODEL``, ``ollama:MODEL``,
``openai-compatible:URL#MODEL`` (``docs/providers.md`` says what each reaches and where its key
comes from). Keys are only ever read from the environment; they are never logged or stored.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Final

from noetic.errors import InvalidValueError, UsageError
from noetic.llm.base import Provider

SCHEMES: Final = ("anthropic", "openai", "ollama", "openai-compatible")
DEFAULT_OLLAMA: Final = "http://localhost:11434"


def parse_provider(spec: str, *, timeout: float = 120.0) -> Provider:
    """Build the provider a string names; import only that provider's SDK."""
    scheme, sep, rest = spec.strip().partition(":")
    if not sep or not rest:
        raise InvalidValueError(
            f"provider {spec!r} is not SCHEME:MODEL",
            field="provider",
            value=spec,
            fix="e.g. anthropic:claude-sonnet-4-5, openai:gpt-4o, ollama:llama3.2",
        )
    scheme = scheme.lower()
    if scheme not in SCHEMES:
        near = difflib.get_close_matches(scheme, SCHEMES, n=1)
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise InvalidValueError(
            f"unknown provider {scheme!r}",
            field="provider",
            value=spec,
            fix=f"{hint}known: {', '.join(SCHEMES)}",
        )
    if scheme == "anthropic":
        from noetic.llm.anthropic import AnthropicProvider

        return AnthropicProvider(rest, timeout=timeout)
    from noetic.llm.openai_compat import OpenAICompatibleProvider

    if scheme == "openai":
        key = os.environ.get("OPENAI_API_KEY")
        if not key:
            raise UsageError("no OpenAI API key", fix="export OPENAI_API_KEY=…")
        return OpenAICompatibleProvider(rest, name="openai", api_key=key, timeout=timeout)
    if scheme == "ollama":
        host = os.environ.get("OLLAMA_HOST", DEFAULT_OLLAMA).rstrip("/")
        if not host.startswith(("http://", "https://")):
            host = f"http://{host}"
        return OpenAICompatibleProvider(
            rest, name="ollama", base_url=f"{host}/v1", api_key="ollama", timeout=timeout
        )
    base_url, hash_, model = rest.rpartition("#")
    if not hash_ or not base_url or not model:
        raise InvalidValueError(
            f"provider {spec!r} needs a base URL and a model",
            field="provider",
            value=spec,
            fix="openai-compatible:http://localhost:8000/v1#my-model",
        )
    return OpenAICompatibleProvider(
        model,
        name="openai-compatible",
        base_url=base_url,
        api_key=os.environ.get("NOETIC_API_KEY") or "not-needed",
        timeout=timeout,
    )


def resolve_provider_spec(explicit: str | None, home: Path | None = None) -> str:
    """The provider string to use: explicit, ``$NOETIC_PROVIDER``, then the config file."""
    if explicit:
        return explicit
    env = os.environ.get("NOETIC_PROVIDER")
    if env:
        return env
    if home is not None:
        from noetic.config import load

        default = load(home).provider_default
        if default is not None:
            return default
    raise UsageError(
        "no model provider configured",
        fix="pass --provider (e.g. ollama:llama3.2), set NOETIC_PROVIDER, or add "
        '[provider] default = "…" to the store\'s config.toml',
    )
