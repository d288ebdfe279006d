"""`noetic recall "task"`: what earlier tasks to bring into a new session, within a budget."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noetic.cli._common import JsonOpt, StoreOpt, emit, handled, open_tracker, stdout


def recall_for(tracker: Any, task: str, **kwargs: Any) -> Any:
    """Recall against the current session's latest assessment, when there is one."""
    from noetic.embeddings import default_embedder
    from noetic.llm.tokens import count_tokens
    from noetic.recall.engine import recall as run_recall
    from noetic.store.files import read_current_session

    current = None
    sid = read_current_session(tracker.store.home)
    if sid is not None:
        history = tracker.store.assessments(session_id=sid)
        current = history[-1].assessment.vectors if history else None
    return run_recall(
        tracker.store, task, default_embedder(), count_tokens, current=current, **kwargs
    )


def recall(
    task: Annotated[str, typer.Argument(help="The task you are about to start.")],
    limit: Annotated[int | None, typer.Option(min=0, help="How many tasks at most.")] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="Token budget.")] = None,
    ai_id: Annotated[str | None, typer.Option(help="Only this AI's tasks.")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Choose past tasks to load (semantic + epistemic match, calibration-filtered) and print a
    context block ready to paste into a prompt."""
    with handled(json):
        result = recall_for(open_tracker(store), task, limit=limit, budget=budget, ai_id=ai_id)

    def render() -> None:
        out = stdout()
        need = f"{result.need:.2f}" if result.need is not None else "unknown"
        out.print(
            f"[dim]need {need} → {result.strategy.value}; level {result.level}; "
            f"{result.tokens}/{result.budget_tokens} tokens[/]"
        )
        for w in result.warnings:
            out.print(f"[yellow]warning:[/] {w}")
        out.print(result.context, markup=False)

    emit(result, json, render)
