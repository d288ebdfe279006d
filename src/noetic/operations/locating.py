"""Where a command run here would act: which store and why, which agent, which session.

``noetic where`` renders it; it reads the store's location and the current-session files and
creates nothing, so it answers even where no store exists yet. Sync.
"""

from __future__ import annotations

from pathlib import Path

from noetic.frozen import Frozen


class Whereabouts(Frozen):
    """The store chosen (and the rule that chose it), the agent acting and its session."""

    home: Path
    rule: str
    reason: str
    looked_in: list[Path]
    git_root: Path | None
    url: str | None
    """The PostgreSQL database the store's rows live in (its password masked), if one is
    configured; ``home`` then holds only what is local (profiles, configuration, the current
    sessions of this machine's agents)."""
    url_from: str | None
    exists: bool
    ai_id: str
    session_id: str | None
    session_from: str
    agents: dict[str, str]
    """Every agent with a current session in this store, and that session."""


def where(store: Path | None, session: str | None, ai_id: str | None) -> Whereabouts:
    """The store ``store`` names (else the project's, else ``$NOETIC_HOME``), and the session
    commands here act on: ``session`` when given, else the agent's current one. Sync."""
    import os

    from noetic.runtime.opening import agent_id
    from noetic.store import locate_store
    from noetic.store.current import agents_with_current_sessions, read_current_session
    from noetic.store.location import safe_url

    location = locate_store(store)
    who = agent_id(ai_id)
    agents = agents_with_current_sessions(location.home) if location.exists else {}
    sid = session
    source = "--session or $NOETIC_SESSION"
    if not session:
        sid = read_current_session(location.home, who) if location.exists else None
        source = (
            f"the current session of agent {who}"
            if sid
            else f"agent {who} has no current session here: `noetic bootstrap` starts one"
        )
    url_from = None
    if location.url:
        url_from = (
            "$NOETIC_STORE_URL (or --store)"
            if os.environ.get("NOETIC_STORE_URL")
            else f"[store] url in {location.home / 'config.toml'}"
        )
    return Whereabouts(
        **(location._asdict() | {"url": safe_url(location.url) if location.url else None}),
        url_from=url_from,
        exists=location.exists,
        ai_id=who,
        session_id=sid,
        session_from=source,
        agents=agents,
    )
