"""`noetic where`: which store and which session a command run here would use, and why."""

from __future__ import annotations

from noetic.cli.exits import handled
from noetic.cli.options import AiIdOpt, JsonOpt, SessionOpt, StoreOpt
from noetic.cli.output import emit, esc, stdout


def where(
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Which store is in use and why, and which session commands here act on. Creates nothing."""
    from noetic.operations.locating import where as locate

    with handled(json):
        found = locate(store, session, ai_id)

    def render() -> None:
        out = stdout()
        state = "" if found.exists else " (not created yet: `noetic bootstrap` creates it)"
        if found.url:
            out.print(f"[bold]store[/] {esc(found.url)} (PostgreSQL)")
            out.print(f"  because: {esc(found.url_from)}")
            out.print(
                f"  local files (profiles, configuration, current sessions): {esc(found.home)} "
                f"({esc(found.reason)})"
            )
        else:
            out.print(f"[bold]store[/] {esc(found.home)}{state}")
            out.print(f"  because: {esc(found.reason)}")
        out.print(f"[bold]agent[/] {esc(found.ai_id)}")
        out.print(f"[bold]session[/] {found.session_id or 'none'} ({esc(found.session_from)})")
        if found.agents:
            out.print("[bold]current sessions here[/], by agent:")
        for name, sid_ in sorted(found.agents.items()):
            out.print(f"  {name}: {sid_}", markup=False)

    emit(found, json, render)
