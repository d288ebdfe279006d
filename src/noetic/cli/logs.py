"""`noetic logs`: the recorded model calls, like `llm logs`: model, tokens, cost, latency,
status, with totals."""

from __future__ import annotations

from typing import Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt
from noetic.cli.output import emit, esc, stdout
from noetic.cli.render import table
from noetic.store import open_store


def logs(
    run: Annotated[
        str | None,
        typer.Option("--run", help="Only this run's calls (its task id, c_…, or a prefix)."),
    ] = None,
    session: Annotated[str | None, typer.Option(help="Only this session's calls.")] = None,
    model: Annotated[
        str | None,
        typer.Option(help="Only this model: provider:model or the model name, or their start."),
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="The most recent N calls.")] = 50,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Recorded model calls, oldest first: model, tokens, cost, latency and status."""
    from noetic.llm.base import UsageTotals
    from noetic.store.llm_calls import llm_calls, task_of_calls

    with handled(json):
        opened = open_store(store)
        task = task_of_calls(opened, run) if run is not None else None  # a unique prefix too
        matching = llm_calls(opened, session_id=session, cascade_id=task, model=model)
        calls = matching[-limit:]
        totals = UsageTotals.of(matching)

    def render() -> None:
        from noetic.llm.base import money

        out = stdout()
        if not calls:
            out.print(
                "no model calls recorded" + (" that match" if run or session or model else "")
            )
            return
        shown = table("at", "engine", "model", "in", "cached", "out", "cost", "ms", "status")
        for c in calls:
            status = "ok" if c.outcome == "ok" else (c.error_class or "error")
            if c.status:
                status += f" {c.status}"
            if c.attempt > 1:
                status += f" (try {c.attempt})"
            cost = "unknown" if c.outcome == "ok" else ""
            if c.cost_usd is not None:
                cost = money(c.cost_usd)
            shown.add_row(
                c.at[:19],
                esc(c.engine or "-"),
                esc(f"{c.provider}:{c.model}"),
                f"{c.tokens_in:,}",
                f"{c.tokens_cached:,}" if c.tokens_cached else "",
                f"{c.tokens_out:,}",
                cost,
                f"{c.latency_ms:,.0f}",
                esc(status),
            )
        out.print(shown)
        if len(calls) < len(matching):
            out.print(
                f"the {len(calls)} most recent of {len(matching)} matching calls shown "
                "(--limit); totals over all of them:"
            )
        out.print(esc(totals.line()))

    emit({"calls": calls, "matching": len(matching), "totals": totals}, json, render)
