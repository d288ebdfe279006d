"""``retrieve``: the user's local documents, searched by meaning through the embedder.

The documents are the text files under a folder (the workspace unless one is configured):
Markdown, text, reStructuredText, code. They are cut into passages of about
:data:`PASSAGE_CHARS` characters at paragraph breaks, embedded once when the tool is first
called (the offline embedder; nothing is downloaded), and the passages nearest the query are
returned with their file and line. Files that change are embedded again on the next call.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.tools.base import Tool, tool

PASSAGE_CHARS = 1200
MAX_FILE_BYTES = 1_000_000
MAX_PASSAGES = 20_000
SUFFIXES = frozenset({".md", ".txt", ".rst", ".org", ".py", ".toml", ".yaml", ".yml", ".json"})
SKIPPED = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", ".noetic", "dist"})


@dataclass(frozen=True)
class Passage:
    path: str
    line: int
    text: str


def _documents(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED and not d.startswith("."))
        for name in sorted(files):
            path = Path(folder) / name
            if path.suffix.lower() in SUFFIXES and not path.is_symlink():
                yield path


def passages(root: Path) -> list[Passage]:
    """Every passage of every document under ``root``, in file order."""
    found: list[Passage] = []
    for path in _documents(root):
        try:
            if path.stat().st_size > MAX_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        found += _cut(str(path.relative_to(root)), text)
        if len(found) >= MAX_PASSAGES:
            return found[:MAX_PASSAGES]
    return found


def _cut(rel: str, text: str) -> list[Passage]:
    out: list[Passage] = []
    buf: list[str] = []
    start = line = 1
    for paragraph in text.split("\n\n"):
        if buf and sum(len(p) for p in buf) + len(paragraph) > PASSAGE_CHARS:
            out.append(Passage(rel, start, "\n\n".join(buf).strip()))
            buf, start = [], line
        buf.append(paragraph[: PASSAGE_CHARS * 2])
        line += paragraph.count("\n") + 2
    if buf and "".join(buf).strip():
        out.append(Passage(rel, start, "\n\n".join(buf).strip()))
    return out


class _Index:
    def __init__(self, root: Path, embedder: Any) -> None:
        self.root = root
        self.embedder = embedder  # None: the offline embedder, loaded on the first search
        self.stamp: tuple[tuple[str, float], ...] | None = None
        self.items: list[Passage] = []
        self.matrix: Any = None

    def _stamp(self) -> tuple[tuple[str, float], ...]:
        stamps = []
        for path in _documents(self.root):
            try:
                stamps.append((str(path), path.stat().st_mtime))
            except OSError:
                continue
        return tuple(stamps)

    def search(self, query: str, k: int) -> list[tuple[Passage, float]]:
        import numpy as np

        from noetic.embeddings import cosine_top_k, recall_embedder

        self.embedder = self.embedder or recall_embedder()
        stamp = self._stamp()
        if stamp != self.stamp:
            self.items = passages(self.root)
            texts = [p.text for p in self.items]
            self.matrix = (
                self.embedder.embed(texts) if texts else np.zeros((0, self.embedder.dimension))
            )
            self.stamp = stamp
        if not self.items:
            return []
        vector = np.asarray(self.embedder.embed([query]))[0]
        return [(self.items[i], score) for i, score in cosine_top_k(vector, self.matrix, k)]


def retrieve_tool(folder: Path, embedder: Any = None) -> Tool:
    """The ``retrieve`` tool over the documents under ``folder``."""
    root = folder.resolve()
    index = _Index(root, embedder)

    def retrieve(query: str, k: int = 5) -> str:
        """Find passages of the user's local documents by meaning.

        Args:
            query: what to look for, in words
            k: how many passages to return (1 to 20)
        """
        if not query.strip():
            raise InvalidValueError("the query is empty", field="query")
        if not 1 <= k <= 20:
            raise InvalidValueError("k must be between 1 and 20", field="k", value=k)
        found = index.search(query, k)
        if not found:
            return f"no documents under {root}"
        return "\n\n".join(
            f"{p.path}:{p.line} (similarity {score:.2f})\n{p.text[:800]}" for p, score in found
        )

    return tool(retrieve, improves_vectors=("know", "context"), confidence_gain=0.1)
