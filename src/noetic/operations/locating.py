"""Where a command run here would act: which store and why, which agent, which session.

``noetic where`` renders it; it reads the store's location and the current-session files and
creates nothing, so it answers even where no store exists yet. Sync.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from pydantic import BaseModel, ConfigDict


class Whereabouts(BaseModel):
    """The store chosen (and the rule that chose it), the agent acting and its session."""

    model_config = ConfigDict(frozen=True)

    home: Path
    rule: str
    reason: str
    looked_in: list[Path]
    git_root: Path | None
    url: str | None
    exists: bool
    ai_id: str
    session_id: str | None
    session_from: str
    agents: dict[str, str]
    """Every agent with a current session in this store, and that session."""


def where(store: Path | None, session: str | None, ai_id: str | None) -> Whereabouts:
    """The store ``store`` names (else the project's, else ``$NOETIC_HOME``), and the session
    commands here act on: ``session`` when given, else the agent's current one. Sync."""
    from noetic.operations.stores import agent_id
    from noetic.store import locate_store
    from noetic.store.current import agents_with_current_sessions, read_current_session

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
    return Whereabouts(
        **asdict(location),
        exists=location.exists,
        ai_id=who,
        session_id=sid,
        session_from=source,
        agents=agents,
    )
