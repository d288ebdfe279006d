"""``noetic eval``: start an eval run (everything it is given checked before anything is
recorded), go on with one, read its report, compare two. ``on_task`` hears of each problem as it
finishes, with the running tally.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from noetic.errors import InvalidValueError

if TYPE_CHECKING:
    from noetic.evaluation.engine import EvalRun, EvalSettings, OnTask
    from noetic.evaluation.report import EvalComparison, EvalReport
    from noetic.operations.runs import ProviderChoice
    from noetic.runtime.tracker import Tracker
    from noetic.store.evals import EvalRunRecord


async def start_eval(
    tracker: Tracker,
    task_set: str | None = "humaneval",
    *,
    tasks_file: Path | str | None = None,
    provider: ProviderChoice = None,
    profile: str | None = None,
    review: str = "profile",
    limit: int | None = None,
    matching: str | None = None,
    seed: int | None = None,
    concurrency: int | None = None,
    test_timeout: float = 10.0,
    test_memory: int | None = None,
    max_tokens: int = 2048,
    sandbox: str = "required",
    ai_id: str = "eval",
    on_start: Callable[[EvalRunRecord, str], None] | None = None,
    on_task: OnTask | None = None,
) -> EvalRun:
    """Run ``task_set`` (built in: ``humaneval``) or the problems in ``tasks_file`` on the
    model: PREFLIGHT, the function, POSTFLIGHT (``review``: ``profile``, ``standard``,
    ``adversarial`` or ``split``), the tests in the sandbox. ``matching``, ``seed`` and
    ``limit`` choose the problems (in that order). Async."""
    from noetic.evaluation.engine import check_review, review_of, run_eval
    from noetic.evaluation.problems import built_in, choose, from_jsonl
    from noetic.operations.runs import _model
    from noetic.runtime.context import build_context
    from noetic.store import evals
    from noetic.tools.sandbox import choose as choose_sandbox

    if tasks_file is not None and task_set not in (None, ""):
        raise InvalidValueError(
            f"give a task set ({task_set!r}) or --tasks FILE, not both", field="tasks"
        )
    if tasks_file is None and not task_set:
        raise InvalidValueError(
            "no task set given", field="tasks", fix="humaneval, or --tasks FILE"
        )
    choice = check_review(review)
    choose_sandbox(sandbox)  # an unknown mode, or required without bubblewrap: say so now
    settings = _settings(
        **({"concurrency": concurrency} if concurrency is not None else {}),
        test_timeout_s=test_timeout,
        **({"test_memory_mb": test_memory} if test_memory is not None else {}),
        max_tokens=max_tokens,
        sandbox=sandbox,
    )
    problems = from_jsonl(Path(tasks_file)) if tasks_file is not None else built_in(task_set or "")
    chosen = choose(problems, matching=matching, limit=limit, seed=seed)
    model, shown, name = _model(tracker, provider)
    the_profile = tracker.registry.select(profile, ai_model=name)
    label = Path(tasks_file).name if tasks_file is not None else (task_set or "").lower()
    record = evals.create_run(
        tracker.store,
        task_set=label,
        provider=model if isinstance(model, str) else None,
        model=name,
        ai_id=ai_id,
        profile=the_profile.name,
        settings={
            "engine": settings.model_dump(),
            "review": choice,
            "limit": limit,
            "matching": matching,
            "seed": seed,
        },
        problems=[
            (p.model_dump(), review_of(choice, the_profile, seq)) for seq, p in enumerate(chosen, 1)
        ],
    )
    ctx = build_context("eval", tracker=tracker, provider=model, profile=the_profile)
    if on_start is not None:
        on_start(record, shown)
    return await run_eval(ctx, record.id, on_task=on_task)


async def resume_eval(
    tracker: Tracker,
    run_id: str,
    *,
    provider: ProviderChoice = None,
    fallback: ProviderChoice = None,
    concurrency: int | None = None,
    on_task: OnTask | None = None,
) -> EvalRun:
    """Go on with an eval run: the problems not yet judged, each from the step it reached;
    none that finished runs again. Without ``provider`` on the provider the run began on, or,
    for a run begun on a provider object (the MCP server's sampling), on ``fallback``, then the
    configured one; ``concurrency`` changes how many run at once from now on. Async."""
    from noetic.evaluation.engine import EvalSettings, run_eval, stored_run
    from noetic.operations.runs import _given
    from noetic.runtime.context import build_context
    from noetic.store import evals

    record = evals.get_run(tracker.store, run_id)
    if record.status == "completed":
        return stored_run(tracker.store, record.id)
    if concurrency is not None:
        engine = EvalSettings.model_validate(record.settings.get("engine", {}))
        changed = _settings(**{**engine.model_dump(), "concurrency": concurrency})
        evals.update_run(
            tracker.store, record.id,
            settings={**record.settings, "engine": changed.model_dump()},
        )  # fmt: skip
    given = _given(provider)
    if given is None:
        given = record.provider if record.provider is not None else _given(fallback)
    ctx = build_context(
        "eval",
        tracker=tracker,
        provider=given,
        profile=record.profile,
        needs_model=True,
    )
    return await run_eval(ctx, record.id, on_task=on_task)


def _settings(**given: Any) -> EvalSettings:
    """The engine's settings, or a clear error naming the value out of bounds."""
    from pydantic import ValidationError

    from noetic.evaluation.engine import EvalSettings

    try:
        return EvalSettings(**given)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise InvalidValueError(
            f"{field}: {first['msg']} (got {first.get('input')!r})", field=field
        ) from None


def eval_report(tracker: Tracker, run_id: str) -> EvalReport:
    """The calibration report of one eval run. Sync."""
    from noetic.evaluation.report import eval_report as report

    return report(tracker.store, run_id)


def compare_evals(tracker: Tracker, first: str, second: str) -> EvalComparison:
    """Two eval runs side by side. Sync."""
    from noetic.evaluation.report import compare_runs

    return compare_runs(tracker.store, first, second)


def list_evals(tracker: Tracker) -> list[EvalRunRecord]:
    """Every eval run in the store, oldest first. Sync."""
    from noetic.store.evals import runs

    return runs(tracker.store)
