"""The agent-driven workflow: bootstrap, preflight, investigate, check, postflight, state.

Each command's work, as a plain function: typer declares the options in
:mod:`noetic.cli.declared`, and the fast path (:mod:`noetic.cli.fast`) calls these
directly, so this module imports neither typer nor anything a command does not use."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from noetic.cli._common import (
    current_session,
    emit,
    esc,
    handled,
    open_tracker,
    read_json_input,
    session_used,
    stderr,
    stdout,
)


def bootstrap(
    profile: str | None = None,
    ai_model: str | None = None,
    domain: str | None = None,
    ai_id: str = "agent",
    project: str | None = None,
    recall: str | None = None,
    vectors: str | None = None,
    store: Path | None = None,
    json: bool = False,
) -> None:
    """Open a session, choose its profile and make it this agent's current session.

    Prints the `export` lines that pin the agent and the session for the commands that follow
    in the same shell (`eval` them, or copy them)."""
    import os
    import shlex

    from noetic.store.current import write_current_session

    recalled = None
    with handled(json):
        tracker = open_tracker(store, create=True)
        if recall:
            from noetic.assessment import Assessment
            from noetic.recall.engine import recall_default

            fresh = read_json_input(vectors, None) if vectors is not None else None
            current = Assessment.from_input("preflight", fresh).vectors if fresh else None
            recalled = recall_default(
                tracker.store, recall, current=current, ai_id=ai_id, project=project
            )
        session, chosen = tracker.bootstrap(
            ai_id=ai_id, profile=profile, ai_model=ai_model, domain=domain, project=project
        )
        write_current_session(tracker.store.home, session.id, ai_id)
    env = {"NOETIC_AI_ID": ai_id, "NOETIC_SESSION": session.id}
    exports = [f"export {key}={shlex.quote(value)}" for key, value in env.items()]
    stale = os.environ.get("NOETIC_SESSION")
    if stale and stale != session.id:
        stderr().print(
            f"[yellow]NOETIC_SESSION is still {stale}:[/] commands in this shell act on it "
            "until you run the export lines below",
            markup=True,
        )

    def render() -> None:
        out = stdout()
        threshold = chosen.investigation.confidence_threshold
        rounds = chosen.investigation.max_rounds or "unlimited"
        out.print(
            f"[bold]session[/] {session.id} · ai {esc(session.ai_id)} · profile {esc(chosen.name)}"
        )
        out.print(
            f"  threshold {threshold} · max rounds {rounds} · "
            f"tools {chosen.investigation.tool_mode.value} · {esc(chosen.philosophy)}"
        )
        out.print(f"  store {esc(tracker.store.home)}")
        if recalled is not None:
            from noetic.cli.render import recall_accounting

            if recalled.considered:
                out.print(recall_accounting(recalled), markup=False)
            for w in recalled.warnings:
                out.print(f"[yellow]recall:[/] {esc(w)}")
            out.print(recalled.context, markup=False)
        out.print("pin this agent and session in this shell (or eval these lines):")
        for line in exports:
            out.print(line, markup=False, highlight=False, soft_wrap=True)
        out.print('next: noetic preflight "describe the task"')

    emit(
        {"session": session, "profile": chosen, "recall": recalled, "env": env, "exports": exports},
        json,
        render,
    )


def _assess(
    phase: str,
    session: str | None,
    ai_id: str | None,
    store: Path | None,
    vectors: str | None,
    vectors_file: Path | None,
    as_json: bool,
    task: str | None = None,
    abandon_open: bool = False,
    provider: str | None = None,
) -> Any:
    """Record an assessment: the given scores, or the model's when a provider is named;
    without either, return the prompt to answer."""
    from noetic.assessment import Assessment, Phase

    tracker = open_tracker(store)
    sid = current_session(tracker, session, ai_id)
    if provider and (vectors is not None or vectors_file is not None):
        from noetic.errors import ValidationError

        raise ValidationError(
            "give scores or --provider, not both", field="provider", value=provider
        )
    data = None if provider else read_json_input(vectors, vectors_file)
    if provider:
        assessment = _model_assessment(tracker, sid, Phase(phase), provider, task)
    elif data is None:
        prompt = tracker.prompt(sid, Phase(phase), task)
        if not as_json and _default_provider_set(tracker.store.home):
            from noetic.cli._common import stderr

            stderr().print(
                "a default provider is configured, but assessments are the caller's own unless "
                "asked: add --provider default to have that model answer",
                markup=False,
            )
        return {"session_id": sid, "phase": phase, "prompt": prompt, "recorded": False}
    else:
        assessment = Assessment.from_input(phase, data)
    if phase == "preflight":
        return tracker.preflight(sid, task or "", assessment, abandon_open=abandon_open)
    if phase == "check":
        return tracker.check(sid, assessment)
    return tracker.postflight(sid, assessment)


def _model_assessment(tracker: Any, sid: str, phase: Any, spec: str, task: str | None) -> Any:
    """Ask the named model for its own assessment, recording every call in ``llm_calls``."""
    import asyncio

    from noetic.runtime.assess import model_assessment
    from noetic.runtime.context import build_context

    cascade = tracker.store.open_cascade_of(sid)
    ctx = build_context(
        None,
        tracker=tracker,
        provider=None if spec == "default" else spec,  # default: the configured one
        session_id=sid,
        task_id=cascade.id if cascade else None,
        needs_model=True,
    )
    return asyncio.run(model_assessment(ctx, phase, task))


def _default_provider_set(home: Path) -> bool:
    from noetic.errors import UsageError
    from noetic.llm.registry import resolve_provider_spec

    try:
        resolve_provider_spec(None, home)
    except UsageError:
        return False
    return True


def _render_assessment(result: Any) -> None:
    from noetic.cli.render import calibration_line, decision_line, vector_table

    out = stdout()
    if isinstance(result, dict):
        out.print(result["prompt"], markup=False)
        return
    a = result.assessment.assessment
    title = f"{a.phase.value.upper()} · {esc(result.cascade.task)}"
    before = None
    if a.phase == "postflight":
        delta = result.calibration.delta
        before = {k: round(a.vectors[k] - d, 6) for k, d in delta.items()}
    out.print(vector_table(a.vectors, title, before))
    out.print(session_used(result.session_id))
    if a.carried:
        out.print(f"[dim]carried from the previous assessment: {', '.join(a.carried)}[/]")
    out.print(decision_line(result.decision))
    if a.phase == "postflight":
        out.print(calibration_line(result.calibration))


def preflight(
    task: str,
    vectors: str | None = None,
    vectors_file: Path | None = None,
    abandon_open: bool = False,
    provider: str | None = None,
    session: str | None = None,
    ai_id: str | None = None,
    store: Path | None = None,
    json: bool = False,
) -> None:
    """Baseline assessment before a task. Without scores, prints the prompt to answer."""
    with handled(json):
        result = _assess(
            "preflight",
            session,
            ai_id,
            store,
            vectors,
            vectors_file,
            json,
            task,
            abandon_open,
            provider,
        )
    emit(result, json, lambda: _render_assessment(result))


def check(
    vectors: str | None = None,
    vectors_file: Path | None = None,
    provider: str | None = None,
    session: str | None = None,
    ai_id: str | None = None,
    store: Path | None = None,
    json: bool = False,
) -> None:
    """Reassess after investigating (partial scores allowed) and print the decision."""
    with handled(json):
        result = _assess(
            "check", session, ai_id, store, vectors, vectors_file, json, provider=provider
        )
    emit(result, json, lambda: _render_assessment(result))


def postflight(
    vectors: str | None = None,
    vectors_file: Path | None = None,
    provider: str | None = None,
    session: str | None = None,
    ai_id: str | None = None,
    store: Path | None = None,
    json: bool = False,
) -> None:
    """Final reassessment: records it, prints the deltas and the calibration, closes the task."""
    with handled(json):
        result = _assess(
            "postflight", session, ai_id, store, vectors, vectors_file, json, provider=provider
        )
    emit(result, json, lambda: _render_assessment(result))
    if not isinstance(result, dict):  # a finished task: index it for recall, off this process
        from noetic.recall.background import spawn_indexer

        spawn_indexer(open_tracker(store).store)


def investigate(
    note: str,
    tool: str | None = None,
    vector: str | None = None,
    session: str | None = None,
    ai_id: str | None = None,
    store: Path | None = None,
    json: bool = False,
) -> None:
    """Record one investigation step of the open task."""
    from noetic.vectors import check_score

    with handled(json):
        if vector is not None:
            check_score(vector, 0.0)
        tracker = open_tracker(store)
        sid = current_session(tracker, session, ai_id)
        record = tracker.investigate(sid, note, tool=tool, target_vector=vector)
    emit(
        record,
        json,
        lambda: stdout().print(
            f"investigation round {record.round} recorded"
            + (f" (tool {esc(record.tool)})" if record.tool else "")
            + f" in session {record.session_id} · next: noetic check"
        ),
    )


def state(
    session: str | None = None,
    ai_id: str | None = None,
    store: Path | None = None,
    json: bool = False,
) -> None:
    """Where the agent's current session stands and what to do next."""
    from noetic.cli.render import decision_line, vector_table

    with handled(json):
        tracker = open_tracker(store)
        result = tracker.state(current_session(tracker, session, ai_id))

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
