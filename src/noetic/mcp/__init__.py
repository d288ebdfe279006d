"""Noetic's MCP server: the seed's tools, in-process, over stdio and streamable HTTP.

Importing this package imports the ``mcp`` SDK (most of a second); only ``noetic mcp`` and
``noetic serve`` do.
"""
