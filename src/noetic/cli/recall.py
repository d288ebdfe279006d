"""`noetic recall "task"`: what earlier tasks to bring into a new session, within a budget."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noetic.cli._common import (
    JsonOpt,
    SessionOpt,
    StoreOpt,
    emit,
    esc,
    handled,
    open_tracker,
    optional_current_session,
    stdout,
)


def recall(
    task: Annotated[str, typer.Argument(help="The task you are about to start.")],
    limit: Annotated[int | None, typer.Option(min=0, help="How many tasks at most.")] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="Token budget.")] = None,
    ai_id: Annotated[str | None, typer.Option(help="Only this AI's tasks.")] = None,
    qdrant: Annotated[
        str | None, typer.Option(help="Qdrant backend: a local folder or a server URL.")
    ] = None,
    session: SessionOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Choose past tasks to load (semantic + epistemic match, calibration-filtered) and print a
    context block ready to paste into a prompt."""
    from noetic.recall.engine import recall_for_current_session

    with handled(json):
        index = None
        if qdrant:
            from noetic.embeddings import default_embedder
            from noetic.store.qdrant_index import QdrantIndex

            index = QdrantIndex(qdrant, default_embedder().dimension)
        try:
            tracker = open_tracker(store)
            result = recall_for_current_session(
                tracker.store,
                task,
                session_id=optional_current_session(tracker, session, ai_id),
                limit=limit,
                budget=budget,
                ai_id=ai_id,
                index=index,
            )
        finally:
            if index is not None:
                index.close()

    def render() -> None:
        from noetic.cli.render import recall_accounting

        out = stdout()
        need = f"{result.need:.2f}" if result.need is not None else "unknown"
        out.print(
            f"[dim]need {need} → {result.strategy.value}; level {result.level}; "
            f"{result.tokens}/{result.budget_tokens} tokens[/]"
        )
        if result.considered:
            out.print(f"[dim]{esc(recall_accounting(result))}[/]")
        for w in result.warnings:
            out.print(f"[yellow]warning:[/] {esc(w)}")
        out.print(result.context, markup=False)

    emit(result, json, render)


checkpoint_app = typer.Typer(help="Compact per-phase checkpoints (git notes, or SQLite).")


def _where(store: Any) -> Any:
    from noetic.store.checkpoints import git_root

    return git_root(store.home)


@checkpoint_app.command("list")
def checkpoint_list(
    session: Annotated[str | None, typer.Option(help="Only this session (id prefix).")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Every checkpoint, oldest first, and where it is kept."""
    from noetic.store.checkpoints import list_checkpoints

    with handled(json):
        opened = open_tracker(store).store
        found = list_checkpoints(opened, _where(opened), session=session)
    rows = [{"where": w, **cp.model_dump()} for w, cp in found]

    def render() -> None:
        out = stdout()
        for w, cp in found:
            out.print(f"{cp.at}  {w:<16} {cp.session} {cp.phase:<10} {cp.action}", markup=False)
        if not found:
            out.print("no checkpoints yet")

    emit(rows, json, render)


@checkpoint_app.command("show")
def checkpoint_show(
    session: Annotated[str, typer.Argument(help="Session id or prefix.")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """A session's checkpoints with their vectors named."""
    from noetic.store.checkpoints import list_checkpoints

    with handled(json):
        opened = open_tracker(store).store
        found = list_checkpoints(opened, _where(opened), session=session)
    rows = [{"where": w, **cp.model_dump(), "named": cp.named_vectors()} for w, cp in found]
    emit(rows, json, lambda: stdout().print("\n".join(cp.line() for _, cp in found), markup=False))


@checkpoint_app.command("load")
def checkpoint_load(
    tasks: Annotated[int, typer.Option(min=1, help="How many recent tasks.")] = 5,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """The compact context a new session starts from: the latest checkpoint of recent tasks."""
    from noetic.llm.tokens import count_tokens
    from noetic.store.checkpoints import bootstrap_context

    with handled(json):
        opened = open_tracker(store).store
        block = bootstrap_context(opened, _where(opened), tasks=tasks)
    data = {"context": block, "tokens": count_tokens(block)}
    emit(data, json, lambda: stdout().print(block or "no checkpoints yet", markup=False))
