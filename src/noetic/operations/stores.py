"""Opening the store an operation acts on, and finding the session it acts in.

The caller owns the store's life: a command opens it for one process, the MCP server and the
dashboard once for all their requests. So operations take an open :class:`Tracker` (or its
:class:`Store`), and these functions are how a caller with only a directory gets one.

Sessions: a command line names its session (``--session``/``$NOETIC_SESSION``) or acts in its
agent's current session, remembered in the store per agent (``noetic bootstrap`` sets it). The
MCP server keeps a current session per client instead, so it resolves its own and passes the
id.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore


def open_store(store: Path | None, *, create: bool = False) -> BaseStore:
    """The store at ``store`` (else the project's ``.noetic``, else ``$NOETIC_HOME``), or the
    PostgreSQL store ``store`` names or the configuration gives (see
    :mod:`noetic.store.location`). Only operations that write pass ``create``; otherwise a
    missing store is an error that says where it looked, and nothing is created. Sync; the
    caller closes it."""
    from noetic.store import locate_store, require_store
    from noetic.store import open_store as open_at

    location = locate_store(store)
    return open_at(location.home if create else require_store(location), url=location.url)


def tracker_over(opened: BaseStore) -> Tracker:
    """The tracker over an open store, with the store's own profiles."""
    from noetic.profiles import ProfileRegistry
    from noetic.runtime.tracker import Tracker

    return Tracker(opened, ProfileRegistry(opened.home / "profiles"))


def open_tracker(store: Path | None, *, create: bool = False) -> Tracker:
    """:func:`open_store`, with the tracker over it. Sync; the caller closes ``.store``."""
    return tracker_over(open_store(store, create=create))


def agent_id(ai_id: str | None) -> str:
    """The agent acting: the one named (``--ai-id`` or ``$NOETIC_AI_ID``), else the default."""
    from noetic.errors import InvalidValueError
    from noetic.store.current import DEFAULT_AI_ID

    if ai_id is None:
        return DEFAULT_AI_ID
    if not ai_id.strip():
        raise InvalidValueError("the agent id is empty", field="ai_id", value=ai_id)
    return ai_id


def current_session(tracker: Tracker, explicit: str | None, ai_id: str | None = None) -> str:
    """The session to act on: the one named, else the agent's current session in this store
    (an error that says how to get one when it has none). Sync."""
    from noetic.store.current import read_current_session

    if explicit:
        return tracker.store.get_session(explicit).id
    who = agent_id(ai_id)
    remembered = read_current_session(tracker.store.home, who)
    if remembered is None:
        raise _no_current_session(tracker.store.home, who)
    return tracker.store.get_session(remembered).id


def optional_current_session(
    tracker: Tracker | BaseStore, explicit: str | None, ai_id: str | None = None
) -> str | None:
    """Like :func:`current_session`, for operations that also work without a session: the
    agent is the one named, else ``$NOETIC_AI_ID``, else the default; None when it has none.
    Takes the store alone where a caller needs no tracker (``recall``, kept light for cold
    calls). Sync."""
    from noetic.store.current import read_current_session

    store = cast("BaseStore", getattr(tracker, "store", tracker))  # importing Tracker costs
    if explicit:
        return store.get_session(explicit).id
    who = agent_id(ai_id or os.environ.get("NOETIC_AI_ID"))
    remembered = read_current_session(store.home, who)
    return store.get_session(remembered).id if remembered else None


def _no_current_session(home: Path, who: str) -> Exception:
    from noetic.errors import NotFoundError
    from noetic.store.current import agents_with_current_sessions

    others = sorted(agents_with_current_sessions(home))
    fix = f"run `noetic bootstrap --ai-id {who}` first, or pass --session ID"
    if others:
        fix += (
            f"; agents with a current session here: {', '.join(others)} "
            "(name yours with --ai-id or NOETIC_AI_ID)"
        )
    return NotFoundError(f"agent {who!r} has no current session in {home}", fix=fix)
