"""Gemini CLI: ``mcpServers.noetic`` in ``<project>/.gemini/settings.json`` or
``~/.gemini/settings.json``."""

from __future__ import annotations

from noetic.hosts.setup.servers import McpServersFile

NAME = "gemini"
SCOPES = McpServersFile.SCOPES
DEFAULT_SCOPE = "project"
KEY = McpServersFile.KEY

_HOST = McpServersFile(".gemini", "settings.json")
path = _HOST.path
entry = _HOST.entry
plan = _HOST.plan
manual = _HOST.manual
installed_commands = _HOST.installed_commands
