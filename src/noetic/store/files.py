"""The two file formats written beside SQLite: a JSON document per session and reflex logs.

Both are derived from SQLite and can be rebuilt from it (:mod:`noetic.store.mirror` keeps them
in step). Every write goes to a temporary file in the same directory, then is renamed over the
target, so a reader sees the old file or the new one, never half of one.

Layout under the store's home::

    sessions/<session_id>.json                           the whole session (export format)
    reflex_logs/<ai_id>/<YYYY-MM-DD>/<session_id>-<seq:04d>-<phase>.json
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """A path component that cannot escape its directory."""
    cleaned = _SAFE.sub("_", text).strip("._")
    return cleaned or "_"


def atomic_write_json(path: Path, data: Any, *, sync: bool = True) -> None:
    """Write ``data`` as one line of JSON by rename; ``sync`` also waits for the disk."""
    # One compact line through the C encoder: several times faster than indented output.
    text = (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(text)
            if sync:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
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


def session_files(home: Path) -> list[Path]:
    """The session JSON documents under ``home``, in name order."""
    folder = home / "sessions"
    return (
        sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))
        if folder.is_dir()
        else []
    )


def refuse_lost_database(home: Path, db_path: Path, state: str) -> None:
    """Raise when the database is gone (``state``: ``missing or empty``, checked before it is
    opened, or ``empty``, once open) while session files still hold the history."""
    if state != "empty" and db_path.exists() and db_path.stat().st_size > 0:
        return
    found = session_files(home)
    if not found:
        return
    from noetic.errors import StoreError

    what = "missing" if not db_path.exists() else "empty"
    raise StoreError(
        f"the store database {db_path} is {what}, but {len(found)} session files in "
        f"{home / 'sessions'} hold its history",
        fix="run `noetic rebuild --from-files` to restore the database from them",
    )


def sweep_temporary_files(home: Path, *, older_than_s: float = 60.0) -> int:
    """Remove temporary files left by writers that were killed mid-write (older than
    ``older_than_s``, so a write in progress keeps its file); the number removed."""
    import time

    cutoff = time.time() - older_than_s
    removed = 0
    for path in home.rglob(".*.tmp"):
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    return removed


def session_json_path(home: Path, session_id: str) -> Path:
    return home / "sessions" / f"{safe_name(session_id)}.json"


def reflex_path(
    home: Path, ai_id: str, created_at: str, session_id: str, seq: int, phase: str
) -> Path:
    day = created_at[:10]
    name = f"{safe_name(session_id)}-{seq:04d}-{safe_name(phase)}.json"
    return home / "reflex_logs" / safe_name(ai_id) / day / name
