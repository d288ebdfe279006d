"""The agent-driven workflow: bootstrap, preflight, investigate, check, postflight, state.

Each command reads its input, calls its operation (:mod:`noetic.operations.workflow`) and
renders the result. The options are declared in :mod:`noetic.cli.declared`; the fast path
(:mod:`noetic.cli.fast`) and typer both call these functions with every parameter given, so this
module imports neither typer nor anything a command does not use."""

from __future__ import annotations

from pathlib import Path

from noetic.cli.answered import answer
from noetic.cli.exits import handled
from noetic.cli.inputs import read_json_input
from noetic.cli.output import emit, esc, session_used, stderr, stdout
from noetic.operations import workflow as ops
from noetic.operations.once import Replayed
from noetic.runtime.opening import current_session, open_tracker

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypedDict

    from typing_extensions import Unpack
else:  # at run time, a class that carries the options' annotations
    TypedDict = dict


class Assessing(TypedDict):
    """The options preflight, check and postflight share (declared once in
    :mod:`noetic.cli.declared`)."""

    vectors: str | None
    vectors_file: Path | None
    p_success: str | None
    provider: str | None
    session: str | None
    ai_id: str | None
    request_id: str | None
    store: Path | None
    json: bool


def bootstrap(
    *,
    profile: str | None,
    ai_model: str | None,
    domain: str | None,
    ai_id: str,
    project: str | None,
    session_type: str | None,
    recall: str | None,
    own: bool,
    vectors: str | None,
    request_id: str | None,
    store: Path | None,
    json: bool,
) -> None:
    import os
    import shlex

    with handled(json):
        tracker = open_tracker(store, create=True)
        fresh = read_json_input(vectors, None) if recall and vectors is not None else None
        done = ops.bootstrap(
            tracker, ai_id=ai_id, profile=profile, ai_model=ai_model, domain=domain,
            project=project, recall=recall, scores=fresh, own=own, session_type=session_type,
            request_id=request_id,
        )  # fmt: skip

    def env(d: ops.Bootstrapped) -> dict[str, str]:
        return {"NOETIC_AI_ID": ai_id, "NOETIC_SESSION": d.session.id}

    def exports(d: ops.Bootstrapped) -> list[str]:
        return [f"export {key}={shlex.quote(value)}" for key, value in env(d).items()]

    stale = os.environ.get("NOETIC_SESSION")
    if not isinstance(done, Replayed) and stale and stale != done.session.id:
        stderr().print(
            f"[yellow]NOETIC_SESSION is still {stale}:[/] commands in this shell act on it "
            "until you run the export lines below"
        )

    def render(d: ops.Bootstrapped) -> None:
        session, chosen, recalled = d.session, d.profile, d.recall
        out = stdout()
        threshold = chosen.investigation.confidence_threshold
        rounds = chosen.investigation.max_rounds or "unlimited"
        out.print(
            f"[bold]session[/] {session.id} · ai {esc(session.ai_id)} · profile {esc(chosen.name)}"
            + (f" · type {esc(session.session_type)}" if session.session_type else "")
        )
        out.print(
            f"  threshold {threshold} · max rounds {rounds} · "
            f"tools {chosen.investigation.tool_mode.value} · {esc(chosen.philosophy)}"
        )
        out.print(f"  store {esc(tracker.store.shown)}")
        if recalled is not None:
            from noetic.cli.render import recall_accounting

            out.print(f"recall searched {recalled.scope}", markup=False)
            if recalled.considered:
                out.print(recall_accounting(recalled), markup=False)
            for w in recalled.warnings:
                out.print(f"[yellow]recall:[/] {esc(w)}")
            out.print(recalled.context, markup=False)
        out.print("pin this agent and session in this shell (or eval these lines):")
        for line in exports(d):
            out.print(line, markup=False, soft_wrap=True)
        out.print('next: noetic preflight "describe the task"')

    answer(
        done,
        json,
        render,
        lambda d: {"session": d.session, "profile": d.profile, "recall": d.recall,
                   "env": env(d), "exports": exports(d)},
    )  # fmt: skip


def _probability(text: str | None) -> float | None:
    """``--p-success``: a number (its range is checked with the assessment)."""
    if text is None:
        return None
    try:
        return float(text)
    except ValueError:
        from noetic.errors import InvalidValueError

        raise InvalidValueError(
            f"--p-success must be a number in [0, 1], got {text!r}",
            field="p_success",
            value=text,
            fix="write it as a fraction: --p-success 0.8",
        ) from None


def _render_assessment(result: Any) -> None:
    from noetic.cli.render import calibration_line, decision_line, vector_table

    out = stdout()
    if isinstance(result, ops.AssessmentPrompt):
        out.print(result.prompt, markup=False)
        return
    a = result.assessment.assessment
    title = f"{a.phase.value.upper()} · {esc(result.cascade.task)}"
    before = None
    if a.phase == "postflight":
        delta = result.calibration.delta
        before = {k: round(a.vectors[k] - d, 6) for k, d in delta.items()}
    out.print(vector_table(a.vectors, title, before))
    out.print(session_used(result.session_id))
    if a.p_success is not None or a.review is not None:
        stated = f"p_success {a.p_success:.2f}" if a.p_success is not None else ""
        kind = f"{a.review.value} review" if a.review is not None else ""
        out.print(" · ".join(x for x in (stated, kind) if x))
    if a.carried:
        out.print(f"[dim]carried from the previous assessment: {', '.join(a.carried)}[/]")
    out.print(decision_line(result.decision))
    if a.phase == "postflight":
        out.print(calibration_line(result.calibration))


def _phase(
    phase: str,
    o: Assessing,
    task: str | None = None,
    abandon_open: bool = False,
    review: str | None = None,
) -> Any:
    """The phase's operation on the scores given (none read when a model is to answer),
    answered; a :class:`~noetic.operations.once.Replayed` when ``request_id`` was applied
    before."""
    with handled(o["json"]):
        tracker = open_tracker(o["store"])
        sid = current_session(tracker, o["session"], o["ai_id"])
        provider = o["provider"]
        if provider:  # the model answers: nothing is read; scores given too are refused
            given = o["vectors"] is not None or o["vectors_file"] is not None
            scores: Any = {} if given else None
        else:
            scores = read_json_input(o["vectors"], o["vectors_file"])
        common: dict[str, Any] = {"provider": provider, "request_id": o["request_id"]}
        common["p_success"] = _probability(o["p_success"])
        if phase == "preflight":
            result = ops.preflight(
                tracker, sid, task or "", scores, abandon_open=abandon_open, **common
            )
        elif phase == "check":
            result = ops.check(tracker, sid, scores, **common)
        else:
            result = ops.postflight(tracker, sid, scores, review=review, **common)
        prompted = isinstance(result, ops.AssessmentPrompt)
        if prompted and not o["json"] and ops.default_provider_configured(tracker):
            stderr().print(
                "a default provider is configured, but assessments are the caller's own unless "
                "asked: add --provider default to have that model answer",
                markup=False,
            )
    answer(result, o["json"], _render_assessment)
    return result


def preflight(task: str, *, abandon_open: bool, **options: Unpack[Assessing]) -> None:
    _phase("preflight", options, task, abandon_open)


def check(**options: Unpack[Assessing]) -> None:
    _phase("check", options)


def postflight(*, review: str | None, **options: Unpack[Assessing]) -> None:
    result = _phase("postflight", options, review=review)
    if not isinstance(result, ops.AssessmentPrompt | Replayed):
        # a finished task: index it for recall, off this process, once the command's store is
        # closed (its files written), so the indexer neither opens it beside this process's
        # last writes nor competes with them; its location is enough to start it
        from noetic import cli
        from noetic.recall.background import spawn_indexer
        from noetic.store import close_stores

        close_stores(done=False)
        # run as a program the command ends as it answers: the indexer is left to the system
        spawn_indexer(options["store"], ends_soon=cli.program)


def investigate(
    *,
    note: str,
    tool: str | None,
    vector: str | None,
    session: str | None,
    ai_id: str | None,
    request_id: str | None,
    store: Path | None,
    json: bool,
) -> None:
    with handled(json):
        if vector is not None:
            from noetic.vectors import check_score

            check_score(vector, 0.0)  # before the store: a misspelt vector says so first
        tracker = open_tracker(store)
        sid = current_session(tracker, session, ai_id)
        record = ops.investigate(
            tracker, sid, note, tool=tool, vector=vector, request_id=request_id
        )
    answer(
        record,
        json,
        lambda r: stdout().print(
            f"investigation round {r.round} recorded"
            + (f" (tool {esc(r.tool)})" if r.tool else "")
            + f" in session {r.session_id} · next: noetic check"
        ),
    )


def state(*, session: str | None, ai_id: str | None, store: Path | None, json: bool) -> None:
    from noetic.cli.render import decision_line, vector_table

    with handled(json):
        tracker = open_tracker(store)
        result = ops.state(tracker, current_session(tracker, session, ai_id))

    def render() -> None:
        out = stdout()
        out.print(f"[bold]session[/] {result.session.id} · profile {esc(result.profile)}")
        if result.open_cascade:
            out.print(f"open task: {esc(result.open_cascade.task)}")
        if result.latest:
            latest = result.latest
            out.print(vector_table(latest.assessment.vectors, f"latest: {latest.assessment.phase}"))
            out.print(decision_line(latest.decision))
        out.print(f"next: {esc(result.next_step)}")

    emit(result, json, render)
