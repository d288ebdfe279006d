"""Tools an engine may offer a model: typed functions with a JSON schema of their arguments.

Below the engines and beside the runtime: CASCADE's investigation, the cognitive agent and Nova
all use the same tool model (:class:`Tool`, built with :func:`tool`), the same validation
(:meth:`Tool.call` returns a :class:`ToolResult`, never raises for a bad call) and the same
discovery (:func:`noetic.tools.discovery.discover` for the ``noetic.tools`` entry points,
:mod:`noetic.tools.mcp_servers` for tools of configured MCP servers).
"""

from noetic.tools.base import Tool, ToolResult, Toolset, tool

__all__ = ["Tool", "ToolResult", "Toolset", "tool"]
