"""`noetic observe "query" --provider P` and `noetic observe stats`."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from noetic.cli.default_command import DefaultCommandGroup
from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, ProviderOpt, StoreOpt, group
from noetic.cli.output import emit, esc, stderr, stdout
from noetic.runtime.opening import open_tracker
from noetic.store import open_store

app = group(
    'Staged reasoning that stops when it has crystallized: noetic observe "query".',
    cls=DefaultCommandGroup,  # `noetic observe "query"` runs the chain
)


@app.command("run", hidden=True)
def run(
    query: Annotated[str, typer.Argument(help="The question to reason about.")],
    provider: ProviderOpt = None,
    adaptive: Annotated[
        bool, typer.Option(help="Let stage 1's predicted confidence set the stage budget.")
    ] = False,
    cache: Annotated[bool, typer.Option(help="Use the pattern cache.")] = True,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Run the observer chain on a query, showing each stage as it completes."""
    import asyncio

    from noetic.events import EventKind
    from noetic.operations.runs import start_chain

    err = stderr()

    def show(event: Any) -> None:
        if event.kind == EventKind.OBSERVATION:
            d = event.data
            err.print(
                f"[bold]stage {d['stage']}[/] {d['role']} · confidence "
                f"{d['confidence']:.2f} · layers {','.join(d['layers']) or '—'}"
            )

    with handled(json):
        result = asyncio.run(
            start_chain(
                open_tracker(store, create=True), query, provider=provider, adaptive=adaptive,
                cache=cache, on_event=show,
            )
        )  # fmt: skip

    def render() -> None:
        out = stdout()
        reason = result.reason.value if result.reason else "ended early"
        out.print(
            f"[bold]crystallized[/] after {result.stages} stage(s) · {reason} · "
            f"{result.model_calls} model call(s)" + (" · from cache" if result.cache_hit else "")
        )
        if result.note:
            out.print(f"[dim]{esc(result.note)}[/]")
        out.print(result.answer, markup=False)
        if result.usage is not None:
            out.print(f"[dim]{esc(result.usage.line())}[/]")

    emit(result, json, render)


@app.command()
def stats(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Chain lengths, crystallization reasons, and model calls saved."""
    from noetic.observer.chain import observer_stats

    with handled(json):
        result = observer_stats(open_store(store))

    def render() -> None:
        out = stdout()
        out.print(f"[bold]{result.runs} runs[/] · average {result.average_stages} stages")
        for length, count in result.chain_lengths.items():
            out.print(f"  {length} stage(s): {count}")
        for reason, count in result.reasons.items():
            out.print(f"  {reason}: {count}")
        out.print(
            f"model calls {result.model_calls} · saved by early stopping "
            f"{result.calls_saved_by_early_stopping} · by the cache ~"
            f"{result.calls_saved_by_cache_estimate} ({result.cache_hits} hits)"
        )

    emit(result, json, render)
