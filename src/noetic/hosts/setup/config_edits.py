"""Changing a host's configuration files safely: plan, show, back up, write, undo.

Every host integration is a list of :class:`FileChange` (one per file, the bytes before and
after), computed without touching anything: :func:`diff` shows them (``--dry-run``), :func:`apply`
checks every file can be written before writing any, backs each up once and writes by rename,
and uninstalling removes only what Noetic added, putting a backup's bytes back when what is left
equals it. A file that does not parse is refused with its path, line and column; a path that
leaves the scope being edited through a symlink is refused before anything is read
(:func:`confine`). What the user sees of this is ``docs/claude-code.md`` ("How files are
changed").
"""

from __future__ import annotations

import contextlib
import difflib
import json
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError, UsageError

BACKUP_SUFFIX = ".noetic-backup"
# Folders a host owns inside a project or home; Noetic removes one only when it is left empty.
HOST_FOLDERS = frozenset({".claude", ".cursor", ".vscode", ".gemini", ".codex"})


@dataclass(frozen=True)
class FileChange:
    """One file: its bytes before (None: absent) and after (None: delete it)."""

    path: Path
    before: bytes | None
    after: bytes | None
    restores_backup: bool = False  # uninstall: ``after`` is the backup, which is then removed
    root: Path | None = None  # the scope the change must stay inside (see confine)
    ours_only: bool = False  # ``before`` holds nothing but Noetic's: no backup of it is kept

    @property
    def changed(self) -> bool:
        return self.before != self.after

    @property
    def backup(self) -> Path:
        return backup_path(self.path)

    def describe(self) -> str:
        if not self.changed:
            return f"{self.path}: unchanged"
        if self.after is None:
            return f"{self.path}: removed (Noetic created it)"
        if self.restores_backup:
            return f"{self.path}: restored from {self.backup.name}"
        if self.before is None:
            return f"{self.path}: created"
        return f"{self.path}: updated"


def backup_path(path: Path) -> Path:
    return path.with_name(path.name + BACKUP_SUFFIX)


def confine(path: Path, root: Path) -> None:
    """Refuse ``path``, or its backup, when reaching it follows a symlink out of ``root``.

    Each step from ``root`` down (the folders, then the file itself) must resolve inside
    ``root``: a folder outside would take the write there, and a file outside would be read
    into the diff and the backup. A symlink that stays inside (``CLAUDE.md -> docs/AI.md``) is
    followed as before."""
    real_root = os.path.realpath(root)
    for target in (path, backup_path(path)):
        try:
            parts = target.relative_to(root).parts
        except ValueError:
            raise UsageError(f"{target} is not inside {root}: nothing was changed") from None
        step = Path(root)
        for part in parts:
            step = step / part
            real = os.path.realpath(step)
            if real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep):
                continue
            link = os.readlink(step) if step.is_symlink() else real
            raise UsageError(
                f"{step} is a symlink to {link} ({real}), outside {root}: following it would "
                f"{'read and ' if step == target else ''}write outside the scope being edited; "
                "nothing was written",
                fix=f"look at what {step} points to; remove the link (or make it by hand) if "
                "Noetic should write there",
            )


def read_bytes(path: Path) -> bytes | None:
    """A configuration file's bytes, or None when it does not exist; a FIFO, a device or a
    folder in its place is refused, and so is one over ``file_bytes``."""
    from noetic.errors import NotFoundError
    from noetic.untrusted import read_file_bytes

    if not os.path.lexists(path):
        return None
    try:
        return read_file_bytes(path, f"the settings file {path}")
    except NotFoundError:  # a dangling symlink
        return None


def decode(data: bytes, path: Path) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InvalidValueError(
            f"{path}:{line}: not valid UTF-8 (byte offset {exc.start}); left untouched",
            field=str(path),
            fix="fix the file by hand, then run the command again",
        ) from None


def parse_json_object(data: bytes | None, path: Path) -> dict[str, Any] | None:
    """The file's top-level JSON object; None when absent; ``{}`` when empty. Malformed JSON or
    another top-level value is refused with the path and line."""
    if data is None:
        return None
    text = decode(data, path)
    if not text.strip():
        return {}
    from noetic.untrusted import check_depth

    check_depth(text, str(path))
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidValueError(
            f"{path}:{exc.lineno}:{exc.colno}: not valid JSON ({exc.msg}); left untouched",
            field=str(path),
            fix="fix the file by hand (or move it away), then run the command again",
        ) from None
    if not isinstance(value, dict):
        raise InvalidValueError(
            f"{path}:1: the top level is a JSON {type(value).__name__}, not an object; "
            "left untouched",
            field=str(path),
        )
    return value


def _indent_of(text: str | None) -> int | str:
    """The indentation the file already uses (2 spaces when it has none)."""
    if text:
        for line in text.splitlines()[1:]:
            stripped = line.lstrip(" \t")
            if stripped and len(stripped) < len(line):
                lead = line[: len(line) - len(stripped)]
                return "\t" if lead.startswith("\t") else len(lead)
    return 2


def dump_json(data: dict[str, Any], like: bytes | None) -> bytes:
    """``data`` as JSON laid out like the file it replaces (indentation, final newline)."""
    text = like.decode("utf-8") if like else None
    out = json.dumps(data, indent=_indent_of(text), ensure_ascii=False)
    if text is None or text.endswith("\n"):
        out += "\n"
    return out.encode("utf-8")


def prune(value: Any) -> Any:
    """``value`` without empty objects and lists, for comparing what is left with the backup."""
    if isinstance(value, dict):
        pruned = {k: prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in ({}, [])}
    if isinstance(value, list):
        return [prune(v) for v in value]
    return value


JsonEdit = Callable[[dict[str, Any], "dict[str, Any] | None"], None]


def json_change(
    path: Path, edit: JsonEdit, *, uninstall: bool, root: Path, strip: JsonEdit | None = None
) -> FileChange:
    """The change ``edit`` makes to the JSON object in ``path``.

    ``edit(data, original)`` changes ``data`` in place; ``original`` is the backup's object
    (what the file held before Noetic first changed it), or None. ``strip`` takes Noetic's
    parts out: a file that holds nothing else (Noetic created it, and a later setup changes
    it, say to switch the kind of hooks) gets no backup, so uninstalling still deletes it.
    """
    import copy

    confine(path, root)
    before = read_bytes(path)
    data = parse_json_object(before, path)
    backup = read_bytes(backup_path(path)) if uninstall else None
    original = parse_json_object(backup, backup_path(path)) if backup is not None else None
    new = copy.deepcopy(data) if data is not None else {}
    edit(new, original)
    if uninstall:
        if data is None:
            return FileChange(path, None, None, root=root)
        if backup is not None and prune(new) == prune(original):
            return FileChange(path, before, backup, restores_backup=True, root=root)
        if backup is None and prune(new) == {} and new != data:
            return FileChange(path, before, None, root=root)
    if new == data:
        return FileChange(path, before, before, root=root)
    ours_only = False
    if strip is not None and data is not None and not backup_path(path).exists():
        rest = copy.deepcopy(data)
        strip(rest, None)
        ours_only = prune(data) != {} and prune(rest) == {}
    return FileChange(path, before, dump_json(new, before), root=root, ours_only=ours_only)


def text_change(
    path: Path, edit: Callable[[str], str], *, uninstall: bool, root: Path
) -> FileChange:
    """The change ``edit`` makes to a text file; on uninstall, text equal to the backup's (but
    for trailing blank lines) restores the backup, and blank text (what the edit leaves of a
    file Noetic created) deletes the file."""
    confine(path, root)
    before = read_bytes(path)
    text = decode(before, path) if before is not None else ""
    new = edit(text)
    if uninstall:
        if before is None:
            return FileChange(path, None, None, root=root)
        backup = read_bytes(backup_path(path))
        if backup is not None and new.rstrip("\n") == decode(backup, path).rstrip("\n"):
            return FileChange(path, before, backup, restores_backup=True, root=root)
        if backup is None and not new.strip() and new != text:
            return FileChange(path, before, None, root=root)
    if new == text:
        return FileChange(path, before, before, root=root)
    return FileChange(path, before, new.encode("utf-8"), root=root)


def diff(changes: list[FileChange]) -> str:
    """A unified diff of every change (empty when nothing would change)."""
    out: list[str] = []
    for c in changes:
        if not c.changed:
            continue
        a = decode(c.before, c.path).splitlines(keepends=True) if c.before else []
        b = decode(c.after, c.path).splitlines(keepends=True) if c.after else []
        lines = difflib.unified_diff(
            a,
            b,
            fromfile=str(c.path) if c.before is not None else "/dev/null",
            tofile=str(c.path) if c.after is not None else "/dev/null",
        )
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _read_only(path: Path) -> bool:
    """Whether the user made ``path`` read-only (mode bits count, for root too)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    return not (mode & stat.S_IWUSR) or not os.access(path, os.W_OK)


def check_writable(changes: list[FileChange]) -> None:
    """Refuse before writing anything when one of the files or its folder is read-only."""
    for c in changes:
        if not c.changed:
            continue
        if _read_only(c.path):
            raise UsageError(
                f"{c.path} is read-only: nothing was changed",
                fix=f"make it writable (chmod u+w {c.path}), or see the change with --dry-run "
                "and make it by hand",
            )
        folder = c.path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        if _read_only(folder):
            raise UsageError(
                f"the folder {folder} is read-only: nothing was changed",
                fix=f"make it writable (chmod u+w {folder}), or see the change with --dry-run",
            )


def apply(changes: list[FileChange]) -> list[FileChange]:
    """Write every change (checking all first); returns the ones that changed something."""
    for c in changes:
        if c.changed and c.root is not None:
            confine(c.path, c.root)
    check_writable(changes)
    done = []
    for c in changes:
        if not c.changed:
            continue
        if c.after is None:
            c.path.unlink()
            if c.path.parent.name in HOST_FOLDERS:  # a host's folder, removed once left empty
                with contextlib.suppress(OSError):
                    c.path.parent.rmdir()
        else:
            if (
                c.before is not None
                and not c.restores_backup
                and not c.ours_only
                and not c.backup.exists()
            ):
                _write(c.backup, c.before, like=c.path)
            _write(c.path, c.after, like=c.path if c.before is not None else None)
            if c.restores_backup:
                c.backup.unlink()
        done.append(c)
    return done


def _write(path: Path, data: bytes, *, like: Path | None) -> None:
    """Write by rename, keeping the mode of ``like`` (the file replaced)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        mode = stat.S_IMODE(like.stat().st_mode) if like is not None and like.exists() else None
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.noetic-tmp")
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(tmp, flags, 0o666), "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError as exc:
        raise UsageError(
            f"cannot write {path}: {exc.strerror or exc}",
            fix="check the file's and its folder's permissions, or use --dry-run",
        ) from None
