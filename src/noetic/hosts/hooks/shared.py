"""What every hook handler needs to know about the request before it acts: which agent and
session it speaks for, which project it guards, where that project's store is, and where a
failure is written down.

:mod:`~noetic.hosts.hooks.answer` dispatches each event, :mod:`~noetic.hosts.hooks.pretool`
and :mod:`~noetic.hosts.hooks.session_trace` handle theirs; all three import these helpers from
here and none imports the others back. Nothing heavy is loaded until a function needs it: the
hooks run in a fresh process on every tool call.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

AI_ID = "claude-code"


def agent_key(payload: dict[str, Any]) -> str:
    """The agent a Claude Code session is in the store: one per ``session_id``."""
    sid = payload.get("session_id")
    return f"{AI_ID}:{sid}" if isinstance(sid, str) and sid.strip() else AI_ID


def project_dir(payload: dict[str, Any]) -> Path:
    """The folder the host's tool runs in: ``cwd`` from the payload, else
    ``$CLAUDE_PROJECT_DIR``, else the working directory. Where a command runs, never where the
    hooks find their store or their workspace (:func:`project_root`)."""
    for candidate in (payload.get("cwd"), os.environ.get("CLAUDE_PROJECT_DIR")):
        if isinstance(candidate, str) and candidate and Path(candidate).is_dir():
            return Path(candidate)
    return Path.cwd()


def project_root(payload: dict[str, Any], project: Path | None = None) -> Path:
    """The project the hooks guard, from what the agent cannot change: ``project`` (the one
    ``noetic serve`` was started for, for an http hook), else ``$CLAUDE_PROJECT_DIR`` (Claude
    Code sets it for every hook command), else the git repository around the payload's
    ``cwd``, else that ``cwd``. The store and the gate's configuration are found from here, so
    a ``.noetic`` the agent makes in a folder below is never read."""
    if project is not None:
        return project.resolve()
    env = os.environ.get("CLAUDE_PROJECT_DIR")
    if env and Path(env).is_dir():
        return Path(env).resolve()
    from noetic.store.location import find_git_root

    folder = project_dir(payload).resolve()
    return find_git_root(folder) or folder


def locate(payload: dict[str, Any], explicit: Path | None, project: Path | None = None) -> Any:
    """The store the hooks use: ``explicit`` (``--store``, or the server's), ``$NOETIC_HOME``,
    else the store of the project root, never one below it."""
    from noetic.store.location import locate_store

    return locate_store(explicit, cwd=project_root(payload, project))


def outside_project(payload: dict[str, Any], project: Path) -> str | None:
    """Why a request cannot be acted on for ``project`` (an http hook's server project): a
    ``cwd`` that is not a folder inside it. None when it is, or when none is given."""
    cwd = payload.get("cwd")
    if cwd is None:
        return None
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        return f"the request's cwd {cwd!r} is not an absolute path"
    real = os.path.realpath(cwd)
    root = os.path.realpath(project)
    if real != root and not real.startswith(root.rstrip("/") + "/"):
        return f"the request's cwd {cwd} is outside this server's project {root}"
    return None


def one_line(text: str, limit: int) -> str:
    """``text`` on one line (its white space folded), cut to ``limit`` characters with "…"."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# hooks.log -----------------------------------------------------------------------------------


def note(home: Path, event: str, text: str) -> Path | None:
    """Append one line to ``<store>/hooks.log``; where it went (None: it could not be written,
    and a hook never fails for its log)."""
    from datetime import UTC, datetime

    path = home / "hooks.log"
    line = f"{datetime.now(UTC).isoformat(timespec='seconds')} {event} {' '.join(text.split())}\n"
    try:
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        return None
    return path


# failures ------------------------------------------------------------------------------------


def log_failure(
    event: str,
    payload: dict[str, Any],
    store: Path | None,
    error: BaseException,
    project: Path | None = None,
) -> Path | None:
    """Append the failure to ``<store>/hooks.log``; where it went (None: nowhere to write)."""
    from noetic.errors import error_name
    from noetic.store.location import locate_home

    try:  # not locate(): a config.toml that cannot be read is what may be logged
        home = locate_home(store, cwd=project_root(payload, project))
    except Exception:
        return None
    if not home.is_dir():
        return None
    return note(home, event, f"{error_name(error)}: {error}")
