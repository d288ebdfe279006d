"""The files of a git repository that decide what runs outside the sandbox later.

A command inside the sandbox cannot reach outside, but the repository it edits is run by the
user's own git afterwards, outside it: a hook, a ``core.fsmonitor`` command, an alias or a filter
planted in the workspace runs with the user's rights at the next ``git commit``. So the sandbox
keeps these read-only, and the file tools refuse to write them:

- the whole ``.git`` entry, folder or file (a worktree's ``gitdir:`` pointer) — not only
  ``.git/hooks`` and ``.git/config``, which would leave ``cp -r .git newgit``, a hook planted in
  the copy, ``mv .git old.git`` and ``mv newgit .git``, or a new ``.git/hooks`` or
  ``.git/commondir`` where none existed yet. Bound onto itself, ``.git`` is a mount point: it can
  be neither renamed nor replaced, and nothing below it can be created or changed;
- the git folder a ``.git`` file points to, when it lives inside the workspace;
- ``.gitmodules``;
- what the repository's configuration (the user's global one included) reads or names inside
  the workspace: included configuration files, the ``core.hooksPath`` folder (created empty when
  it does not exist yet, so it cannot be planted either) and the programs the configuration runs
  (``core.fsmonitor``, ``core.sshCommand``, editors, pagers, filters, diff and merge drivers…).

The price is that git commands which write the repository (``git add``, ``git commit``) fail
inside the sandbox with "Read-only file system"; reading it (``git status``, ``git diff``,
``git log``) works.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from dataclasses import dataclass

# configuration keys whose value is (or starts with) a program git runs
_PROGRAM_KEY = re.compile(
    r"^(core\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor"
    r"|gpg(\.[^.]+)?\.program|credential(\..+)?\.helper|diff\..+\.(command|textconv)"
    r"|filter\..+\.(clean|smudge|process)|merge\..+\.driver|uploadpack\.packobjectshook)$"
)
_HOOKS_KEY = "core.hookspath"


@dataclass(frozen=True)
class Control:
    """The control paths of one workspace, each real and inside it.

    ``read_only`` exist and are kept read-only; ``folders_to_create`` are folders the
    configuration names that do not exist yet (the hooks folder), made empty before they are
    protected. ``linked_dotgit`` is set when ``.git`` is a symlink: a mount cannot pin a
    symlink in place, so the sandbox refuses to run there rather than leave it replaceable."""

    read_only: tuple[str, ...]
    folders_to_create: tuple[str, ...]
    linked_dotgit: str | None = None

    def covers(self, path: str) -> str | None:
        """The protected path ``path`` is or lies under, if any."""
        for protected in (*self.read_only, *self.folders_to_create):
            if path == protected or path.startswith(protected.rstrip("/") + "/"):
                return protected
        return None


def control_files(workspace: str) -> Control:
    """The repository control files of ``workspace`` (a real path), whatever their state."""
    root = os.path.realpath(workspace)
    found: list[str] = []
    create: list[str] = []

    def keep(path: str) -> None:
        real = os.path.realpath(path)
        if _inside(real, root) and real != root and real not in found:
            found.append(real)

    dotgit = os.path.join(root, ".git")
    linked = os.path.islink(dotgit)
    if os.path.lexists(dotgit):
        keep(dotgit)  # a symlink's target, when that is inside the workspace
        if not linked and os.path.isfile(dotgit):
            pointed = _gitdir_of(dotgit)
            if pointed is not None:
                keep(pointed)
    if os.path.lexists(os.path.join(root, ".gitmodules")):
        keep(os.path.join(root, ".gitmodules"))
    top = _toplevel(root) or root
    for source, key, value in _configuration(root):
        if source:  # a configuration file inside the workspace (an include) is one too
            keep(os.path.join(root, source))
        if key == _HOOKS_KEY:
            target = _resolve(value, top)
            if target is None or not _inside(target, root) or target == root:
                continue
            if os.path.lexists(target):
                keep(target)
            elif target not in create:
                create.append(target)
        elif _PROGRAM_KEY.match(key):
            word = _first_word(value)
            target = _resolve(word, top) if word and "/" in word else None
            if target is not None and os.path.lexists(target):
                keep(target)
    return Control(tuple(found), tuple(create), dotgit if linked else None)


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _gitdir_of(dotgit_file: str) -> str | None:
    """The folder a ``.git`` file's ``gitdir:`` line names (relative to the file's folder)."""
    try:
        with open(dotgit_file, "rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    for line in head.splitlines():
        if line.startswith("gitdir:"):
            named = line[len("gitdir:") :].strip()
            return os.path.join(os.path.dirname(dotgit_file), named) if named else None
    return None


def _toplevel(root: str) -> str | None:
    out = _git(root, "rev-parse", "--show-toplevel")
    return os.path.realpath(out.strip()) if out and out.strip() else None


def _configuration(root: str) -> list[tuple[str, str, str]]:
    """Every (file, key, value) git would use in ``root``, the user's global files included."""
    out = _git(root, "config", "--list", "--show-origin", "-z")
    if not out:
        return []
    fields = out.split("\0")
    entries = []
    for origin, pair in zip(fields[0::2], fields[1::2], strict=False):
        key, _, value = pair.partition("\n")
        if key:
            source = origin[len("file:") :] if origin.startswith("file:") else ""
            entries.append((source, key.lower(), value))
    return entries


def _git(root: str, *args: str) -> str | None:
    """Read-only git plumbing in ``root``; None when git is missing, fails or is not a repo."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        done = subprocess.run(
            ["git", "-C", root, *args],
            capture_output=True,
            timeout=10,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "surrogateescape")


def _first_word(value: str) -> str | None:
    text = value.strip().lstrip("!")
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    return words[0] if words else None


def _resolve(value: str, top: str) -> str | None:
    """A configured path as git reads it: ``~`` expanded, relative ones from the top folder."""
    if not value:
        return None
    path = os.path.expanduser(value)
    return os.path.realpath(path if os.path.isabs(path) else os.path.join(top, path))
