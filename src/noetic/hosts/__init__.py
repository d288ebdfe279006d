"""Noetic inside the agents people already use: host configuration and host hooks.

One small module per host writes Noetic's MCP server entry in that host's configuration file
(and, for Claude Code, its hooks and an instructions block), through
:mod:`noetic.hosts.config_edits`, which plans every change before making it, backs files up
once, shows diffs and undoes exactly what it added. :mod:`noetic.hosts.hooks` answers the events
a host sends to ``noetic hook``, and :mod:`noetic.hosts.outcomes` turns command exit statuses
into outcomes.

The package sits between the interfaces and the engines in the layer contract: it drives the
runtime (the tracker, the store, the outcome recording of calibration) on behalf of a host, runs
no model and no engine, and the CLI calls it.
"""

from types import ModuleType

# `noetic setup NAME` → the module that knows that host.
HOST_MODULES = {
    "claude-code": "noetic.hosts.claude_code",
    "cursor": "noetic.hosts.cursor",
    "vscode": "noetic.hosts.vscode",
    "gemini": "noetic.hosts.gemini",
    "codex": "noetic.hosts.codex",
    "json": "noetic.hosts.json_entry",
}


def host(name: str) -> ModuleType:
    """The module for host ``name``: ``plan``, ``manual``, ``installed_commands``, ``SCOPES``,
    ``DEFAULT_SCOPE``."""
    import importlib

    return importlib.import_module(HOST_MODULES[name])


def all_hosts() -> dict[str, ModuleType]:
    return {name: host(name) for name in HOST_MODULES}
