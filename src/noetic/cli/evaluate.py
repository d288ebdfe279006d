"""`noetic eval humaneval --provider P`: a model's calibration on problems its tests judge;
`noetic eval run --tasks FILE`, `resume RUN`, `report RUN`, `compare RUN RUN`, `list`."""

from __future__ import annotations

import json as jsonlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from noetic.cli.exits import EXIT_INTERRUPTED, CommandExit, exit_for_run, handled
from noetic.cli.options import JsonOpt, ProviderOpt, StoreOpt, group, with_options
from noetic.cli.output import emit, esc, stderr, stdout
from noetic.cli.render import interval, table
from noetic.runtime.opening import open_tracker

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from noetic.evaluation.engine import EvalRun, Tally, TaskResult
    from noetic.evaluation.report import EvalReport


app = group(
    "Measure a model's calibration offline: it states P(success), writes the function, "
    "reassesses, and the problem's own tests judge it.\n\n"
    "noetic eval humaneval --provider anthropic:claude-haiku-4-5 --limit 20"
)

ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(min=1, max=64, help="Problems at once (default: twice the cores, 2 to 16)."),
]


@with_options
def _run_options(
    provider: ProviderOpt = None,
    profile: Annotated[
        str | None, typer.Option(help="Profile (default: chosen by the model).")
    ] = None,
    review: Annotated[
        str,
        typer.Option(
            help="POSTFLIGHT review: profile (its postflight_review), standard, adversarial, or "
            "split (half of each, to compare them)."
        ),
    ] = "profile",
    limit: Annotated[int | None, typer.Option(min=1, help="Run only the first N problems.")] = None,
    tasks_matching: Annotated[
        str | None,
        typer.Option("--tasks-matching", help="Task ids containing this (or matching a glob)."),
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Shuffle the problems with this seed first.")
    ] = None,
    concurrency: ConcurrencyOpt = None,
    test_timeout: Annotated[
        float, typer.Option("--test-timeout", min=0.1, max=600, help="Seconds the tests may run.")
    ] = 10.0,
    test_memory: Annotated[
        int | None,
        typer.Option(
            "--test-memory",
            min=64,
            help="MiB of address space the tests may use (default 1024); an allocation beyond it "
            "fails them.",
        ),
    ] = None,
    sandbox: Annotated[
        str, typer.Option(help="required (bubblewrap, the default), auto, or off.")
    ] = "required",
    ai_id: Annotated[
        str, typer.Option("--ai-id", help="The agent the outcomes are filed under.")
    ] = "eval",
    store: StoreOpt = None,
) -> None:
    """The options of the commands that start a run (humaneval, run)."""


@app.command()
@_run_options
def humaneval(
    options: dict[str, Any],
    json: JsonOpt = False,
) -> None:
    """HumanEval's 164 problems (built in): PREFLIGHT from the prompt, the function,
    POSTFLIGHT, then the problem's tests in the sandbox, whose verdict is the outcome.

    Exits 0 when the run finished (whatever the tests said), 3 when the model failed (resume
    the run), 130 when interrupted (resume it)."""
    _start("humaneval", None, json=json, **options)


@app.command("run")
@_run_options
def run_tasks(
    tasks: Annotated[
        Path,
        typer.Option("--tasks", help="A JSON Lines file: task_id, prompt, test, entry_point."),
    ],
    options: dict[str, Any],
    json: JsonOpt = False,
) -> None:
    """A team's own problems, in HumanEval's shape, run as `noetic eval humaneval` runs its
    own. Exits as it does."""
    _start(None, tasks, json=json, **options)


def _start(task_set: str | None, tasks_file: Path | None, **o: Any) -> None:
    from noetic.operations.evaluating import start_eval
    from noetic.store.evals import tasks

    as_json, store, matching = o.pop("json"), o.pop("store"), o.pop("tasks_matching")
    watch = _Watch(as_json)

    def started(record: Any, shown: str) -> None:
        watch.begin(record.id, len(tasks(tracker.store, record.id)), shown)

    with handled(as_json):
        tracker = open_tracker(store, create=True)
        result = watch.run(
            start_eval(  # the other run options are named as start_eval names them
                tracker, task_set, tasks_file=tasks_file, matching=matching, **o,
                on_start=started, on_task=watch.task,
            )
        )  # fmt: skip
    watch.finish(result)


@app.command()
def resume(
    run: Annotated[str, typer.Argument(help="The eval run id (or a unique prefix).")],
    provider: Annotated[
        str | None, typer.Option(help="Default: the provider the run began on.")
    ] = None,
    concurrency: ConcurrencyOpt = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Go on with an interrupted, killed or failed run: each problem from the step it reached;
    nothing that finished runs again. Exits as `noetic eval humaneval` does."""

    from noetic.operations.evaluating import resume_eval
    from noetic.store.evals import get_run, tasks

    watch = _Watch(json)
    with handled(json):
        tracker = open_tracker(store)
        record = get_run(tracker.store, run)
        rows = tasks(tracker.store, record.id)
        watch.begin(record.id, len(rows), record.provider or record.model or "")
        watch.already(sum(1 for t in rows if t.state in ("done", "error")))
        result = watch.run(
            resume_eval(
                tracker, record.id, provider=provider, concurrency=concurrency, on_task=watch.task
            )
        )
    watch.finish(result)


@app.command()
def report(
    run: Annotated[str, typer.Argument(help="The eval run id (or a unique prefix).")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """A run's calibration: per phase the mean stated P(success) against the tests' success
    rate, the gap, Brier and its decomposition, AUROC; the two reviews; cost and time."""
    from noetic.operations.evaluating import eval_report

    with handled(json):
        result = eval_report(open_tracker(store), run)
    emit(result, json, lambda: _render_report(result))


@app.command()
def compare(
    first: Annotated[str, typer.Argument(help="An eval run id (or a unique prefix).")],
    second: Annotated[str, typer.Argument(help="Another.")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Two runs side by side (two models, two profiles, two reviews): each phase's gap and
    Brier in both, and the difference of the gaps with its interval."""
    from noetic.operations.evaluating import compare_evals

    with handled(json):
        result = compare_evals(open_tracker(store), first, second)

    def render() -> None:
        a, b = result.first.run, result.second.run
        out = stdout()
        out.print(f"[bold]A[/] {a.run_id} · {esc(a.model)} · {esc(a.profile)} · {a.done} judged")
        out.print(f"[bold]B[/] {b.run_id} · {esc(b.model)} · {esc(b.profile)} · {b.done} judged")
        t = table(
            "phase", "A stated/rate", "A gap", "B stated/rate", "B gap", "A−B gap", "Brier A−B"
        )
        for d in result.differences:
            x, y = result.first.by_phase[d.phase], result.second.by_phase[d.phase]
            t.add_row(
                d.phase, _stated_rate(x), interval(x.gap, True), _stated_rate(y),
                interval(y.gap, True),
                interval(d.gap_difference, True) + (" *" if d.significant else ""),
                "—" if d.brier_difference is None else f"{d.brier_difference:+.3f}",
            )  # fmt: skip
        out.print(t)
        out.print("[dim]A−B gap > 0: B is less overconfident; * its interval leaves out 0[/]")

    emit(result, json, render)


@app.command("list")
def list_runs(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Every eval run in the store, oldest first."""
    from noetic.evaluation.engine import stored_run
    from noetic.operations.evaluating import list_evals

    with handled(json):
        tracker = open_tracker(store)
        rows = [stored_run(tracker.store, r.id) for r in list_evals(tracker)]

    def render() -> None:
        t = table("run", "set", "model", "status", "judged", "passed", "rate")
        for r in rows:
            rate = "—" if r.success_rate is None else f"{r.success_rate:.2f}"
            t.add_row(r.run_id, r.task_set, esc(r.model), r.status, f"{r.done}/{r.total}",
                      str(r.passed), rate)  # fmt: skip
        stdout().print(t)

    emit([r.model_dump(mode="json", exclude={"tasks"}) for r in rows], json, render)


# progress and rendering ---------------------------------------------------------------------


class _Watch:
    """What a run shows while it goes: a progress bar on a terminal's stderr (the running
    success rate and cost), a line per problem on a pipe's, and with ``--json`` one JSON object
    per problem on stdout as it finishes, then the summary."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.run_id = ""
        self.printed: set[int] = set()
        self.bar: Any = None
        self.job: Any = None

    def begin(self, run_id: str, total: int, provider: str) -> None:
        self.run_id = run_id
        if self.as_json:
            return
        err = stderr()
        err.print(f"[bold]eval[/] {run_id} · {esc(provider)} · {total} problems")
        if sys.stderr.isatty():
            from rich import progress as p

            self.bar = p.Progress(
                p.TextColumn("{task.description}"), p.BarColumn(), p.MofNCompleteColumn(),
                p.TextColumn("{task.fields[line]}"), p.TimeElapsedColumn(), console=err,
            )  # fmt: skip
            self.job = self.bar.add_task("problems", total=total, line="")
            self.bar.start()

    def already(self, done: int) -> None:
        if self.bar is not None:
            self.bar.update(self.job, completed=done)

    def task(self, result: TaskResult, tally: Tally) -> None:
        self.printed.add(result.seq)
        if self.as_json:
            sys.stdout.write(jsonlib.dumps(result.model_dump(mode="json")) + "\n")
            sys.stdout.flush()
            return
        rate = tally.passed / tally.done if tally.done else 0.0
        cost = "cost unknown" if tally.cost_usd is None else f"${tally.cost_usd:.4f}"
        line = f"passed {rate:.0%} · {cost} · {tally.tokens:,} tokens"
        if self.bar is not None:
            self.bar.update(self.job, completed=tally.done + tally.errors, line=line)
            return
        verdict = {True: "pass", False: "fail"}.get(result.passed, result.state)  # type: ignore[arg-type]
        stderr().print(
            f"{tally.done + tally.errors}/{tally.total} {esc(result.task_id)} {verdict}"
            f" · {esc(result.reason or '')} · {line}"
        )

    def run(self, work: Coroutine[Any, Any, EvalRun]) -> EvalRun:
        """The run ``work`` makes, to its end; interrupted, how to resume it is said (and the
        command exits)."""
        import asyncio

        try:
            return asyncio.run(work)
        except KeyboardInterrupt:
            self.stop()
        message = f"interrupted: `noetic eval resume {self.run_id}` goes on where it stopped"
        if self.as_json:
            sys.stdout.write(jsonlib.dumps({"kind": "interrupted", "run_id": self.run_id,
                                            "detail": message}) + "\n")  # fmt: skip
        else:
            stderr().print(f"[yellow]{esc(message)}[/]")
        raise CommandExit(EXIT_INTERRUPTED)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None

    def finish(self, result: EvalRun) -> None:
        self.stop()
        if self.as_json:
            for t in result.tasks:
                if t.seq not in self.printed:
                    sys.stdout.write(jsonlib.dumps(t.model_dump(mode="json")) + "\n")
            summary = result.model_dump(mode="json", exclude={"tasks"})
            sys.stdout.write(jsonlib.dumps(summary) + "\n")
        else:
            _render_run(result)
        exit_for_run(result.status)


def _render_run(run: EvalRun, hint: bool = True) -> None:
    out = stdout()
    rate = "—" if run.success_rate is None else f"{run.success_rate:.2f}"
    out.print(
        f"[bold]{run.run_id}[/] {esc(run.task_set)} · {esc(run.model)} · {run.status}: "
        f"{run.done}/{run.total} judged, {run.passed} passed (rate {rate}), {run.failed} failed, "
        f"{run.errors} errors, {run.pending} not run"
    )
    out.print(f"[dim]{esc(run.usage.line())}[/]")
    if run.detail:
        stderr().print(f"[bold red]{esc(run.detail)}[/]")
    if run.done and hint:
        out.print(f"[dim]the calibration: noetic eval report {run.run_id}[/]")


def _stated_rate(ph: Any) -> str:
    if not ph.n:
        return "—"
    return f"{ph.mean_stated:.2f} / {ph.success_rate.value:.2f} (n {ph.n})"


def _render_report(report: EvalReport) -> None:
    _render_run(report.run, hint=False)
    out = stdout()
    t = table("phase", "n", "stated", "success rate (95%)", "gap (95%)", "Brier (95%)",
              "reliability", "resolution", "AUROC")  # fmt: skip
    for name, ph in report.by_phase.items():
        if not ph.n:
            t.add_row(name, "0", "—", "—", "—", "—", "—", "—", "—")
            continue
        parts = ph.decomposition
        t.add_row(
            name, str(ph.n), f"{ph.mean_stated:.2f}", interval(ph.success_rate),
            interval(ph.gap, True) + (" *" if ph.significant else ""),
            interval(ph.brier, digits=3),
            "—" if parts is None else f"{parts.reliability:.3f}",
            "—" if parts is None else f"{parts.resolution:.3f}",
            interval(ph.auroc),
        )  # fmt: skip
    out.print(t)
    out.print("[dim]gap = mean stated P(success) − success rate (> 0: overconfident); "
              "* its interval leaves out 0[/]")  # fmt: skip
    r = report.reviews
    if r is not None:
        out.print(
            f"standard review gap {interval(r.standard.gap, True)} (n {r.standard.n}), "
            f"adversarial {interval(r.adversarial.gap, True)} (n {r.adversarial.n}); "
            f"difference {interval(r.difference, True)}"
            + (" (significant)" if r.significant else "")
        )
    tm = report.timing
    if tm.problems and tm.total_ms is not None:
        out.print(
            f"[dim]per problem: {tm.total_ms:.0f} ms in all, {tm.model_ms or 0:.0f} ms the "
            f"model, {tm.test_ms or 0:.0f} ms the tests (run while the model reassesses), "
            f"{tm.other_ms or 0:.0f} ms the rest"
            + (f" ({tm.added_ms:.0f} ms of it not behind the tests)" if tm.added_ms is not None
               else "")
            + "[/]"
        )  # fmt: skip
