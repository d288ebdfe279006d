"""`noetic goals list|show`."""

from __future__ import annotations

from json import dumps
from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import AiIdOpt, JsonOpt, ProviderOpt, SessionOpt, StoreOpt, group
from noetic.cli.output import emit, esc, session_used, stdout
from noetic.errors import InvalidValueError
from noetic.operations.goal_setting import (
    generate_goals,
    generate_model_goals,
    get_goal,
    list_goals,
)
from noetic.runtime.opening import current_session, open_tracker
from noetic.store import open_store

app = group("Goals from vector gaps or from the model's plan.")


@app.command("list")
def list_(
    session: SessionOpt = None, ai_id: AiIdOpt = None, store: StoreOpt = None, json: JsonOpt = False
) -> None:
    """The session's goals, in the order they were set."""
    with handled(json):
        tracker = open_tracker(store)
        goals = list_goals(tracker.store, current_session(tracker, session, ai_id))

    def render() -> None:
        out = stdout()
        for g in goals:
            out.print(
                f"{g.id}  {esc(f'[{g.status}]')} ({g.source}, priority {g.priority:.2f}) "
                f"{esc(g.description)}"
            )
        if not goals:
            out.print("no goals yet")

    emit(goals, json, render)


@app.command()
def generate(
    mode: Annotated[
        str | None,
        typer.Option(help="threshold (the default) or llm (the model proposes the goals)."),
    ] = None,
    provider: ProviderOpt = None,
    session: SessionOpt = None,
    ai_id: AiIdOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """New goals for the gaps in the latest assessment: threshold mode (one per vector under
    the profile's gap threshold, weakest first) or, with --mode llm or --provider, the seed's
    LLM mode (the model proposes them)."""
    import asyncio

    with handled(json):
        chosen = mode or ("llm" if provider else "threshold")
        if chosen not in ("threshold", "llm"):
            raise InvalidValueError(
                f"unknown goal mode {mode!r}", field="mode", fix="use threshold or llm"
            )
        if chosen == "threshold" and provider:
            raise InvalidValueError(
                "threshold mode asks no model",
                field="provider",
                fix="drop --provider, or use --mode llm",
            )
        tracker = open_tracker(store)
        sid = current_session(tracker, session, ai_id)
        if chosen == "llm":
            created = asyncio.run(generate_model_goals(tracker, sid, provider=provider))
        else:
            created = generate_goals(tracker, sid)

    def render() -> None:
        stdout().print(session_used(sid))
        for g in created:
            stdout().print(f"{g.id}  priority {g.priority:.2f}  {esc(g.description)}")
        if not created:
            stdout().print("no new goals: no gaps, or goals already set for them")

    emit(created, json, render)


@app.command()
def show(
    goal_id: Annotated[str, typer.Argument(help="Goal id.")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """One goal in full."""
    with handled(json):
        goal = get_goal(open_store(store), goal_id)
    shown = dumps(goal.model_dump(mode="json"), indent=2, ensure_ascii=False)
    emit(goal, json, lambda: stdout().print(shown, markup=False))
