"""Noetic's MCP server: the seed's tools, in-process, over stdio and streamable HTTP.

Importing this package defers the ``mcp`` SDK package's own ``__init__`` (its client) until
something reads a name from it (:mod:`noetic.mcp.sdk`; docs/mcp.md, "Start-up").
"""

from noetic.mcp.sdk import defer_package_init

defer_package_init()
