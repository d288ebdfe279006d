"""The built-in workspace tools: read a file, list a folder, search text.

Each factory takes the workspace and returns a :class:`~noetic.tools.base.Tool` bound to it
(the ``noetic.tools`` entry points name these factories). Paths are resolved with symlinks
followed and must stay inside the workspace. Searching and listing skip what the project
ignores: in a git repository the files git would show (``git ls-files --cached --others
--exclude-standard``), elsewhere everything but hidden folders and well-known environment
folders (``.venv``, ``node_modules``, ``__pycache__``…).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from noetic.errors import InvalidValueError
from noetic.tools.base import Tool, tool

SKIPPED_DIRS = frozenset(
    {"node_modules", "__pycache__", "venv", "env", "dist", "build", "target", "site-packages"}
)


def inside(workspace: Path, path: str) -> Path:
    """``path`` resolved (symlinks followed) within ``workspace``, else a InvalidValueError."""
    target = (workspace / path).resolve()
    if target != workspace and workspace not in target.parents:
        raise InvalidValueError(f"path {path!r} is outside the workspace", field="path", value=path)
    return target


def project_files(root: Path, base: Path) -> list[Path]:
    """The files under ``base`` the project does not ignore, sorted."""
    listed = _git_files(root, base)
    if listed is not None:
        return listed
    return sorted(
        item
        for item in base.rglob("*")
        if not any(p.startswith(".") or p in SKIPPED_DIRS for p in item.relative_to(root).parts)
        and item.is_file()
    )


_EXCLUDE = ("--exclude-standard",)


def _git_files(root: Path, base: Path) -> list[Path] | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(base), "ls-files", "-z", "--cached", "--others", *_EXCLUDE],
            capture_output=True,
            timeout=10,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    paths = [
        (base / raw.decode("utf-8", "surrogateescape")).resolve() for raw in out.split(b"\0") if raw
    ]
    return sorted(p for p in paths if p.is_file() and (p == root or root in p.parents))


def read_file_tool(workspace: Path) -> Tool:
    root = workspace.resolve()

    def read_file(path: str, max_lines: int = 200) -> str:
        """Read a text file in the workspace, with line numbers.

        Args:
            path: the file, relative to the workspace
            max_lines: how many lines to return from the start
        """
        target = inside(root, path)
        if not target.is_file():
            raise InvalidValueError(f"no file {path!r} in the workspace", field="path", value=path)
        lines = target.read_text(encoding="utf-8", errors="replace").splitlines()
        return "\n".join(f"{i + 1:>5} {line}" for i, line in enumerate(lines[:max_lines]))

    return tool(read_file, improves_vectors=("know", "context", "state"), confidence_gain=0.1)


def list_tree_tool(workspace: Path) -> Tool:
    root = workspace.resolve()

    def list_tree(path: str = ".", depth: int = 2) -> str:
        """List the files and folders of the workspace the project does not ignore.

        Args:
            path: the folder to list, relative to the workspace
            depth: how many levels below it to show
        """
        base = inside(root, path)
        if not base.is_dir():
            raise InvalidValueError(f"no folder {path!r} in the workspace", field="path")
        shown: set[Path] = set()
        for file in project_files(root, base):
            rel = file.relative_to(base)
            for n in range(1, min(len(rel.parts), depth) + 1):
                shown.add(Path(*rel.parts[:n]))
        lines = [
            f"{'  ' * (len(p.parts) - 1)}{p.name}{'/' if (base / p).is_dir() else ''}"
            for p in sorted(shown)
        ]
        return "\n".join(lines) or "(empty)"

    return tool(list_tree, improves_vectors=("context", "state"), confidence_gain=0.05)


def search_text_tool(workspace: Path) -> Tool:
    root = workspace.resolve()

    def search_text(pattern: str, path: str = ".", max_hits: int = 50) -> str:
        """Search the workspace's files for a regular expression, line by line.

        Args:
            pattern: a Python regular expression
            path: a folder or file to search, relative to the workspace
            max_hits: stop after this many matching lines
        """
        base = inside(root, path)
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise InvalidValueError(f"bad pattern {pattern!r}: {exc}", field="pattern") from None
        hits = []
        for file in [base] if base.is_file() else project_files(root, base):
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

    return tool(search_text, improves_vectors=("know", "context", "signal"), confidence_gain=0.1)
