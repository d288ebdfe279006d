"""`noetic calibration report|beliefs|drift|guardian` (`noetic outcome`: :mod:`.outcome`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt, group
from noetic.cli.output import emit, esc, stdout
from noetic.cli.render import bar, interval, phase_lines, stated_as
from noetic.errors import UsageError
from noetic.store import open_store

app = group("Calibration against recorded outcomes.")

# Not an error: a check that found what it looks for, distinct from 1 (usage) and 3 (runtime).
EXIT_DRIFT = 4

AiOpt = Annotated[str | None, typer.Option("--ai-id", help="Only this AI's outcomes.")]


def _fmt(metric: Any) -> str:
    if metric.value is None:
        return f"— ({metric.reason})"
    if metric.low is None or metric.high is None:
        return f"{metric.value:.3f}  ({metric.reason})"
    return f"{metric.value:.3f}  [95% CI {metric.low:.3f}–{metric.high:.3f}]"


@app.command()
def report(
    ai_id: AiOpt = None,
    profile: Annotated[str | None, typer.Option(help="Only tasks run under this profile.")] = None,
    domain: Annotated[str | None, typer.Option(help="Only sessions in this domain.")] = None,
    since_days: Annotated[float | None, typer.Option(help="Only the last N days.")] = None,
    at: Annotated[
        str,
        typer.Option(
            help="The phase the summary and the metrics score: preflight, check (the last), "
            "postflight or adversarial_review."
        ),
    ] = "preflight",
    by: Annotated[
        str,
        typer.Option(
            help="phase, or the per-phase report for each agent, model, engine, persona or profile."
        ),
    ] = "phase",
    bins: Annotated[int, typer.Option(min=1, max=50, help="Equal-mass bins.")] = 10,
    plot: Annotated[Path | None, typer.Option(help="Write a reliability diagram PNG.")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Calibration against recorded outcomes: a summary from the first outcome, the gap per
    phase (PREFLIGHT, CHECK, POSTFLIGHT, adversarial review), standard against adversarial
    reviews, and Brier score, ECE, reliability, signed bias and AUROC."""
    from noetic.operations.calibrating import report as calibration_report

    with handled(json):
        result = calibration_report(
            lambda: open_store(store), ai_id=ai_id, profile=profile, domain=domain,
            since_days=since_days, at=at, bins=bins, by=by,
        )  # fmt: skip
        if plot is not None:
            _plot(result, plot)

    def render() -> None:
        out = stdout()
        m = result.metrics
        out.print(f"[bold]Calibration[/] over {result.tasks} tasks ({result.outcomes} outcomes)")
        for line in phase_lines(result):
            out.print(line, markup=False)
        out.print(
            f"\n[bold]{result.prediction}[/], scored (Brier and AUROC from the first outcomes, "
            "the rest from 20):"
        )
        metrics = [
            ("Brier score", _fmt(m.brier), ""),
            (f"ECE ({m.bins} bin{'s' if m.bins != 1 else ''})", _fmt(m.ece), ""),
            ("debiased ECE", _fmt(m.ece_debiased), "  (≤ 0: within the noise)"),
            ("signed bias", _fmt(m.signed_bias), "  (+ = overconfident)"),
            ("AUROC", _fmt(m.auroc), ""),
        ]
        width = max(len(label) for label, _, _ in metrics) + 2  # the values in one column
        for label, value, note in metrics:
            out.print(f"  {label:<{width}}{value}{note}", markup=False)
        colour = {"miscalibrated": "yellow", "consistent with calibration": "green"}
        out.print(
            f"  {'verdict':<{width}}[{colour.get(m.test.verdict, 'dim')}]{m.test.verdict}[/] "
            f"({esc(m.test.reason)})"
        )
        if m.reliability:
            out.print("\n  confidence bin     n   stated   observed")
            for b in m.reliability:
                out.print(
                    f"  {b.low:.2f}–{b.high:.2f}  {b.count:>5}   {b.mean_confidence:.2f} "
                    f"{bar(b.mean_confidence, 12, '·')}   {b.observed:.2f} "
                    f"{bar(b.observed, 12, '·')}"
                )
        for line in _recalibration_lines(result):
            out.print(line, markup=False)
        if plot is not None:
            out.print(f"\nreliability diagram written to {esc(plot)}")

    emit(result, json, render)


def _recalibration_lines(result: Any) -> list[str]:
    """Each agent's map (what its decisions compare) and the release gate, for people."""
    lines = ["", "recalibration (what decisions compare; per agent, PREFLIGHT statements):"]
    for m in result.recalibration:
        if m.in_force:
            at = {x: q for x, q in m.curve}
            lines.append(
                f"  {m.agent}: {m.method} map in force from {m.outcomes} outcomes; stated 0.50 → "
                f"{at[0.5]:.2f}, 0.80 → {at[0.8]:.2f}, 0.95 → {at[0.95]:.2f}"
            )
        else:
            lines.append(f"  {m.agent}: no map in force ({m.outcomes} outcomes)")
        if m.brier_before is not None and m.brier_after is not None:
            lines.append(
                f"    held-out Brier ({m.held_out} outcomes): stated "
                f"{interval(m.brier_before, digits=3)} → calibrated "
                f"{interval(m.brier_after, digits=3)}"
            )
        lines.append(f"    {m.reason}")
    g = result.gate
    if g is not None:
        state = "configured" if g.configured else "not configured; shown at"
        lines.append(
            f"release gate ({state} at most {g.max_failure_rate:.0%} failing, "
            f"{g.confidence:.0%} confidence):"
        )
        if g.threshold is None:
            lines.append(f"  no threshold: {g.reason}")
        else:
            f = g.failures_among_released
            lines.append(
                f"  threshold stated {g.threshold:.2f} (calibrated {g.calibrated_threshold:.2f}); "
                f"{g.released} tasks released, {g.held} held; failures among released "
                f"{f.value:.1%} [{f.low:.1%}, {f.high:.1%}]"
            )
    return lines


def _plot(result: Any, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib", fix="pip install 'noetic[plot]'") from None
    bins = result.metrics.reliability
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    ax.plot(
        [b.mean_confidence for b in bins], [b.observed for b in bins], marker="o", label="agent"
    )
    ax.set(xlabel="stated confidence", ylabel="observed success rate", xlim=(0, 1), ylim=(0, 1))
    ax.set_title(f"Reliability ({result.tasks} tasks)")
    ax.legend(loc="upper left")
    fig.savefig(path, dpi=100, bbox_inches="tight")
    plt.close(fig)


@app.command()
def beliefs(ai_id: AiOpt = None, store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Bayesian beliefs about calibration bias per vector, learned from outcomes."""
    from noetic.calibration import query_bayesian_beliefs

    with handled(json):
        result = query_bayesian_beliefs(open_store(store), ai_id)

    def render() -> None:
        out = stdout()
        out.print(
            f"[bold]Beliefs[/] from {result.tasks} tasks with outcomes "
            "[dim](the vectors' confidence; p_success is scored by calibration report)[/]"
        )
        for b in result.beliefs:
            flag = f"[yellow]{b.direction}[/]" if b.credible else "[dim]no credible bias[/]"
            out.print(
                f"  {b.target:<12} bias {b.mean:+.3f} ± {1.96 * b.variance**0.5:.3f} "
                f"(n={b.evidence})  {flag}"
            )

    emit(result, json, render)


@app.command("drift")
def drift_(
    ai_id: AiOpt = None,
    window: Annotated[
        int, typer.Option(min=1, help="An alarm within this many recent outcomes is current drift.")
    ] = 20,
    alpha: Annotated[
        float,
        typer.Option(
            min=0.0001, max=0.5, help="The false-alarm rate, kept however often you check."
        ),
    ] = 0.05,
    shift: Annotated[
        float | None,
        typer.Option(
            min=-1.0,
            max=1.0,
            help="Also simulate how many outcomes a shift this large in success takes to detect.",
        ),
    ] = None,
    fail_on_drift: Annotated[
        bool,
        typer.Option(
            "--fail-on-drift",
            help=f"Exit {EXIT_DRIFT} when drift is detected (the report is printed either way).",
        ),
    ] = False,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Calibration drift and sycophancy-style drift: a sequential test over the outcomes."""
    from noetic.calibration import check_drift_monitor

    with handled(json):
        result = check_drift_monitor(
            open_store(store), ai_id, window=window, alpha=alpha, shift=shift
        )

    def render() -> None:
        out = stdout()
        out.print(f"drift: {esc(result.reason)}")
        out.print(
            "judged: what each task stated at PREFLIGHT, "
            + stated_as(result.stated, result.stated_from),
            markup=False,
        )
        out.print(f"[dim]{esc(result.guarantee)}[/]")
        d = result.detection
        if d is not None:
            median = f"a median of {d.median:.0f}" if d.median is not None else "more than"
            out.print(
                f"a {d.shift:+.0%} shift in success is detected after {median} outcomes "
                f"(90%: {f'{d.p90:.0f}' if d.p90 is not None else f'over {d.horizon}'}; "
                f"{d.detected:.0%} within {d.horizon}; {d.runs} simulated runs)"
            )

    emit(result, json, render)
    if fail_on_drift and (result.calibration_drift or result.sycophancy_drift):
        raise typer.Exit(EXIT_DRIFT)


@app.command()
def guardian(
    profile: Annotated[str, typer.Option(help="The profile to tune.")],
    ai_id: AiOpt = None,
    apply: Annotated[bool, typer.Option("--apply", help="Make the proposed change.")] = False,
    undo: Annotated[int | None, typer.Option(help="Undo an applied adjustment by id.")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Propose a profile correction from credible bias; change nothing without --apply."""
    from noetic.calibration import run_guardian
    from noetic.calibration import undo as undo_adjustment
    from noetic.profiles import ProfileRegistry

    with handled(json):
        opened = open_store(store)
        if undo is not None:
            result: Any = undo_adjustment(opened, undo)
        else:
            registry = ProfileRegistry(opened.home / "profiles")
            result = run_guardian(opened, registry, profile, ai_id=ai_id, apply=apply)

    def render() -> None:
        out = stdout()
        if undo is not None:
            out.print(f"adjustment {result.id} undone: {result.field} back to {result.old}")
            return
        b = result.belief
        out.print(
            f"[bold]{esc(result.profile)}[/]: {result.tasks_considered} tasks · "
            f"bias {b.mean:+.3f} " + esc(f"[{b.low:+.3f}, {b.high:+.3f}]")
        )
        out.print(
            "judged: what each task stated at PREFLIGHT, "
            + stated_as(result.stated, result.stated_from),
            markup=False,
        )
        if result.proposal:
            p = result.proposal
            out.print(f"proposal: {p.field} {p.old} → {p.new} ({esc(p.reason)})")
        h = result.held_out
        if h is not None and h.brier_after is not None:
            out.print(
                f"held out: fitted on the first {h.fitted_on} outcomes, the Brier score on the "
                f"{h.held_out} after them goes {h.brier_before:.4f} → {h.brier_after:.4f}"
            )
        out.print(result.note, markup=False)

    emit(result, json, render)
