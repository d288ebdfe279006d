"""The agent's tools for one run: names a model API accepts, and a circuit breaker per tool.

Tool names may hold dots (an MCP server's ``docs.search``) that model APIs refuse; each tool is
offered under a name with them replaced, and calls are mapped back. A tool that fails
``breaker_threshold`` times in a row this run is *open*: further calls to it are answered
"disabled for this run" without running it, so a model stuck retrying a broken tool is told to
stop, and the run (in adapt mode) deepens to re-plan.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from noetic.llm.base import ToolSpec
from noetic.tools.base import Tool, ToolResult, Toolset

_BAD = re.compile(r"[^A-Za-z0-9_-]")
# Tools whose calls change something: the act node runs them one at a time, in order.
ACTING = frozenset({"file_write", "file_edit", "shell"})


class Toolbox:
    def __init__(self, tools: Iterable[Tool], *, breaker_threshold: int = 3) -> None:
        self.toolset = Toolset(tools)
        self.by_wire: dict[str, Tool] = {}
        for t in self.toolset:
            wire = _BAD.sub("_", t.name)[:64]
            while wire in self.by_wire:
                wire = wire[:60] + f"_{len(self.by_wire)}"
            self.by_wire[wire] = t
        self.threshold = breaker_threshold
        self.failures: dict[str, int] = {}
        self.open: set[str] = set()

    @property
    def names(self) -> list[str]:
        return list(self.by_wire)

    def catalogue(self) -> str:
        return "\n".join(f"- {w}: {t.description}" for w, t in self.by_wire.items()) or "(none)"

    def specs(self, names: Iterable[str]) -> tuple[ToolSpec, ...]:
        offered = [(w, self.by_wire[w]) for w in names if w in self.by_wire]
        return tuple(
            ToolSpec(name=w, description=t.description, parameters=t.parameters) for w, t in offered
        )

    def acting(self, wire: str) -> bool:
        tool = self.by_wire.get(wire)
        return tool is not None and (tool.name in ACTING or "." in tool.name)

    async def call(self, wire: str, arguments: dict[str, Any]) -> tuple[ToolResult, bool]:
        """Run one call; the second value says the breaker opened on this call."""
        tool = self.by_wire.get(wire)
        if tool is None:
            known = ", ".join(self.by_wire) or "none"
            error = f"there is no tool {wire!r}; the tools are: {known}"
            return ToolResult(tool=wire, ok=False, error=error, retry=True), False
        if wire in self.open:
            error = (
                f"{wire} is disabled for the rest of this run after {self.failures[wire]} "
                "failures in a row; use another way"
            )
            return ToolResult(tool=wire, ok=False, error=error), False
        result = await self.toolset.call(tool.name, arguments)
        if result.ok:
            self.failures[wire] = 0
            return result, False
        self.failures[wire] = self.failures.get(wire, 0) + 1
        opened = self.failures[wire] >= self.threshold
        if opened:
            self.open.add(wire)
        return result, opened
