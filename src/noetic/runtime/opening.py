"""Opening a store and the tracker over it, and finding the session a caller acts in: the one
way the command line, the MCP server, the dashboard, the hooks and the engines do it.

The caller owns the store's life: a command opens it for one process (and
:func:`noetic.store.close_stores` closes it when the command ends), the MCP server and the
dashboard once for all their requests, a hook for one event. Nothing here imports pydantic,
YAML or the tracker until a function is called, so a hook's start-up pays only for what it
uses.

Sessions: a command line names its session (``--session``/``$NOETIC_SESSION``) or acts in its
agent's current session, remembered in the store per agent (``noetic bootstrap`` sets it). The
MCP server keeps a current session per client instead, so it resolves its own and passes the
id; a hook asks for the session remembered for its host's agent (:func:`remembered_session`).
"""

from __future__ import annotations

import os
from pathlib import Path

from noetic.errors import InvalidValueError, NotFoundError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore


def tracker_over(opened: BaseStore) -> Tracker:
    """The tracker over an open store, with the store's own profiles."""
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    return Tracker(opened, ProfileRegistry(opened.home / "profiles"))


def open_tracker(
    where: str | Path | None = None,
    *,
    create: bool = False,
    write_files: bool = True,
    background: bool = False,
) -> Tracker:
    """:func:`noetic.store.open_store`, with the tracker over it. The caller closes
    ``.store``."""
    from noetic.store import open_store

    opened = open_store(where, create=create, write_files=write_files, background=background)
    return tracker_over(opened)


def remembered_session(store: BaseStore, ai_id: str) -> str | None:
    """The agent's current session in this store, if it has one that still exists."""
    from noetic.store.current import read_current_session

    sid = read_current_session(store.home, ai_id)
    if sid is None:
        return None
    try:
        return store.get_session(sid).id
    except NotFoundError:
        return None


def agent_id(ai_id: str | None) -> str:
    """The agent acting: the one named (``--ai-id`` or ``$NOETIC_AI_ID``), else the default."""
    from noetic.store.current import DEFAULT_AI_ID

    if ai_id is None:
        return DEFAULT_AI_ID
    if not ai_id.strip():
        raise InvalidValueError("the agent id is empty", field="ai_id", value=ai_id)
    return ai_id


def current_session(tracker: Tracker, explicit: str | None, ai_id: str | None = None) -> str:
    """The session to act on: the one named, else the agent's current session in this store
    (an error that says how to get one when it has none). Sync."""
    if explicit:
        return tracker.store.get_session(explicit).id
    who = agent_id(ai_id)
    found = optional_current_session(tracker, None, who)
    if found is not None:
        return found
    from noetic.store.current import agents_with_current_sessions

    others = sorted(agents_with_current_sessions(tracker.store.home))
    fix = f"run `noetic bootstrap --ai-id {who}` first, or pass --session ID"
    if others:
        fix += (
            f"; agents with a current session here: {', '.join(others)} "
            "(name yours with --ai-id or NOETIC_AI_ID)"
        )
    raise NotFoundError(f"agent {who!r} has no current session in {tracker.store.home}", fix=fix)


def optional_current_session(
    tracker: Tracker | BaseStore, explicit: str | None, ai_id: str | None = None
) -> str | None:
    """Like :func:`current_session`, for operations that also work without a session: the
    agent is the one named, else ``$NOETIC_AI_ID``, else the default; None when it has none.
    Takes the store alone where a caller needs no tracker (``recall``, kept light for cold
    calls). Sync."""
    from noetic.store.current import read_current_session

    given: Any = tracker  # a Tracker or a store: importing Tracker to ask which costs
    store: BaseStore = getattr(given, "store", given)
    if explicit:
        return store.get_session(explicit).id
    who = agent_id(ai_id or os.environ.get("NOETIC_AI_ID"))
    remembered = read_current_session(store.home, who)
    return store.get_session(remembered).id if remembered else None
