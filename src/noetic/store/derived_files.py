"""The two file formats written beside SQLite: a JSON document per session and reflex logs.

Both are derived from SQLite and can be rebuilt from it (:mod:`noetic.store.mirror` keeps them
in step). Layout under the store's home::

    sessions/<session_id>.json                     the whole session (export format)
    sessions/.<session_id>.grown                   what that document holds, for the next
                                                   process's drain (noetic.store.document)
    reflex_logs/<ai_id>/<YYYY-MM-DD>/<session_id>.jsonl
                                                   one line per assessment of that session and
                                                   day, in ``seq`` order

A session document is replaced whole, by rename (:func:`atomic_write_bytes`); a reflex log only
grows (:func:`extend_lines`). What each promises after a crash, and the one-file-per-assessment
logs of before (``noetic rebuild`` replaces them), are ``docs/storage.md``'s.
"""

from __future__ import annotations

import _thread
import fcntl
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_name(text: str) -> str:
    """A path component that cannot escape its directory."""
    cleaned = _SAFE.sub("_", text).strip("._")
    return cleaned or "_"


def json_line(data: Any) -> bytes:
    """``data`` as one compact line of JSON (through the C encoder: several times faster than
    indented output), newline included."""
    return (json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def atomic_write_json(path: Path, data: Any, *, sync: bool = True) -> None:
    """Write ``data`` as one line of JSON by rename; ``sync`` also waits for the disk."""
    atomic_write_bytes(path, json_line(data), sync=sync)


def atomic_write_bytes(path: Path, text: bytes, *, sync: bool = True) -> None:
    """Replace ``path`` with ``text`` by rename; ``sync`` also waits for the disk."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{_thread.get_ident()}.tmp")
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
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("."))


GITIGNORE = """\
# Written by Noetic when this store was created, so the store does not show as untracked in
# the repository around it (as .pytest_cache/ does). To share the store through git on
# purpose, delete this file; Noetic writes it only when it creates a store.
*
"""


def ignore_itself(home: Path) -> None:
    """Write ``home/.gitignore`` ignoring everything in the store, unless one is there."""
    path = home / ".gitignore"
    try:
        with path.open("x", encoding="utf-8") as fh:
            fh.write(GITIGNORE)
    except FileExistsError:
        pass
    except OSError as exc:  # the store works without it; say why it is missing
        import logging

        logging.getLogger("noetic.store").warning("could not write %s: %s", path, exc)


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


def grown_path(home: Path, session_id: str) -> Path:
    """The record of what the session's document holds (:mod:`noetic.store.document`)."""
    return home / "sessions" / f".{safe_name(session_id)}.grown"


def grown_records(home: Path) -> list[Path]:
    """Every such record under ``home``."""
    folder = home / "sessions"
    return list(folder.glob(".*.grown")) if folder.is_dir() else []


def reflex_path(home: Path, ai_id: str, created_at: str, session_id: str) -> Path:
    """The reflex log holding the lines of ``session_id``'s assessments made on the day of
    ``created_at`` (an ISO timestamp in UTC, or just its date)."""
    day = created_at[:10]
    return home / "reflex_logs" / safe_name(ai_id) / day / f"{safe_name(session_id)}.jsonl"


_LEGACY_REFLEX = r"-\d{4,}-[A-Za-z0-9_.-]+\.json$"  # compiled at its first use


def legacy_reflex_files(home: Path) -> list[Path]:
    """Reflex logs in the layout before lines: one ``<session>-<seq>-<phase>.json`` file per
    assessment."""
    folder = home / "reflex_logs"
    if not folder.is_dir():
        return []
    return [
        p
        for p in folder.glob("*/*/*.json")
        if not p.name.startswith(".") and re.search(_LEGACY_REFLEX, p.name)
    ]


def extend_lines(path: Path, lines: list[tuple[int, bytes]]) -> int | None:
    """Append to the log at ``path`` the ``(seq, line)`` pairs whose ``seq`` is above the last
    line's, so appending the same lines twice (a drain killed before it could say it was done)
    writes them once. Returns how many were appended, or ``None`` when the log's last line is
    unterminated or unreadable (an append cut short): the caller then rewrites the whole log.

    ``lines`` are in rising ``seq`` order, each ending in a newline."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        size = os.fstat(fd).st_size
        last = 0
        if size:
            tail = _last_line(fd, size)
            if tail is None:
                return None
            try:
                last = int(json.loads(tail)["seq"])
            except (ValueError, KeyError, TypeError):
                return None
        data = b"".join(line for seq, line in lines if seq > last)
        if data:
            os.lseek(fd, size, os.SEEK_SET)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        return sum(1 for seq, _ in lines if seq > last)
    finally:
        os.close(fd)


def _last_line(fd: int, size: int, chunk: int = 8192) -> bytes | None:
    """The last line of the file (without its newline), or ``None`` if it is unterminated."""
    if os.pread(fd, 1, size - 1) != b"\n":
        return None
    parts: list[bytes] = []
    pos = size - 1  # the line ends before its newline
    while pos > 0:
        step = min(chunk, pos)
        block = os.pread(fd, step, pos - step)
        cut = block.rfind(b"\n")
        if cut >= 0:
            parts.append(block[cut + 1 :])
            break
        parts.append(block)
        pos -= step
    return b"".join(reversed(parts))
