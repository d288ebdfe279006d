"""File tools confined to a sandbox root: read, write, edit and list.

A path must resolve inside the root; checking alone would leave a race (a folder swapped for a
symlink between the check and the open), so each file is then opened by walking the resolved
path from the root with ``O_NOFOLLOW`` (the ``openat`` discipline), and a write goes to a
temporary file renamed over the target. Writes honour the shell policy's write rules and never
touch the repository's control files (:mod:`noetic.tools.repository`) nor the rest of the
protected set (docs/agent.md, "The file tools").
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from noetic.errors import InvalidValueError, PolicyRefusal
from noetic.tools.base import Tool, tool
from noetic.tools.repository import control_files
from noetic.tools.shellgate import Policy, load_policy
from noetic.tools.shellgate.protected import configured, protected_set
from noetic.tools.shellgate.write_rules import write_refusal

MAX_READ_BYTES = 2_000_000
MAX_WRITE_CHARS = 2_000_000
MAX_LISTED = 500
SKIPPED = frozenset({".git", ".venv", "node_modules", "__pycache__", ".mypy_cache", ".ruff_cache"})
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class SandboxRoot:
    """A folder that paths given by a model must stay inside."""

    def __init__(self, root: Path | str, policy: Policy | None = None) -> None:
        self.root = os.path.realpath(root)
        if not os.path.isdir(self.root):
            raise InvalidValueError(f"the sandbox root {root} is not a folder", field="workspace")
        self.policy = policy or load_policy()

    def locate(self, path: str) -> tuple[str, list[str]]:
        """``path``'s real location and its components below the root; refused if outside."""
        if "\0" in path:
            raise InvalidValueError("the path holds a NUL character", field="path", value=path)
        if not path.strip():
            raise InvalidValueError("the path is empty", field="path", value=path)
        target = path if os.path.isabs(path) else os.path.join(self.root, path)
        real = os.path.realpath(target)
        if real != self.root and not real.startswith(self.root.rstrip("/") + "/"):
            raise InvalidValueError(
                f"path {path!r} is outside the workspace (it resolves to {real})",
                field="path",
                value=path,
                fix="use a path inside the workspace",
            )
        rel = os.path.relpath(real, self.root)
        return real, [] if rel == "." else rel.split(os.sep)

    @contextmanager
    def folder(self, parts: list[str], *, create: bool = False) -> Iterator[int]:
        """A descriptor of the folder ``parts`` names, reached without following symlinks."""
        fd = os.open(self.root, _DIR_FLAGS)
        try:
            for part in parts:
                try:
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(part, 0o755, dir_fd=fd)
                    nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
                except OSError as exc:
                    raise _swapped(part, exc) from None
                os.close(fd)
                fd = nxt
            yield fd
        finally:
            os.close(fd)

    def read_bytes(self, path: str, limit: int = MAX_READ_BYTES) -> bytes:
        _, parts = self.locate(path)
        if not parts:
            raise InvalidValueError(f"{path!r} is the workspace folder, not a file", field="path")
        try:
            with self.folder(parts[:-1]) as parent:
                fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent)
        except FileNotFoundError:
            raise InvalidValueError(f"no file {path!r} in the workspace", field="path") from None
        except OSError as exc:
            raise _swapped(path, exc) from None
        with os.fdopen(fd, "rb") as fh:
            if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
                raise InvalidValueError(f"{path!r} is not a regular file", field="path")
            return fh.read(limit + 1)

    def write_text(self, path: str, content: str) -> int:
        real, parts = self.locate(path)
        if not parts:
            raise InvalidValueError(f"{path!r} is the workspace folder, not a file", field="path")
        refusal = write_refusal(self.policy, real, workspace=self.root)
        if refusal is not None:
            raise PolicyRefusal(
                f"writing {path!r} is refused by the shell policy's rule {refusal.rule}: "
                f"{refusal.reason}",
                rule=refusal.rule,
                field="path",
                value=path,
            )
        _refuse_control_file(path, real, parts, self.root)
        data = content.encode("utf-8", errors="surrogatepass")
        with self.folder(parts[:-1], create=True) as parent:
            try:
                existing = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False)
            except FileNotFoundError:
                existing = None
            if existing is not None and stat.S_ISDIR(existing.st_mode):
                raise InvalidValueError(f"{path!r} is a folder", field="path")
            mode = stat.S_IMODE(existing.st_mode) if existing is not None else 0o644
            temp = f".{parts[-1]}.{secrets.token_hex(4)}.tmp"
            fd = os.open(
                temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode, dir_fd=parent
            )
            try:
                with os.fdopen(fd, "wb") as fh:
                    fh.write(data)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(temp, parts[-1], src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with suppress(FileNotFoundError):
                    os.unlink(temp, dir_fd=parent)
                raise
        return len(data)


def _refuse_control_file(path: str, real: str, parts: list[str], root: str) -> None:
    """Refuse a write to what the user's git runs later: anything in a ``.git``, at any depth
    (a new one would be a repository with its own hooks), and the other control files."""
    control = control_files(root)
    protected = ".git" if ".git" in parts else control.covers(real)
    if protected is not None:
        raise InvalidValueError(
            f"writing {path!r} is refused: {protected} is a control file of the repository "
            "(git hooks, configuration or what they run), which runs outside the sandbox later",
            field="path",
            value=path,
        )
    try:
        extra = configured(root)
    except ValueError as exc:
        raise InvalidValueError(
            f"writing {path!r} is refused: the protected set cannot be read: {exc}", field="path"
        ) from None
    later = protected_set(root, home=os.path.expanduser("~"), extra=extra, control=control)
    if later.covers(real):
        raise InvalidValueError(
            f"writing {path!r} is refused: the developer's own tools run it later, outside the "
            f"sandbox ({later.why(real)})",
            field="path",
            value=path,
        )


def _swapped(path: str, exc: OSError) -> InvalidValueError:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return InvalidValueError(
            f"path {path!r} changed while it was opened (a symlink where a folder or file was); "
            "refused",
            field="path",
            value=path,
        )
    return InvalidValueError(f"cannot open {path!r}: {exc.strerror}", field="path", value=path)


def _text(data: bytes, path: str) -> str:
    if b"\0" in data[:8192]:
        raise InvalidValueError(f"{path!r} is a binary file", field="path")
    return data.decode("utf-8", errors="replace")


def file_tools(workspace: Path, policy: Policy | None = None) -> list[Tool]:
    """``file_read``, ``file_write``, ``file_edit`` and ``file_list``, confined to ``workspace``."""
    box = SandboxRoot(workspace, policy)

    def file_read(path: str, offset: int = 1, limit: int = 400) -> str:
        """Read a text file in the workspace, with line numbers.

        Args:
            path: the file, relative to the workspace
            offset: the first line to show (1 is the first line)
            limit: how many lines to show
        """
        if offset < 1 or limit < 1:
            raise InvalidValueError("offset and limit must be at least 1", field="offset")
        data = box.read_bytes(path)
        cut = len(data) > MAX_READ_BYTES
        lines = _text(data[:MAX_READ_BYTES], path).splitlines()
        shown = lines[offset - 1 : offset - 1 + limit]
        out = "\n".join(f"{offset + i:>6} {line}" for i, line in enumerate(shown))
        rest = len(lines) - (offset - 1 + len(shown))
        if rest > 0:
            out += f"\n… {rest} more line(s); read on with offset={offset + len(shown)}"
        if cut:
            out += f"\n… the file is longer than {MAX_READ_BYTES} bytes; only its start was read"
        return out or "(empty file)"

    def file_write(path: str, content: str) -> str:
        """Create or replace a text file in the workspace (folders are created as needed).

        Args:
            path: the file, relative to the workspace
            content: the whole new content of the file
        """
        if len(content) > MAX_WRITE_CHARS:
            raise InvalidValueError(
                f"content of {len(content)} characters is over {MAX_WRITE_CHARS}", field="content"
            )
        written = box.write_text(path, content)
        return f"wrote {written} bytes to {path}"

    def file_edit(path: str, old: str, new: str, replace_all: bool = False) -> str:
        """Replace exact text in a file of the workspace.

        Args:
            path: the file, relative to the workspace
            old: the exact text to replace; it must occur once unless replace_all is true
            new: the text to put in its place
            replace_all: replace every occurrence instead of exactly one
        """
        if not old:
            raise InvalidValueError("old text is empty", field="old")
        text = _text(box.read_bytes(path), path)
        count = text.count(old)
        if count == 0:
            raise InvalidValueError(f"the old text does not occur in {path!r}", field="old")
        if count > 1 and not replace_all:
            raise InvalidValueError(
                f"the old text occurs {count} times in {path!r}",
                field="old",
                fix="give more surrounding text so it occurs once, or set replace_all",
            )
        box.write_text(path, text.replace(old, new) if replace_all else text.replace(old, new, 1))
        return f"replaced {count if replace_all else 1} occurrence(s) in {path}"

    def file_list(path: str = ".", depth: int = 2) -> str:
        """List files and folders of the workspace (symlinks shown, never followed).

        Args:
            path: the folder to list, relative to the workspace
            depth: how many levels below it to show
        """
        _, parts = box.locate(path)
        lines: list[str] = []
        try:
            with box.folder(parts) as fd:
                _walk(fd, 0, max(1, depth), lines)
        except FileNotFoundError:
            raise InvalidValueError(f"no folder {path!r} in the workspace", field="path") from None
        if len(lines) >= MAX_LISTED:
            lines.append(f"… stopped at {MAX_LISTED} entries; list a smaller folder")
        return "\n".join(lines) or "(empty)"

    return [
        tool(file_read, improves_vectors=("know", "context", "state")),
        tool(file_write),
        tool(file_edit),
        tool(file_list, improves_vectors=("context", "state"), confidence_gain=0.05),
    ]


def _walk(fd: int, level: int, depth: int, lines: list[str]) -> None:
    with os.scandir(fd) as entries:
        items = sorted(entries, key=lambda e: e.name)
    for entry in items:
        if len(lines) >= MAX_LISTED:
            return
        indent = "  " * level
        if entry.is_symlink():
            lines.append(f"{indent}{entry.name} -> {os.readlink(entry.name, dir_fd=fd)}")
        elif entry.is_dir(follow_symlinks=False):
            lines.append(f"{indent}{entry.name}/")
            if level + 1 < depth and entry.name not in SKIPPED:
                try:
                    child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                try:
                    _walk(child, level + 1, depth, lines)
                finally:
                    os.close(child)
        else:
            lines.append(f"{indent}{entry.name}")
