"""Cursor: ``mcpServers.noetic`` in ``<project>/.cursor/mcp.json`` or ``~/.cursor/mcp.json``."""

from __future__ import annotations

from noetic.hosts.setup.servers import McpServersFile

SCOPES = McpServersFile.SCOPES
DEFAULT_SCOPE = "project"

_HOST = McpServersFile(".cursor", "mcp.json")
plan = _HOST.plan
manual = _HOST.manual
installed_commands = _HOST.installed_commands
