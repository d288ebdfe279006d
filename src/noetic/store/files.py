"""The two file formats written beside SQLite: a JSON document per session and reflex logs.

Both are derived from SQLite and can be rebuilt from it. Every write goes to a temporary file
in the same directory, is flushed to disk, then renamed over the target, so a reader sees the
old file or the new one, never half of one.

Layout under the store's home::

    sessions/<session_id>.json                           the whole session (export format)
    reflex_logs/<ai_id>/<YYYY-MM-DD>/<session_id>-<seq:04d>-<phase>.json
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """A path component that cannot escape its directory."""
    cleaned = _SAFE.sub("_", text).strip("._")
    return cleaned or "_"


def atomic_write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        # One compact line through the C encoder: several times faster than indented output,
        # which matters because session files are rewritten after every write.
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock held across processes (POSIX ``flock``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+b") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def session_json_path(home: Path, session_id: str) -> Path:
    return home / "sessions" / f"{safe_name(session_id)}.json"


def reflex_path(
    home: Path, ai_id: str, created_at: str, session_id: str, seq: int, phase: str
) -> Path:
    day = created_at[:10]
    name = f"{safe_name(session_id)}-{seq:04d}-{safe_name(phase)}.json"
    return home / "reflex_logs" / safe_name(ai_id) / day / name
