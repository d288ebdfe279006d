"""`noetic where`: which store and which session a command run here would use, and why."""

from __future__ import annotations

from noetic.cli.exits import handled
from noetic.cli.options import AiIdOpt, JsonOpt, SessionOpt, StoreOpt
from noetic.cli.output import emit, esc, stdout
from noetic.operations.stores import agent_id as agent


def where(
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Which store is in use and why, and which session commands here act on. Creates nothing."""
    from noetic.store import locate_store
    from noetic.store.current import agents_with_current_sessions, read_current_session

    with handled(json):
        location = locate_store(store)
        who = agent(ai_id)
        agents = agents_with_current_sessions(location.home) if location.exists else {}
        sid: str | None = session
        source = "--session or $NOETIC_SESSION"
        if not session:
            sid = read_current_session(location.home, who) if location.exists else None
            source = (
                f"the current session of agent {who}"
                if sid
                else f"agent {who} has no current session here: `noetic bootstrap` starts one"
            )
        result = {
            **location.model_dump(mode="json"),
            "exists": location.exists,
            "ai_id": who,
            "session_id": sid,
            "session_from": source,
            "agents": agents,
        }

    def render() -> None:
        out = stdout()
        state = "" if location.exists else " (not created yet: `noetic bootstrap` creates it)"
        out.print(f"[bold]store[/] {location.home}{state}", highlight=False)
        out.print(f"  because: {location.reason}", highlight=False)
        out.print(f"[bold]agent[/] {who}", highlight=False)
        out.print(f"[bold]session[/] {sid or 'none'} ({esc(source)})", highlight=False)
        if agents:
            out.print("[bold]current sessions here[/], by agent:", highlight=False)
        for name, sid_ in sorted(agents.items()):
            out.print(f"  {name}: {sid_}", highlight=False, markup=False)

    emit(result, json, render)
