"""`noetic recall "task"`: what earlier tasks to bring into a new session, within a budget."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, SessionOpt, StoreOpt, group
from noetic.cli.output import console, emit, esc, stdout
from noetic.cli.render import recall_accounting
from noetic.runtime.opening import open_tracker, optional_current_session
from noetic.store import open_store

if TYPE_CHECKING:
    from noetic.store.checkpoints import Checkpoint


def recall(
    task: Annotated[str, typer.Argument(help="The task you are about to start.")],
    limit: Annotated[int | None, typer.Option(min=0, help="How many tasks at most.")] = None,
    budget: Annotated[int | None, typer.Option(min=1, help="Token budget.")] = None,
    ai_id: Annotated[
        str | None,
        typer.Option(
            help="Who is recalling ($NOETIC_AI_ID): whose current session, and with "
            "--own whose tasks."
        ),
    ] = None,
    own: Annotated[
        bool,
        typer.Option(
            "--own",
            help="Only the recalling agent's own tasks (default: every agent's in the project).",
        ),
    ] = False,
    project: Annotated[
        str | None, typer.Option(help="Search this project (default: the current session's).")
    ] = None,
    all_projects: Annotated[
        bool, typer.Option("--all-projects", help="Search every project.")
    ] = False,
    explain: Annotated[
        bool, typer.Option("--explain", help="Also list the top 50 with every score.")
    ] = False,
    qdrant: Annotated[
        str | None, typer.Option(help="Qdrant backend: a local folder or a server URL.")
    ] = None,
    session: SessionOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Choose past tasks to load (semantic match in the current project, calibration-filtered,
    nothing when no task is close enough) and print a context block ready to paste into a
    prompt."""
    from noetic.operations.recalling import recall as recalled

    with handled(json):
        result = recalled(
            lambda: open_store(store),  # no tracker: its profiles cost a cold call for nothing
            task,
            current=lambda opened: optional_current_session(opened, session, ai_id),
            limit=limit, budget=budget, ai_id=ai_id if own else None, own=own, project=project,
            all_projects=all_projects,
            explain=explain, qdrant=qdrant,
        )  # fmt: skip

    def render() -> None:
        out = stdout()
        need = f"{result.need:.2f}" if result.need is not None else "unknown"
        out.print(
            f"[dim]need {need} → {result.strategy.value}; {result.scope}; "
            f"{f'level {result.level}' if result.level else 'nothing loaded'}; "
            f"{'' if result.tokens_exact else '≤'}{result.tokens}/{result.budget_tokens} tokens[/]"
        )
        if result.considered:
            out.print(f"[dim]{esc(recall_accounting(result))}[/]")
        for w in result.warnings:
            out.print(f"[yellow]warning:[/] {esc(w)}")
        for c in result.chosen:
            out.print(f"[dim]{esc(c.why)}: {esc(c.task)}[/]")
        out.print(result.context, markup=False)

    emit(result, json, render)


def reindex(
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Embed every finished task that the configured embedder has not embedded yet (after
    upgrading, or after changing NOETIC_RECALL_EMBEDDER), showing progress, and update the index."""
    from noetic.embeddings import recall_embedder
    from noetic.recall.index import embed_pending, index_for, pending_count

    with handled(json):
        opened = open_store(store)
        embedder = recall_embedder()
        todo = pending_count(opened, embedder.name)
        if json or not todo:
            done = embed_pending(opened, embedder)
        else:
            from rich.progress import Progress

            with Progress(console=console(err=True), transient=False) as bar:
                job = bar.add_task(f"embedding with {embedder.name}", total=todo)
                done = embed_pending(
                    opened, embedder, progress=lambda n, total: bar.update(job, completed=n)
                )
        rows = index_for(opened, embedder).rows
    data = {"embedder": embedder.name, "embedded": done, "indexed": rows}
    emit(data, json, lambda: stdout().print(f"embedded {done}; {rows} tasks indexed"))


checkpoint_app = group("Compact per-phase checkpoints (git notes, or SQLite).")


def _checkpoints(
    store: Path | None, session: str | None, json: bool
) -> list[tuple[str, Checkpoint]]:
    """The checkpoints (``session``'s, when given), oldest first, each with where it is kept."""
    from noetic.store.checkpoints import git_root, list_checkpoints

    with handled(json):
        opened = open_tracker(store).store
        found = list_checkpoints(opened, git_root(opened.home), session=session)
    return found


@checkpoint_app.command("list")
def checkpoint_list(
    session: Annotated[str | None, typer.Option(help="Only this session (id prefix).")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Every checkpoint, oldest first, and where it is kept."""
    found = _checkpoints(store, session, json)
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
    found = _checkpoints(store, session, json)
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
    from noetic.store.checkpoints import bootstrap_context, git_root

    with handled(json):
        opened = open_tracker(store).store
        block = bootstrap_context(opened, git_root(opened.home), tasks=tasks)
    data = {"context": block, "tokens": count_tokens(block)}
    emit(data, json, lambda: stdout().print(block or "no checkpoints yet", markup=False))
