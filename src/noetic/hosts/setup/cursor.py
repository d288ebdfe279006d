"""Cursor: ``mcpServers.noetic`` in ``<project>/.cursor/mcp.json`` or ``~/.cursor/mcp.json``."""

from __future__ import annotations

from noetic.hosts.setup.servers import McpServersFile

NAME = "cursor"
SCOPES = McpServersFile.SCOPES
DEFAULT_SCOPE = "project"
KEY = McpServersFile.KEY

_HOST = McpServersFile(".cursor", "mcp.json")
path = _HOST.path
entry = _HOST.entry
plan = _HOST.plan
manual = _HOST.manual
installed_commands = _HOST.installed_commands
