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
            out.print(f"[bold]store[/] {esc(found.url)} (PostgreSQL)", highlight=False)
            out.print(f"  because: {esc(found.url_from)}", highlight=False)
            out.print(
                f"  local files (profiles, configuration, current sessions): {esc(found.home)} "
                f"({esc(found.reason)})",
                highlight=False,
            )
        else:
            out.print(f"[bold]store[/] {esc(found.home)}{state}", highlight=False)
            out.print(f"  because: {esc(found.reason)}", highlight=False)
        out.print(f"[bold]agent[/] {esc(found.ai_id)}", highlight=False)
        out.print(
            f"[bold]session[/] {found.session_id or 'none'} ({esc(found.session_from)})",
            highlight=False,
        )
        if found.agents:
            out.print("[bold]current sessions here[/], by agent:", highlight=False)
        for name, sid_ in sorted(found.agents.items()):
            out.print(f"  {name}: {sid_}", highlight=False, markup=False)

    emit(found, json, render)
