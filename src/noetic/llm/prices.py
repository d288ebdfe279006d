"""What a model call cost, from a price table: US dollars per million tokens by
``provider:model``, ``config.toml``'s ``[prices]`` over :data:`BUILTIN` (``docs/providers.md``).

A model is looked up by its exact name, then without a date suffix, then by the provider's
wildcard (``ollama:*``: a local model has no per-token charge). A model found nowhere has an
*unknown* cost, ``None``, never 0: a total over calls with an unknown cost is unknown too.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import Field

from noetic.frozen import Frozen
from noetic.llm.base import Usage


class Price(Frozen, extra="forbid"):
    """USD per million tokens."""

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(None, ge=0)
    cache_write: float | None = Field(None, ge=0)

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` in dollars (``usage.input_tokens`` includes cached ones)."""
        cached = usage.cached_tokens
        written = usage.cache_write_tokens
        plain = max(usage.input_tokens - cached - written, 0)
        total = (
            plain * self.input
            + cached * (self.input if self.cached_input is None else self.cached_input)
            + written * (self.input if self.cache_write is None else self.cache_write)
            + usage.output_tokens * self.output
        )
        return round(total / 1_000_000, 8)


def _p(i: float, o: float, cached: float | None = None, write: float | None = None) -> Price:
    return Price(input=i, output=o, cached_input=cached, cache_write=write)


#: List prices, USD per million tokens, from the providers' pricing pages (standard tier, prompts
#: under 200k tokens, 5-minute cache writes). Models not listed are unknown until configured.
BUILTIN: dict[str, Price] = {
    "anthropic:claude-opus-5": _p(5, 25, 0.5, 6.25),
    "anthropic:claude-opus-4-8": _p(5, 25, 0.5, 6.25),
    "anthropic:claude-opus-4-7": _p(5, 25, 0.5, 6.25),
    "anthropic:claude-opus-4-6": _p(5, 25, 0.5, 6.25),
    "anthropic:claude-opus-4-5": _p(5, 25, 0.5, 6.25),
    "anthropic:claude-opus-4-1": _p(15, 75, 1.5, 18.75),
    "anthropic:claude-opus-4": _p(15, 75, 1.5, 18.75),
    "anthropic:claude-sonnet-4-6": _p(3, 15, 0.3, 3.75),
    "anthropic:claude-sonnet-4-5": _p(3, 15, 0.3, 3.75),
    "anthropic:claude-sonnet-4": _p(3, 15, 0.3, 3.75),
    "anthropic:claude-haiku-4-5": _p(1, 5, 0.1, 1.25),
    "anthropic:claude-3-5-haiku": _p(0.8, 4, 0.08, 1.0),
    "openai:gpt-4o": _p(2.5, 10, 1.25),
    "openai:gpt-4o-mini": _p(0.15, 0.6, 0.075),
    "openai:gpt-4.1": _p(2, 8, 0.5),
    "openai:gpt-4.1-mini": _p(0.4, 1.6, 0.1),
    "openai:gpt-4.1-nano": _p(0.1, 0.4, 0.025),
    "ollama:*": _p(0, 0),
}

_DATED = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


class PriceTable:
    """Prices by ``provider:model``: the given entries over :data:`BUILTIN`."""

    def __init__(self, entries: dict[str, Price] | None = None, *, builtin: bool = True) -> None:
        self.entries = {**(BUILTIN if builtin else {}), **(entries or {})}

    def price(self, provider: str, model: str) -> Price | None:
        for name in (model, _DATED.sub("", model)):
            found = self.entries.get(f"{provider}:{name}")
            if found is not None:
                return found
        return self.entries.get(f"{provider}:*")

    def cost(self, provider: str, model: str, usage: Usage) -> float | None:
        """Dollars for ``usage`` on the model, or None when its price is unknown."""
        price = self.price(provider, model)
        return None if price is None else price.cost(usage)

    @classmethod
    def from_config(cls, home: Path | None) -> PriceTable:
        """The table for the store at ``home``: its ``config.toml`` ``[prices]`` over the
        built-ins (:mod:`noetic.config` checks them and names a malformed entry)."""
        if home is None:
            return cls()
        from noetic.config import load

        return cls({key: Price(**entry._asdict()) for key, entry in load(home).prices.items()})
