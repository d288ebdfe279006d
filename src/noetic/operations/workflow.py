"""The agent-driven workflow: bootstrap, the three assessments, an investigation step, the state.

Every function here is sync and quick (one store transaction or a few), so a command runs it
directly, the MCP server on a worker thread, and an async web server through
``asyncio.to_thread``. Only an assessment written by a model (``provider=``) calls one, and
then runs its own event loop: from async code, call it on a thread.

The writes take a ``request_id`` and are applied once (:mod:`noetic.operations.once`).
"""

from __future__ import annotations

from collections.abc import Callable

from noetic.operations.once import Replayed, earlier, once
from noetic.plain import Plain

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from noetic.assessment import Assessment, Phase, Review
    from noetic.profiles import Profile
    from noetic.recall.selection import RecallResult
    from noetic.runtime.tracker import EpistemicState, Postflight, Recorded, Tracker
    from noetic.store.records import InvestigationRecord, SessionRecord

    R = TypeVar("R")


class Bootstrapped(Plain):
    """A new session, its profile, and what recall brought for the upcoming task (if asked);
    recall's types load only when recall is asked for."""

    session: SessionRecord
    profile: Profile
    recall: RecallResult | None = None
    record: str | None = None  # the agent's record against its outcomes; None before any

    @classmethod
    def loaded(cls, data: Any) -> Bootstrapped:
        """A bootstrap's result from the JSON kept for its request."""
        from noetic.profiles import Profile
        from noetic.store.records import SessionRecord

        recalled = None
        if data.get("recall") is not None:
            from noetic.recall.selection import RecallResult

            recalled = RecallResult.model_validate(data["recall"])
        return cls(
            session=SessionRecord.model_validate(data["session"]),
            profile=Profile.model_validate(data["profile"]),
            recall=recalled,
            record=data.get("record"),
        )


class AssessmentPrompt(Plain):
    """Nothing recorded: the prompt the agent answers with its scores."""

    session_id: str
    phase: str
    prompt: str
    recorded: bool = False


def bootstrap(
    tracker: Tracker,
    *,
    ai_id: str = "agent",
    profile: str | None = None,
    ai_model: str | None = None,
    domain: str | None = None,
    project: str | None = None,
    recall: str | None = None,
    scores: Any = None,
    own: bool = False,
    session_type: str | None = None,
    remember: bool = True,
    request_id: str | None = None,
) -> Bootstrapped | Replayed[Bootstrapped]:
    """Open a session and choose its profile (by name, else by model, else by domain).

    ``recall``: also recall earlier tasks relevant to this upcoming task, as much as the need
    in ``scores`` (a fresh assessment, as JSON-like data) asks for, from every agent's tasks in
    the session's project (``own``: only ``ai_id``'s), the same scope rule as
    :func:`noetic.operations.recalling.recall`. ``session_type``: the seed's label for the
    session (``development``, ``review``…), kept with it. ``remember``: make the
    session ``ai_id``'s current session in the store (the command line's; the MCP server keeps
    one per client instead; a retry of a request applied before changes nothing). Sync."""
    from noetic.store.current import write_current_session

    asked = {"ai_id": ai_id, "profile": profile, "ai_model": ai_model, "domain": domain,
             "project": project, "recall": recall, "scores": scores if recall else None,
             "own": own, "session_type": session_type}  # fmt: skip
    recalled = None
    if recall:
        from noetic.assessment import Assessment
        from noetic.recall.selection import recall_default

        replay = earlier(tracker.store, request_id, "bootstrap", asked, Bootstrapped.loaded)
        if replay is not None:  # before recall: a retry does not search again
            return replay
        current = Assessment.from_input("preflight", scores).vectors if scores else None
        recalled = recall_default(
            tracker.store, recall, current=current, ai_id=ai_id if own else None, project=project
        )

    def work() -> Bootstrapped:
        session, chosen = tracker.bootstrap(
            ai_id=ai_id, profile=profile, ai_model=ai_model, domain=domain, project=project,
            session_type=session_type,
        )  # fmt: skip
        return Bootstrapped(
            session=session, profile=chosen, recall=recalled, record=tracker.record_for(session.id)
        )

    done = once(tracker.store, request_id, "bootstrap", asked, Bootstrapped.loaded, work)
    if isinstance(done, Replayed):
        return done
    session = done.session
    if remember:
        try:
            write_current_session(tracker.store.home, session.id, ai_id)
        except OSError as exc:
            from noetic.errors import StoredIncomplete

            raise StoredIncomplete(
                f"session {session.id} was stored, but it could not be made {ai_id}'s current "
                f"session ({exc.strerror or exc}): commands without --session still use the "
                "previous one",
                fix=f"free some space, then pass --session {session.id} (or export "
                f"NOETIC_SESSION={session.id}); bootstrapping again would open another session",
            ) from exc
    return done


def prompt(
    tracker: Tracker,
    session_id: str,
    phase: Phase | str,
    task: str | None = None,
    review: str | None = None,
) -> str:
    """The self-assessment prompt for ``phase`` in the session (records nothing); ``review``
    ``"adversarial"`` makes a POSTFLIGHT's an adversarial review's. Sync."""
    from noetic.assessment import Phase

    return tracker.prompt(session_id, Phase(phase), task, review)


def preflight(
    tracker: Tracker,
    session_id: str,
    task: str,
    scores: Assessment | Any = None,
    *,
    provider: str | None = None,
    abandon_open: bool = False,
    p_success: float | None = None,
    request_id: str | None = None,
) -> Recorded | AssessmentPrompt | Replayed[Recorded]:
    """Record the PREFLIGHT of ``task`` (opening it): the given scores, or the model's when
    ``provider`` is named (``"default"``: the configured one); with neither, the prompt (and
    no request recorded). ``abandon_open`` closes a task still open in the session as
    abandoned first. ``p_success`` adds the agent's probability of success to the scores
    given. Sync."""
    from noetic.runtime.tracker import Recorded

    return _recorded(
        tracker, "preflight", session_id, scores, provider, p_success, None, request_id,
        Recorded.model_validate,
        lambda given: tracker.preflight(session_id, task, given, abandon_open=abandon_open),
        task=task, abandon_open=abandon_open,
    )  # fmt: skip


def check(
    tracker: Tracker,
    session_id: str,
    scores: Assessment | Any = None,
    *,
    provider: str | None = None,
    p_success: float | None = None,
    request_id: str | None = None,
) -> Recorded | AssessmentPrompt | Replayed[Recorded]:
    """Record a CHECK of the open task (the vectors not given carry over) and decide. Sync."""
    from noetic.runtime.tracker import Recorded

    return _recorded(
        tracker, "check", session_id, scores, provider, p_success, None, request_id,
        Recorded.model_validate, lambda given: tracker.check(session_id, given),
    )  # fmt: skip


def postflight(
    tracker: Tracker,
    session_id: str,
    scores: Assessment | Any = None,
    *,
    provider: str | None = None,
    p_success: float | None = None,
    review: str | None = None,
    request_id: str | None = None,
) -> Postflight | AssessmentPrompt | Replayed[Postflight]:
    """Record the POSTFLIGHT, closing the open task, with its deltas and calibration. Sync.

    ``review="adversarial"`` asks for an adversarial review: the model named by ``provider``
    looks for what is wrong with the work before it reassesses; without a provider the prompt
    is the adversarial one, and scores given are recorded as an adversarial review."""
    from noetic.runtime.tracker import Postflight

    return _recorded(
        tracker, "postflight", session_id, scores, provider, p_success, review, request_id,
        Postflight.model_validate, lambda given: tracker.postflight(session_id, given),
    )  # fmt: skip


def investigate(
    tracker: Tracker,
    session_id: str,
    note: str,
    *,
    tool: str | None = None,
    vector: str | None = None,
    request_id: str | None = None,
) -> InvestigationRecord | Replayed[InvestigationRecord]:
    """Record one investigation step of the open task (``vector``: the one it targets). Sync."""
    from noetic.store.records import InvestigationRecord
    from noetic.vectors import check_score

    if vector is not None:
        check_score(vector, 0.0)
    asked = {"session": session_id, "note": note, "tool": tool, "vector": vector}
    return once(
        tracker.store, request_id, "investigate", asked, InvestigationRecord.model_validate,
        lambda: tracker.investigate(session_id, note, tool=tool, target_vector=vector),
    )  # fmt: skip


def state(tracker: Tracker, session_id: str) -> EpistemicState:
    """Where the session stands: the open task, the latest assessment, what to do next. Sync."""
    return tracker.state(session_id)


def default_provider_configured(tracker: Tracker) -> bool:
    """Whether a model is configured ($NOETIC_PROVIDER or the store's config.toml). Sync."""
    from noetic.errors import UsageError
    from noetic.llm.registry import resolve_provider_spec

    try:
        resolve_provider_spec(None, tracker.store.home)
    except UsageError:
        return False
    return True


def _recorded(
    tracker: Tracker,
    phase: str,
    session_id: str,
    scores: Any,
    provider: str | None,
    p_success: float | None,
    review: str | None,
    request_id: str | None,
    load: Callable[[Any], R],
    write: Callable[[Assessment], R],
    *,
    task: str | None = None,
    abandon_open: bool = False,
) -> R | AssessmentPrompt | Replayed[R]:
    """A phase's assessment written once: the prompt when there is nothing to record; else
    the request (the scores as the assessment they make, or the model named) looked up
    before the model is asked, then the assessment written with it."""
    asked: dict[str, Any] = {"session": session_id, "task": task, "abandon_open": abandon_open}
    if provider and scores is None and p_success is None:  # the model answers, once
        asked.update(provider=provider, review=review)
        replay = earlier(tracker.store, request_id, phase, asked, load)
        if replay is not None:
            return replay
    given = _assessment(
        tracker, phase, session_id, scores, provider, task, p_success=p_success, review=review
    )
    if isinstance(given, AssessmentPrompt):
        return given
    if not provider:
        asked["assessment"] = given.model_dump(mode="json")
    return once(tracker.store, request_id, phase, asked, load, lambda: write(given))


def _assessment(
    tracker: Tracker,
    phase: str,
    session_id: str,
    scores: Any,
    provider: str | None,
    task: str | None = None,
    *,
    p_success: float | None = None,
    review: str | None = None,
) -> Assessment | AssessmentPrompt:
    """The assessment to record: the scores given, or the model's when a provider is named;
    with neither, the prompt to answer. ``p_success`` joins the scores given; ``review`` is
    the POSTFLIGHT's review kind."""
    from noetic.assessment import Assessment, Phase, Review, check_probability
    from noetic.errors import InvalidValueError

    kind = _review(review)
    if provider and scores is not None:
        raise InvalidValueError(
            "give scores or --provider, not both", field="provider", value=provider
        )
    if p_success is not None and (provider or scores is None):
        raise InvalidValueError(
            "--p-success goes with the scores you give"
            + (": the model states its own" if provider else ", and none were given"),
            field="p_success",
            value=p_success,
            fix="give --vectors (or scores on stdin) with it",
        )
    if provider:
        return _model_assessment(tracker, session_id, Phase(phase), provider, task, kind)
    if scores is None:
        return AssessmentPrompt(
            session_id=session_id,
            phase=phase,
            prompt=tracker.prompt(session_id, Phase(phase), task, kind),
        )
    assessment = scores if isinstance(scores, Assessment) else Assessment.from_input(phase, scores)
    update: dict[str, Any] = {}
    if p_success is not None:
        stated = check_probability(p_success)
        if assessment.p_success is not None and assessment.p_success != stated:
            raise InvalidValueError(
                f"p_success given twice: {assessment.p_success} in the scores and {stated} "
                "as an option",
                field="p_success",
                value=[assessment.p_success, stated],
            )
        update["p_success"] = stated
    if kind is not None and assessment.review != kind:
        if assessment.review is not None:
            raise InvalidValueError(
                f"the scores say review {assessment.review.value!r}, the option {kind.value!r}",
                field="review",
                value=[assessment.review.value, kind.value],
            )
        update["review"] = Review(kind)
    return assessment.model_copy(update=update) if update else assessment


def _review(review: str | None) -> Review | None:
    """The review kind named, or a clear error."""
    from noetic.assessment import Review
    from noetic.errors import InvalidValueError

    if review is None:
        return None
    try:
        return Review(review.strip().lower())
    except ValueError:
        raise InvalidValueError(
            f"unknown review kind {review!r}",
            field="review",
            value=review,
            fix="use standard or adversarial",
        ) from None


def _model_assessment(
    tracker: Tracker,
    session_id: str,
    phase: Phase,
    spec: str,
    task: str | None,
    review: Review | None = None,
) -> Assessment:
    """Ask the named model for its own assessment, recording every call in ``llm_calls``."""
    import asyncio

    from noetic.runtime.context import build_context
    from noetic.runtime.self_assessment import model_assessment

    cascade = tracker.store.open_cascade_of(session_id)
    ctx = build_context(
        None,
        tracker=tracker,
        provider=None if spec == "default" else spec,  # default: the configured one
        session_id=session_id,
        task_id=cascade.id if cascade else None,
        needs_model=True,
    )
    return asyncio.run(model_assessment(ctx, phase, task, review=review))
