"""Gemini CLI: ``mcpServers.noetic`` in ``<project>/.gemini/settings.json`` or
``~/.gemini/settings.json``."""

from __future__ import annotations

from noetic.hosts.setup.servers import McpServersFile

SCOPES = McpServersFile.SCOPES
DEFAULT_SCOPE = "project"

_HOST = McpServersFile(".gemini", "settings.json")
plan = _HOST.plan
manual = _HOST.manual
installed_commands = _HOST.installed_commands
