"""Finding tools: the ``noetic.tools`` entry points, built-ins included.

An entry point names a factory that takes the workspace and returns a
:class:`~noetic.tools.base.Tool` (or a list of them). Discovery runs only when a command needs
tools; tests and library users pass an explicit list instead.
"""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

from noetic.errors import InvalidValueError
from noetic.tools.base import Tool

ENTRY_POINT_GROUP = "noetic.tools"


def discover(workspace: Path) -> list[Tool]:
    """Every tool registered under the ``noetic.tools`` entry points, built for ``workspace``."""
    found: list[Tool] = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        made = ep.load()(workspace)
        for item in made if isinstance(made, list) else [made]:
            if not isinstance(item, Tool):
                raise InvalidValueError(
                    f"entry point {ep.name!r} returned {type(item).__name__}, not a Tool",
                    field=ENTRY_POINT_GROUP,
                    fix="return noetic.tools.tool(your_function) from the factory",
                )
            found.append(item)
    return found
