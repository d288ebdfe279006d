"""The OS sandbox the shell tool runs commands in: bubblewrap on Linux.

The system read-only and only the workspace writable, ``/tmp``, ``/var/tmp`` and ``/run`` private,
the home folder hidden, the repository's control files, Noetic's store and the rest of the
protected set read-only and pinned in place, no network unless the policy allows it, every
capability dropped: a command the gate misjudges still cannot reach outside. ``auto`` uses
bubblewrap when it works here and says so when it does not; ``required`` refuses to run without
it; ``off`` never uses it (docs/agent.md, "The shell tool and the sandbox").
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from noetic.errors import UsageError
from noetic.tools.repository import control_files
from noetic.tools.shellgate.protected import configured, protected_set

if TYPE_CHECKING:
    from asyncio.subprocess import Process

SANDBOX_MODES: tuple[str, ...] = ("required", "auto", "off")


@dataclass(frozen=True)
class Sandbox:
    """Which sandbox commands run in; ``binary`` is None when they run without one."""

    binary: str | None
    note: str

    @property
    def name(self) -> str:
        return "bubblewrap" if self.binary else "none"


@cache
def detect() -> Sandbox:
    """Bubblewrap when it is installed and can create a sandbox here (namespaces allowed)."""
    binary = shutil.which("bwrap")
    if binary is None:
        return Sandbox(None, "bubblewrap (bwrap) is not installed")
    true = shutil.which("true") or "/bin/true"
    try:
        probe = subprocess.run(
            [binary, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", true],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return Sandbox(None, f"bubblewrap could not start: {exc}")
    if probe.returncode != 0:
        reason = probe.stderr.decode("utf-8", "replace").strip() or f"exit {probe.returncode}"
        return Sandbox(None, f"bubblewrap cannot create a sandbox here: {reason}")
    return Sandbox(binary, "bubblewrap: system read-only, only the workspace writable")


def choose(mode: str) -> Sandbox:
    """The sandbox for ``mode`` (required, auto, off); required without one is an error."""
    if mode not in SANDBOX_MODES:
        raise UsageError(
            f"unknown sandbox mode {mode!r}", fix=f"use one of {', '.join(SANDBOX_MODES)}"
        )
    if mode == "off":
        return Sandbox(None, "the sandbox is off: the shell gate alone decides")
    found = detect()
    if found.binary is None:
        if mode == "required":
            raise UsageError(
                f"--sandbox required, but no OS sandbox is available: {found.note}",
                fix="install bubblewrap (apt-get install bubblewrap), or use --sandbox auto",
            )
        return Sandbox(None, f"no OS sandbox ({found.note}): the shell gate alone decides")
    return found


def _read_only(workspace: str, home: str) -> list[str]:
    """Mounts keeping the repository's control files, Noetic's store and every existing file of
    the protected set (:mod:`noetic.tools.shellgate.protected`: what the developer's own tools
    run later) read-only and in place.

    A path bound onto itself is a mount point: it can be neither renamed nor replaced (EBUSY),
    so ``.git`` cannot be swapped for a copy carrying a planted hook; the folders above a kept
    path are bound onto themselves (writable) so none of them can be moved aside either (else
    ``mv scripts s2 && mkdir scripts`` puts a new file where the read-only one was)."""
    control = control_files(workspace)
    if control.linked_dotgit is not None:
        raise UsageError(
            f"the workspace's .git is a symlink ({control.linked_dotgit} -> "
            f"{os.readlink(control.linked_dotgit)}): the sandbox cannot keep a symlink in "
            "place, so a command could replace it with a repository carrying its own hooks",
            fix="run in a repository whose .git is a folder or a gitdir file",
        )
    for folder in control.folders_to_create:
        os.makedirs(folder, mode=0o755, exist_ok=True)
    store = os.path.join(workspace, ".noetic")
    kept = [*control.read_only, *control.folders_to_create]
    if os.path.lexists(store) and not os.path.islink(store):
        kept.append(store)
    try:
        extra = configured(workspace)
    except ValueError as exc:
        raise UsageError(
            f"the sandbox cannot tell which files to keep read-only: {exc}",
            fix="fix the file named ([gate] protected is a list of path patterns)",
        ) from None
    protected = protected_set(workspace, home=home, extra=extra, control=control)
    kept += [p for p in protected.existing() if p not in kept]
    pinned: list[str] = []
    root = os.path.realpath(workspace)
    for path in kept:
        folder = os.path.dirname(path)
        while folder.startswith(root.rstrip("/") + "/") and folder not in pinned:
            pinned.append(folder)
            folder = os.path.dirname(folder)
    pinned.sort(key=lambda p: p.count("/"))
    return [
        *(arg for path in pinned for arg in ("--bind", path, path)),
        *(arg for path in kept for arg in ("--ro-bind", path, path)),
    ]


def wrap(
    argv: list[str],
    sandbox: Sandbox,
    *,
    workspace: str,
    cwd: str,
    home: str,
    network: bool,
    repository: bool = True,
) -> list[str]:
    """``argv`` as run inside ``sandbox`` (unchanged when there is none). ``repository=False``
    is for a workspace the caller made empty itself (no repository and no store to keep
    read-only in it), and spares looking for them (two ``git`` processes)."""
    if sandbox.binary is None:
        return argv
    args = [sandbox.binary, "--die-with-parent", "--new-session", "--unshare-all"]
    if network:
        args.append("--share-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # empty folders over the host's, then the workspace bound on top (bwrap makes the mount
    # point inside the empty folder when the workspace lives under one of them)
    hidden = [p for p in ("/tmp", "/var/tmp", "/run", home) if os.path.isdir(p)]
    for private in hidden:
        args += ["--tmpfs", private]
    # Noetic's own Python stays runnable (read-only) when it lives in a hidden folder: a
    # virtual environment under /tmp, an interpreter under the home folder (pyenv)
    for keep in sorted({os.path.realpath(p) for p in (sys.prefix, sys.base_prefix)}):
        if os.path.isdir(keep) and any(
            keep == h or keep.startswith(h.rstrip("/") + "/") for h in hidden
        ):
            args += ["--ro-bind", keep, keep]
    args += ["--bind", workspace, workspace]
    resolv = os.path.realpath("/etc/resolv.conf")
    if network and resolv.startswith("/run/") and os.path.exists(resolv):
        args += ["--ro-bind", resolv, resolv]  # name resolution, when the network is allowed
    if repository:
        args += _read_only(workspace, home)
    args += ["--cap-drop", "ALL", "--chdir", cwd, "--", *argv]
    return args


async def wait_or_kill(proc: Process, timeout_s: float) -> bool:
    """Wait for ``proc`` (started in a session of its own) at most ``timeout_s`` seconds; past
    it, kill its whole process group and reap it. True when it ran out of time. Cancelled, the
    group is killed before the cancellation goes on, so nothing is left running."""
    import asyncio
    import signal

    try:
        await asyncio.wait_for(proc.wait(), timeout_s)
    except BaseException as exc:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        if not isinstance(exc, TimeoutError):
            raise
        await proc.wait()
        return True
    return False
