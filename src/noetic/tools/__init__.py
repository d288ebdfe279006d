"""Tools an engine may offer a model: typed functions with a JSON schema of their arguments.

Below the engines and beside the runtime: CASCADE's investigation, the cognitive agent and Nova
all use the same tool model (:class:`Tool`, built with :func:`tool`), the same validation
(:meth:`Tool.call` returns a :class:`ToolResult`, never raises for a bad call) and the same
discovery (:func:`noetic.tools.discovery.discover` for the ``noetic.tools`` entry points,
:mod:`noetic.tools.mcp_servers` for tools of configured MCP servers).

The names load :mod:`noetic.tools.base` (and pydantic) on first use, so the shell gate
(:mod:`noetic.tools.shellgate`), which a hook runs on every tool call, costs only itself.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.tools.base import Tool, ToolResult, Toolset, tool

__all__ = ["Tool", "ToolResult", "Toolset", "tool"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from noetic.tools import base

        value = getattr(base, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'noetic.tools' has no attribute {name!r}")
