"""The tool list, generated once and kept on disk, so a server starts without generating it
(docs/mcp.md, "Start-up").

The SDK builds each tool's input and output schemas with pydantic from the function's signature
and return type, importing every type a tool returns: a fifth of what ``noetic mcp`` costs before
it can answer ``tools/list``. The first server to start generates them the SDK's way and writes
what it lists to ``mcp-tools.json`` in the user cache directory; a later server whose key
(:func:`cache_key`) matches lists the tools from that file and builds a tool the SDK's way on
its first call (:class:`DeferredTool`). Nothing here ever stops a server: a file that cannot be
read or written means the schemas are generated, as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

from mcp.server.mcpserver.tools import Tool
from pydantic import ConfigDict, PrivateAttr

from noetic.cached import cache_dir, source_files

FORMAT = 1
FILE = "mcp-tools.json"


def _sources(root: str, into: list[str]) -> None:
    """``relative path:size:mtime`` of every ``.py`` file under ``root``."""
    into += [
        f"{p[len(root) :]}:{st.st_size}:{st.st_mtime_ns}" for p, st in source_files(root, (".py",))
    ]


def cache_key() -> dict[str, Any]:
    """What the cached schemas depend on; a file whose key differs is not used."""
    import mcp.server.mcpserver as sdk_tools
    import pydantic
    import pydantic_core

    import noetic

    files: list[str] = []
    for package in (noetic, sdk_tools):
        _sources(os.path.dirname(package.__file__ or ""), files)
    files.sort()
    return {
        "format": FORMAT,
        "noetic": noetic.__version__,
        "python": sys.version,
        "pydantic": pydantic.VERSION,
        "pydantic_core": pydantic_core.__version__,
        "sources": hashlib.sha256("\n".join(files).encode()).hexdigest(),
    }


def describe(tool: Tool) -> dict[str, Any]:
    """What a server needs to list ``tool`` (built by the SDK) without building it again."""
    return {
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters,
        "output_schema": tool.output_schema,
        "context": tool.context_kwarg,
    }


def _valid(entry: Any) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("name"), str)
        and isinstance(entry.get("description"), str)
        and isinstance(entry.get("input_schema"), dict)
        and isinstance(entry.get("output_schema"), dict | None)
        and isinstance(entry.get("context"), str | None)
    )


def load(key: dict[str, Any], names: list[str] | None = None) -> list[dict[str, Any]] | None:
    """The cached tool list if the file's key is ``key`` and every entry is well formed (and,
    given ``names``, the tools are exactly those, in that order); None otherwise."""
    try:
        document = json.loads((cache_dir() / FILE).read_bytes())
    except (OSError, ValueError):  # missing, unreadable, not JSON, not UTF-8
        return None
    if not isinstance(document, dict) or document.get("key") != key:
        return None
    tools = document.get("tools")
    if not isinstance(tools, list) or not tools or not all(_valid(t) for t in tools):
        return None
    if names is not None and [t["name"] for t in tools] != names:
        return None
    return tools


def save(key: dict[str, Any], tools: list[dict[str, Any]]) -> bool:
    """Write the tool list under ``key`` (atomically: a reader sees the old file or the new
    one); False if the cache directory cannot be written."""
    from noetic.store.derived_files import atomic_write_bytes

    data = json.dumps({"key": key, "tools": tools}, separators=(",", ":")).encode()
    try:
        atomic_write_bytes(cache_dir() / FILE, data, sync=False)
    except OSError:
        return False
    return True


def forget() -> None:
    """Remove the cached tool list (a tool built on first call did not match it)."""
    with contextlib.suppress(OSError):
        (cache_dir() / FILE).unlink()


class DeferredTool(Tool):
    """A tool listed from the cache: its name, description and schemas are the cached ones;
    the first call builds the tool the SDK's way (importing what the function needs and
    generating its argument model) and every call runs that one."""

    model_config = ConfigDict(defer_build=True)  # made by model_construct only, never validated
    _build: Callable[[], Tool] | None = PrivateAttr(default=None)
    _entry: dict[str, Any] = PrivateAttr(default_factory=dict)
    _built: Tool | None = PrivateAttr(default=None)

    async def run(
        self, arguments: dict[str, Any], context: Any, convert_result: bool = False
    ) -> Any:
        return await self.built().run(arguments, context, convert_result=convert_result)

    def built(self) -> Tool:
        """The SDK's tool for this one, built on first use."""
        if self._built is None:
            assert self._build is not None
            real = self._build()
            if describe(real) != self._entry:
                forget()  # cannot happen while the key covers the sources; never list it again
            self._built = real
        return self._built

    @classmethod
    def listed(cls, entry: dict[str, Any], build: Callable[[], Tool]) -> DeferredTool:
        """A tool for the cached ``entry``; ``build()`` makes the SDK's tool on first call."""
        tool = cls.model_construct(
            fn=build,
            name=entry["name"],
            description=entry["description"],
            parameters=entry["input_schema"],
            # what the SDK reads from a listed tool's function metadata: its output schema
            fn_metadata=cast(Any, SimpleNamespace(output_schema=entry["output_schema"])),
            is_async=True,
            context_kwarg=entry["context"],
            resolved_params={},
            resolver_plans={},
            **dict.fromkeys(("title", "annotations", "icons", "meta")),
        )
        tool._build, tool._entry = build, entry
        return tool
