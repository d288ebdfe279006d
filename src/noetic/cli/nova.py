"""`noetic nova "question"`: a panel of personas deliberates, shown turn by turn; `noetic nova
personas list|show|new`, `noetic nova graph`, `noetic nova resume RUN --input …`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.default_command import DefaultCommandGroup
from noetic.cli.exits import exit_for_run, handled
from noetic.cli.options import JsonOpt, ProviderOpt, StoreOpt, group
from noetic.cli.output import emit, esc, session_used, stderr, stdout
from noetic.cli.render import table
from noetic.errors import UsageError
from noetic.runtime.opening import open_tracker


class _QuestionFirst(DefaultCommandGroup):
    """``noetic nova "question"`` (or the seed's ``noetic nova process "question"``) runs a
    deliberation; a known word runs that subcommand."""

    argument = "QUESTION"
    aliases = frozenset({"ask", "process"})


app = group(
    "NovaProcess: a panel of personas deliberates on a question.\n\n"
    'noetic nova "Should we use OAuth2 or custom JWT?" --provider ollama:llama3.2',
    cls=_QuestionFirst,
)
personas_app = group("The personas a panel is drawn from.")
app.add_typer(personas_app, name="personas")

PersonasOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--personas", help="A directory of persona files (overrides the store's and built-ins).",
        file_okay=False,
    ),
]  # fmt: skip


def _panel(experts: str | None) -> tuple[str, ...]:
    return tuple(e.strip() for e in (experts or "").split(",") if e.strip())


def _catalogue(store: Path | None, personas: list[Path] | None) -> Any:
    from noetic.nova.personas import Catalogue
    from noetic.store import resolve_home

    return Catalogue([resolve_home(store) / "personas", *(personas or [])])


@app.command("run", hidden=True)
def ask(
    question: Annotated[str, typer.Argument(help="The question to deliberate on.")],
    provider: ProviderOpt = None,
    experts: Annotated[
        str | None, typer.Option(help="A fixed panel, comma-separated (else the DCE picks).")
    ] = None,
    max_rounds: Annotated[int, typer.Option(min=1, max=20, help="Expert rounds.")] = 5,
    gate: Annotated[
        float | None, typer.Option(min=0, max=1, help="CHECK gate on uncertainty.")
    ] = None,
    epsilon: Annotated[float, typer.Option(min=0, max=1, help="Convergence epsilon.")] = 0.05,
    context_tokens: Annotated[int, typer.Option(min=200, help="Token budget per turn.")] = 3000,
    personas: PersonasOpt = None,
    weighting: Annotated[
        str, typer.Option(help="Final confidence: dce, or calibrated (by track records).")
    ] = "dce",
    recall: Annotated[
        bool, typer.Option(help="Give the unpacking what the project already knows.")
    ] = True,
    profile: Annotated[
        str | None, typer.Option(help="Profile; 1 − its threshold sets the gate, unless --gate.")
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Wall-clock limit, seconds.")] = 900,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Deliberate on QUESTION: the DCE unpacks, experts analyse, the DCE synthesises, the CHECK
    gate and the CAE's critique decide whether to loop, and the DCE recommends.

    Exits 0 with a recommendation, 5 when the run is escalated to a person (resume it with
    --input) and 3 when it failed (resume it to retry)."""
    import asyncio

    from noetic.operations.runs import Started, start_nova

    started: list[Started] = []

    def announce(run: Started) -> None:
        started.append(run)
        if not json:
            stderr().print(f"[bold]Nova[/] {esc(repr(question))} · {esc(run.provider)}")

    with handled(json):
        result = asyncio.run(
            start_nova(
                open_tracker(store, create=True),
                question,
                provider=provider,
                experts=_panel(experts),
                max_rounds=max_rounds, gate=gate, epsilon=epsilon, context_tokens=context_tokens,
                personas=tuple(str(p) for p in personas or ()), weighting=weighting,
                recall=recall, profile=profile, timeout=timeout, on_start=announce,
                on_event=None if json else _announce, on_text=None if json else _stream,
                on_turn=_show_turn,
            )
        )  # fmt: skip
    emit(result, json, lambda: _render(result, started[0].session_id))
    exit_for_run(result.status)


@app.command()
def resume(
    run: Annotated[str, typer.Argument(help="The run id (or a unique prefix).")],
    input: Annotated[
        str | None, typer.Option("--input", help="A person's decision or guidance.")
    ] = None,
    provider: Annotated[
        str | None, typer.Option(help="Default: the provider the run began on.")
    ] = None,
    experts: Annotated[
        str | None, typer.Option(help="Name the panel from now on, comma-separated.")
    ] = None,
    timeout: Annotated[float, typer.Option(min=1, help="Wall-clock limit, seconds.")] = 900,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Continue an escalated run with a person's input, or a failed or killed one, on the
    provider it began on; turns that already succeeded are replayed from the store, not asked
    again. Exits as `noetic nova`
    does: 0, 5 (escalated again) or 3 (failed again)."""
    import asyncio

    from noetic.operations.runs import resume_nova

    with handled(json):
        result = asyncio.run(
            resume_nova(
                open_tracker(store), run, input=input, provider=provider, timeout=timeout,
                experts=_panel(experts),
                on_event=None if json else _announce, on_text=None if json else _stream,
                on_turn=_show_turn,
            )
        )  # fmt: skip
    emit(result, json, lambda: _render(result, result.session_id))
    exit_for_run(result.status)


@app.command()
def show(
    run: Annotated[str, typer.Argument(help="The run id (or a unique prefix).")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """One run: its decision, its notes and every turn."""
    from noetic.nova.deliberation import stored_run

    with handled(json):
        result = stored_run(open_tracker(store).store, run)

    def render() -> None:
        for turn in result.turns:
            _show_turn(turn, stdout())
        _render(result, result.session_id)

    emit(result, json, render)


@app.command()
def runs(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Every Nova run in the store, oldest first."""
    from noetic.store.nova import runs as all_runs

    with handled(json):
        rows = [
            {k: r[k] for k in ("id", "created_at", "status", "question", "cascade_id")}
            | {"confidence": r["result"].get("confidence")}
            for r in all_runs(open_tracker(store).store)
        ]

    def render() -> None:
        shown = table("run", "when", "status", "confidence", "question")
        for r in rows:
            conf = "-" if r["confidence"] is None else f"{r['confidence']:.2f}"
            shown.add_row(r["id"], r["created_at"][:16], r["status"], conf, esc(r["question"]))
        stdout().print(shown)

    emit(rows, json, render)


@app.command()
def stats(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """The seed's metrics over every run, beside its targets, and each persona's record."""
    from noetic.nova.decision_log import nova_stats
    from noetic.nova.weighting import persona_records

    with handled(json):
        opened = open_tracker(store).store
        figures = nova_stats(opened)
        records = persona_records(opened)
    data = {**figures.model_dump(mode="json"), "personas": records}

    def render() -> None:
        out = stdout()
        out.print(
            f"{figures.runs} runs: {figures.completed} completed, {figures.escalated} escalated, "
            f"{figures.failed} failed"
        )
        shown = table("metric", "value", "seed's target")
        for name, target in figures.targets.items():
            shown.add_row(name.replace("_", " "), _fmt(getattr(figures, name)), target)
        shown.add_row("revision rate", _fmt(figures.revision_rate), "-")
        out.print(shown)
        if records:
            people = table("persona", "outcomes", "brier", "stated", "observed")
            for r in records.values():
                people.add_row(r.persona, str(r.outcomes), f"{r.brier:.3f}", f"{r.stated:.2f}",
                               f"{r.observed:.2f}")  # fmt: skip
            out.print(people)

    emit(data, json, render)


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


@app.command()
def graph(json: JsonOpt = False) -> None:
    """The process as a Mermaid flowchart: the same graph the engine runs."""
    from noetic.nova.graph import EDGES, mermaid

    edges = [{"from": e.source, "to": e.target.value, "when": e.when or None} for e in EDGES]
    emit({"mermaid": mermaid(), "edges": edges}, json, lambda: print(mermaid(), end=""))


@personas_app.command("list")
def personas_list(
    personas: PersonasOpt = None, store: StoreOpt = None, json: JsonOpt = False
) -> None:
    """Every persona: built-ins, the store's (`<store>/personas/`) and --personas directories."""
    with handled(json):
        catalogue = _catalogue(store, personas)
        found = [catalogue.get(n) for n in catalogue.names()]

    def render() -> None:
        shown = table("name", "role", "pattern", "model", "source")
        for p in found:
            shown.add_row(
                esc(p.short_name), esc(p.role), p.pattern.value, esc(p.model or "-"),
                esc(p.source),
            )  # fmt: skip
        stdout().print(shown)

    emit([p.model_dump(mode="json", exclude={"body"}) for p in found], json, render)


@personas_app.command("show")
def personas_show(
    name: Annotated[str, typer.Argument(help="The persona's short_name.")],
    personas: PersonasOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """One persona in full: its front matter and instructions."""
    with handled(json):
        persona = _catalogue(store, personas).get(name)

    def render() -> None:
        out = stdout()
        out.print(
            f"[bold]{esc(persona.role)}[/] ({esc(persona.short_name)}) · {persona.pattern.value}"
        )
        out.print(f"[dim]{esc(persona.source)}[/]")
        out.print(persona.body, markup=False)

    emit(persona, json, render)


@personas_app.command("new")
def personas_new(
    name: Annotated[str, typer.Argument(help="The new persona's short_name.")],
    store: StoreOpt = None,
    force: Annotated[bool, typer.Option(help="Overwrite an existing file.")] = False,
    json: JsonOpt = False,
) -> None:
    """Write a domain-expert persona to edit into `<store>/personas/NAME.md`."""
    from noetic.nova.personas import parse_persona, template

    with handled(json):
        text = template(name)
        home = open_tracker(store, create=True).store.home
        path = home / "personas" / f"{name}.md"
        if path.exists() and not force:
            raise UsageError(f"{path} exists", fix="edit it, or pass --force to overwrite it")
        parse_persona(text, str(path))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    done = f"wrote {esc(path)}: edit it, then `noetic nova personas show {esc(name)}`"
    emit({"path": str(path), "short_name": name}, json, lambda: stdout().print(done))


_STREAMED = {"open": False}  # streamed text not yet ended by a newline


def _stream(delta: str) -> None:
    """A turn's text as the model writes it, on stderr (stdout stays the result)."""
    import sys

    if delta:
        sys.stderr.write(delta)
        sys.stderr.flush()
        _STREAMED["open"] = not delta.endswith("\n")


def _announce(event: Any) -> None:
    """Name the persona before its streamed text (the experts' turns are shown when done)."""
    from noetic.events import EventKind

    phase = event.data.get("phase", "") if event.kind == EventKind.PHASE_ENTERED else ""
    if phase.startswith("NOVA_") and phase != "NOVA_EXPERTS":
        stderr().print(f"\n[dim]── {esc(event.data['role'])} · {phase[5:].lower()} ──[/]")


def _show_turn(turn: Any, err: Any = None) -> None:
    from noetic.nova.decision_log import state_line

    err = err or stderr()
    if _STREAMED["open"]:
        err.print()
        _STREAMED["open"] = False
    status = "" if turn.status == "ok" else f" [red]{turn.status}[/]"
    err.print(
        f"[bold]{turn.seq:>3} {turn.node.value:<10}[/] {esc(turn.persona):<12} "
        f"round {turn.round} · {state_line(turn)} · {turn.ms:7.0f} ms{status}"
        + (f" · risk {turn.block['risk_level']}" if turn.block.get("risk_level") else "")
    )
    headline = (
        turn.block.get("position") or turn.block.get("proposal") or turn.block.get("recommendation")
    )
    if turn.block.get("severity"):
        issues = "; ".join(turn.block.get("issues", []))
        headline = f"severity {turn.block['severity']}" + (f": {issues}" if issues else "")
    if headline:
        err.print(f"      {esc(headline)}")


def _render(result: Any, session_id: str | None) -> None:
    out = stdout()
    out.print(
        f"\n[bold]status[/] {result.status}" + (f" · {esc(result.detail)}" if result.detail else "")
    )
    if result.recommendation:
        out.print(f"[bold]recommendation[/] {esc(result.recommendation)}")
    if result.confidence is not None:
        out.print(f"[bold]confidence[/] {result.confidence:.2f}")
    if result.risk_level is not None:
        named = ", ".join(f"{esc(who)} {level.value}" for who, level in result.risks.items())
        out.print(f"[bold]risk level[/] {result.risk_level.value} [dim]({named})[/]")
    lists = {
        "trade-off": result.tradeoffs,
        "dissent": result.dissent,
        "open disagreement": result.disagreements,
        "note": result.notes,
    }
    if result.confidence is not None:
        out.print(f"[dim]weighting: {esc(result.weighting)}[/]")
    if result.gate_rule:
        out.print(f"[dim]gate: uncertainty > {result.gate:.2f} goes back to the experts "
                  f"({esc(result.gate_rule)})[/]")  # fmt: skip
    if result.decision_log:
        out.print(f"[dim]decision log: {esc(result.decision_log)}[/]")
    for label, items in lists.items():
        for item in items:
            out.print(f"{label}: {esc(item)}")
    out.print(
        f"[dim]run {result.id} · {len(result.turns)} turns · {result.rounds} round(s) · "
        f"{result.model_calls} model calls · {result.prompt_tokens} prompt tokens[/]"
    )
    if session_id:
        out.print(session_used(session_id))
