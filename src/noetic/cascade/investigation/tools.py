"""Investigation tools: plugins from Python, from the ``noetic.tools`` entry points, the
built-in workspace tools, and tools of external MCP servers.

A tool is an :class:`InvestigationPlugin`: a name, a description the model reads, the vectors it
improves, an expected confidence gain, and an executor that takes keyword arguments and returns
text (sync or async). Entry points in the ``noetic.tools`` group name a factory that takes the
workspace and returns a plugin; the built-ins register the same way.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from noetic.errors import ValidationError
from noetic.vectors import VECTOR_NAMES

MAX_OUTPUT = 4000
ENTRY_POINT_GROUP = "noetic.tools"


class InvestigationPlugin(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]*$")
    description: str
    improves_vectors: tuple[str, ...] = ()
    confidence_gain: float = Field(0.1, ge=0, le=1)
    executor: Callable[..., Any]

    @field_validator("improves_vectors")
    @classmethod
    def _known(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = [v for v in value if v not in VECTOR_NAMES]
        if unknown:
            raise ValueError(f"unknown vectors: {', '.join(unknown)}")
        return value

    async def run(self, arguments: dict[str, Any]) -> str:
        result = self.executor(**arguments)
        if inspect.isawaitable(result):
            result = await result
        text = result if isinstance(result, str) else str(result)
        return text if len(text) <= MAX_OUTPUT else text[:MAX_OUTPUT] + "\n… (truncated)"


def _inside(workspace: Path, path: str) -> Path:
    target = (workspace / path).resolve()
    if target != workspace and workspace not in target.parents:
        raise ValidationError(f"path {path!r} is outside the workspace", field="path", value=path)
    return target


def read_file_plugin(workspace: Path) -> InvestigationPlugin:
    root = workspace.resolve()

    def read_file(path: str, max_lines: int = 200) -> str:
        target = _inside(root, path)
        if not target.is_file():
            raise ValidationError(f"no file {path!r} in the workspace", field="path", value=path)
        lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(f"{i + 1:>5} {line}" for i, line in enumerate(lines[:max_lines]))

    return InvestigationPlugin(
        name="read_file",
        description="Read a text file in the workspace: read_file(path, max_lines=200).",
        improves_vectors=("know", "context", "state"),
        confidence_gain=0.1,
        executor=read_file,
    )


def list_tree_plugin(workspace: Path) -> InvestigationPlugin:
    root = workspace.resolve()

    def list_tree(path: str = ".", depth: int = 2) -> str:
        base = _inside(root, path)
        if not base.is_dir():
            raise ValidationError(f"no folder {path!r} in the workspace", field="path")
        out = []
        for item in sorted(base.rglob("*")):
            rel = item.relative_to(base)
            if len(rel.parts) > depth or any(p.startswith(".") for p in rel.parts):
                continue
            out.append(f"{'  ' * (len(rel.parts) - 1)}{item.name}{'/' if item.is_dir() else ''}")
        return "\n".join(out) or "(empty)"

    return InvestigationPlugin(
        name="list_tree",
        description="List files and folders in the workspace: list_tree(path='.', depth=2).",
        improves_vectors=("context", "state"),
        confidence_gain=0.05,
        executor=list_tree,
    )


def search_text_plugin(workspace: Path) -> InvestigationPlugin:
    root = workspace.resolve()

    def search_text(pattern: str, path: str = ".", max_hits: int = 50) -> str:
        base = _inside(root, path)
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ValidationError(f"bad pattern {pattern!r}: {exc}", field="pattern") from None
        hits = []
        files = [base] if base.is_file() else sorted(base.rglob("*"))
        for file in files:
            if not file.is_file() or any(p.startswith(".") for p in file.relative_to(root).parts):
                continue
            try:
                text = file.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for n, line in enumerate(text.splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{file.relative_to(root)}:{n}: {line.strip()}")
                    if len(hits) >= max_hits:
                        return "\n".join(hits)
        return "\n".join(hits) or "no matches"

    return InvestigationPlugin(
        name="search_text",
        description="Search the workspace for a regular expression: search_text(pattern, "
        "path='.').",
        improves_vectors=("know", "context", "signal"),
        confidence_gain=0.1,
        executor=search_text,
    )


def discover(workspace: Path) -> list[InvestigationPlugin]:
    """Every tool registered under the ``noetic.tools`` entry points, built for ``workspace``."""
    found = []
    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        plugin = ep.load()(workspace)
        if not isinstance(plugin, InvestigationPlugin):
            raise ValidationError(
                f"entry point {ep.name!r} returned {type(plugin).__name__}, not an "
                "InvestigationPlugin",
                field="noetic.tools",
            )
        found.append(plugin)
    return found
