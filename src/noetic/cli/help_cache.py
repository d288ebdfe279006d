"""``noetic --help`` from the cache: typer's own text, rendered once and replayed (docs/limits.md).

Building the whole typer application to print the list of commands costs ten times what
starting Python does. The copy is named by a hash of everything the text can depend on
(:func:`_path`), so the text replayed is always the one typer would print now.
``NOETIC_CLI_FAST=0`` skips the cache, as it skips the fast path.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


FORMAT = 1
# what typer, click and rich read from the environment to decide how help looks
_ENVIRONMENT = ("TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "TTY_COMPATIBLE",
                "TTY_INTERACTIVE", "COLUMNS", "LINES", "JUPYTER_COLUMNS", "JUPYTER_LINES",
                "LANG", "LC_ALL", "LC_CTYPE", "PYTHONIOENCODING")  # fmt: skip
_PREFIXES = ("TYPER_", "_TYPER", "RICH_", "CLICK_", "_NOETIC_COMPLETE", "NOETIC_CLI")


def _path(args: list[str]) -> Path:
    from noetic.cached import blake2b, cache_dir, source_files

    parts = [str(FORMAT), sys.version, sys.executable, sys.argv[0], "\0".join(args)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parts += [
        f"{path}:{st.st_size}:{st.st_mtime_ns}"
        for path, st in source_files(root, (".py", ".yaml", ".txt", ".toml"))
    ]
    for folder in sys.path:
        if folder.endswith("-packages"):
            with contextlib.suppress(OSError):
                parts.append(f"{folder}:{os.stat(folder).st_mtime_ns}")
    for fd in (0, 1, 2):
        try:
            size: Any = tuple(os.get_terminal_size(fd))
        except OSError:
            size = None
        parts.append(f"{fd}:{os.isatty(fd)}:{size}")
    parts.append(str(getattr(sys.stdout, "encoding", None)))
    parts += [
        f"{k}={v}" for k, v in sorted(os.environ.items())
        if k in _ENVIRONMENT or k.startswith(_PREFIXES)
    ]  # fmt: skip
    digest = blake2b("\n".join(parts).encode("utf-8", "surrogateescape"), digest_size=20)
    return cache_dir() / f"help-{digest.hexdigest()}.txt"


class _Copy:
    """Standard output as typer sees it, with what is written kept."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.written: list[str] = []

    def write(self, text: str) -> int:
        count = self.stream.write(text)  # bytes (click probing for a binary stream) raise here
        self.written.append(text)
        return int(count)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def show(args: list[str], run: Any) -> None:
    """Print the help ``args`` ask for: from the cache, else by ``run()`` (typer), keeping its
    output when it ends normally."""
    path: Path | None = None
    text: str | None = None
    try:
        path = _path(args)
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeError):
        pass
    if text is not None:
        sys.stdout.write(text)
        sys.stdout.flush()
        raise SystemExit(0)
    copy = _Copy(sys.stdout)
    sys.stdout = copy
    try:
        run()
    except SystemExit as exc:
        if exc.code in (0, None) and path is not None:
            from noetic.store.derived_files import atomic_write_bytes

            with contextlib.suppress(OSError):  # no cache folder: the next --help renders again
                atomic_write_bytes(path, "".join(copy.written).encode("utf-8"), sync=False)
        raise
    finally:
        sys.stdout = copy.stream
