"""The files of a git repository that decide what runs outside the sandbox later.

A command inside the sandbox cannot reach outside, but the user's own git runs the repository it
edits afterwards: a hook, a ``core.fsmonitor`` command, an alias or a filter planted in the
workspace runs with the user's rights at the next ``git commit``. So the sandbox keeps these
read-only and the file tools refuse to write them: the whole ``.git`` entry (bound onto itself, a
mount point can be neither renamed nor replaced, so no copy carrying a planted hook can take its
place), the git folder a ``.git`` file points to, ``.gitmodules``, and what git's configuration
reads or runs from inside the workspace. docs/agent.md ("The repository's control files") lists
them, and the price: git commands that write the repository fail inside the sandbox.
"""

from __future__ import annotations

import os
import re
import shlex

from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# configuration keys whose value is (or starts with) a program git runs
_PROGRAM_KEY = re.compile(
    r"^(core\.(fsmonitor|sshcommand|pager|editor|askpass|gitproxy)|sequence\.editor"
    r"|gpg(\.[^.]+)?\.program|credential(\..+)?\.helper|diff\..+\.(command|textconv)"
    r"|filter\..+\.(clean|smudge|process)|merge\..+\.driver|uploadpack\.packobjectshook)$"
)
_HOOKS_KEY = "core.hookspath"


class Control(NamedTuple):
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
            pointed = gitdir_of(dotgit)
            if pointed is not None:
                keep(pointed)
    if os.path.lexists(os.path.join(root, ".gitmodules")):
        keep(os.path.join(root, ".gitmodules"))
    top, configuration = repository_view(root)
    top = top or root
    for source, key, value in configuration:
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


def git_folders(dotgit: str) -> tuple[str, str] | None:
    """The git folder a ``.git`` entry stands for (itself, or the folder its ``gitdir:`` line
    names) and its common folder (a worktree's ``commondir``; else the same folder)."""
    gitdir = dotgit if os.path.isdir(dotgit) else gitdir_of(dotgit)
    if gitdir is None:
        return None
    common = gitdir
    try:
        with open(os.path.join(gitdir, "commondir"), encoding="utf-8") as fh:
            common = os.path.join(gitdir, fh.read().strip())
    except (OSError, UnicodeDecodeError):
        pass
    return gitdir, common


def gitdir_of(dotgit_file: str) -> str | None:
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
    pairs = zip(fields[0::2], (pair.partition("\n") for pair in fields[1::2]), strict=False)
    return [
        (origin[len("file:") :] if origin.startswith("file:") else "", key.lower(), value)
        for origin, (key, _, value) in pairs
        if key
    ]


def _git(root: str, *args: str) -> str | None:
    """Read-only git plumbing in ``root``; None when git is missing, fails or is not a repo."""
    import subprocess

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


# What git's answers in a folder depend on, so that they can be kept (:func:`repository_view`).
# ``GIT_*`` variables are not among them: :func:`_git` runs git without them.
_ENVIRONMENT = ("HOME", "XDG_CONFIG_HOME", "PATH")
_INCLUDE_KEY = re.compile(r"^include(if\..*)?\.path$")


def repository_view(root: str) -> tuple[str | None, list[tuple[str, str, str]]]:
    """git's top folder for ``root`` and every (file, key, value) of its configuration: what
    ``git rev-parse --show-toplevel`` and ``git config --list --show-origin`` answer there.

    Asking git is two processes, on every call of Claude Code's PreToolUse hook, so the answers
    are kept in :mod:`noetic.cached`'s cache, named by everything that decides which files git
    reads (:func:`_situation`). A kept answer is used only while every file git reads them from,
    or would read them from if it existed (:func:`_read_by_git`, and the includes), holds the
    same bytes (or is still absent) as when git was asked; otherwise git is asked again."""
    from noetic import cached

    git = _which("git")
    situation = _situation(root, git)
    kept = cached.read("git-view", situation)
    if (
        isinstance(kept, dict)
        and isinstance(kept.get("files"), list)
        and all(_stamp(path) == stamp for path, stamp in kept["files"])
    ):
        return kept["top"], [tuple(entry) for entry in kept["config"]]
    known = _read_by_git(root, git)
    stamps = [(path, _stamp(path)) for path in known]  # before git reads them
    top, configuration = _toplevel(root), _configuration(root)
    if _read_by_git(root, git) != known:  # a `.git` file or `commondir` changed meanwhile
        return top, configuration
    includes = [p for p in _included(root, configuration) if p not in known]
    if includes:  # stamped after git read them: kept only if git still answers the same
        stamps += [(path, _stamp(path)) for path in includes]
        if (_toplevel(root), _configuration(root)) != (top, configuration):
            return top, configuration
    value = {"top": top, "config": [list(e) for e in configuration], "files": stamps}
    cached.write("git-view", situation, value)
    return top, configuration


def _which(program: str) -> str | None:
    """The file ``program`` runs as from ``PATH``, as a process started without a shell finds
    it (``shutil.which`` without importing shutil)."""
    for folder in os.environ.get("PATH", os.defpath).split(os.pathsep):
        path = os.path.join(folder or ".", program)
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _situation(root: str, git: str | None) -> list[bytes]:
    """What decides which repository git finds in ``root`` and which files it reads."""
    parts: list[Any] = [root, os.getuid() if hasattr(os, "getuid") else -1]
    parts += [os.environ.get(name) for name in _ENVIRONMENT]
    if git is not None:
        real = os.path.realpath(git)
        info = os.stat(real)
        parts += [real, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]
    for folder in _upward(root):
        try:
            info = os.stat(folder)
            parts.append((folder, info.st_dev, info.st_ino, info.st_uid))
        except OSError:
            parts.append((folder, None))
        try:
            dotgit = os.lstat(os.path.join(folder, ".git"))
            # not its times: a `.git` folder's change whenever git writes inside it
            parts.append((dotgit.st_mode, dotgit.st_ino, dotgit.st_dev, dotgit.st_uid))
        except OSError:
            parts.append(None)
    return [repr(parts).encode("utf-8", "surrogateescape")]


def _upward(folder: str) -> list[str]:
    """``folder`` and each folder above it, up to ``/``."""
    found = [folder]
    while (parent := os.path.dirname(found[-1])) != found[-1]:
        found.append(parent)
    return found


def _read_by_git(root: str, git: str | None) -> list[str]:
    """The files git reads its configuration and repository from in ``root`` (the includes
    aside), whether or not they exist."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = ["/etc/gitconfig", os.path.join(xdg, "git", "config"), os.path.join(home, ".gitconfig")]
    if git is not None:  # a git installed under a prefix reads PREFIX/etc/gitconfig
        prefix = os.path.dirname(os.path.dirname(os.path.realpath(git)))
        files.append(os.path.join(prefix, "etc", "gitconfig"))
    for folder in _upward(root):
        dotgit = os.path.join(folder, ".git")
        if os.path.lexists(dotgit):
            files.append(dotgit)  # a `gitdir:` file's bytes; a folder's identity
            found = git_folders(dotgit)
            if found is not None:
                gitdir, common = found
                files += [os.path.join(gitdir, n) for n in ("commondir", "HEAD", "config.worktree")]
                files += [os.path.join(common, n) for n in ("config", "objects", "refs")]
    return list(dict.fromkeys(files))


def _included(root: str, configuration: list[tuple[str, str, str]]) -> list[str]:
    """The files the configuration's ``include.path`` and ``includeIf.*.path`` name, each as
    git reads it: ``~`` expanded, a relative one from the including file's folder."""
    found = []
    for source, key, value in configuration:
        if not _INCLUDE_KEY.match(key) or not value:
            continue
        path = os.path.expanduser(value)
        if not os.path.isabs(path):
            if not source:
                continue  # from the command line or a blob: relative to nothing git reads
            path = os.path.join(os.path.dirname(os.path.join(root, source)), path)
        found.append(os.path.normpath(path))
    return list(dict.fromkeys(found))


def _stamp(path: str) -> Any:
    """What ``path`` holds: a regular file's bytes' digest, anything else's kind and identity
    (a FIFO is not waited on), or its absence."""
    import stat

    from noetic.cached import blake2b

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as exc:
        return ["error", exc.errno]
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return ["other", info.st_mode, info.st_ino, info.st_dev]
        digest = blake2b()
        while chunk := os.read(fd, 1 << 16):
            digest.update(chunk)
        return ["file", digest.hexdigest()]
    except OSError as exc:
        return ["error", exc.errno]
    finally:
        os.close(fd)
