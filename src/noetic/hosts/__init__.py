"""Noetic inside the agents people already use, in three rooms, one job each:

- :mod:`noetic.hosts.setup`: writing Noetic into a host's configuration (one small module per
  host, through :mod:`~noetic.hosts.setup.config_edits`, which plans every change before making
  it, backs files up once, shows diffs and undoes exactly what it added) and ``noetic doctor``;
- :mod:`noetic.hosts.hooks`: answering the events a host sends to ``noetic hook``
  (:mod:`~noetic.hosts.hooks.answer`), the PreToolUse gate, the session's trace;
- :mod:`noetic.hosts.testing`: outcomes nobody has to type, from the exit status of a test
  command the agent ran and the reports it wrote.

The package sits between the interfaces and the engines in the layer contract: it drives the
runtime (the tracker, the store, the outcome recording of calibration) on behalf of a host, runs
no model and no engine, and the CLI calls it.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# `noetic setup NAME` → the module (or ``module:object``) that knows that host.
HOST_MODULES = {
    "claude-code": "noetic.hosts.setup.claude_code",
    "cursor": "noetic.hosts.setup.servers:CURSOR",
    "vscode": "noetic.hosts.setup.servers:VSCODE",
    "gemini": "noetic.hosts.setup.servers:GEMINI",
    "codex": "noetic.hosts.setup.codex",
    "json": "noetic.hosts.setup.servers:PRINTED",
}


def host(name: str) -> Any:
    """The module or object for host ``name``: ``plan``, ``manual``, ``installed_commands``,
    ``SCOPES``, ``DEFAULT_SCOPE``."""
    import importlib

    module, _, attribute = HOST_MODULES[name].partition(":")
    found = importlib.import_module(module)
    return getattr(found, attribute) if attribute else found
