"""The agent-driven CASCADE: the agent assesses itself, Noetic records and decides.

A *session* is one agent's working period; a *cascade* is one tracked task inside it, opened by
PREFLIGHT and closed by POSTFLIGHT. Between them the agent may investigate and CHECK as often as
it likes. Every assessment is recorded in SQLite, the session's JSON file and a reflex log in
one call, and emitted as an event.

Order is enforced: CHECK and POSTFLIGHT need an open cascade (a PREFLIGHT first); a second
POSTFLIGHT finds the cascade closed; a PREFLIGHT while a cascade is open is refused unless the
open one is explicitly abandoned.

The profile's round limit (``investigation.max_rounds``, ``docs/vectors.md``) holds here, so it
holds for the CLI, the MCP tools, the Python API and ``cascade run`` alike.
"""

from __future__ import annotations

import _thread
import functools
from collections.abc import Callable
from pathlib import Path

from noetic.assessment import Action, Assessment, Decision, Phase, Review, decide
from noetic.calibration.basic import BasicCalibration, basic_calibration
from noetic.calibration.outcomes import active_overrides, effective_profile
from noetic.errors import InvalidValueError, WorkflowError
from noetic.events import (
    AssessmentRecorded,
    DecisionMade,
    EventBus,
    EventKind,
    InvestigationLogged,
    RunFinished,
    SessionStarted,
)
from noetic.plain import Plain
from noetic.profiles import (
    Profile,
    ProfileRegistry,
    check_postflight_mode,
    with_overrides,
)
from noetic.runtime import telemetry
from noetic.store.base import BaseStore as Store
from noetic.store.records import (
    AssessmentRecord,
    CascadeRecord,
    InvestigationRecord,
    SessionRecord,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from noetic.calibration.recalibrating import Settings
    from noetic.store.checkpoints import Appending

    M = TypeVar("M", bound=Callable[..., Any])


class Recorded(Plain):
    """An assessment as recorded, with the decision Noetic derived."""

    session_id: str
    cascade: CascadeRecord
    assessment: AssessmentRecord
    decision: Decision


class Postflight(Recorded):
    calibration: BasicCalibration


class EpistemicState(Plain):
    """Where a session stands: its open cascade and latest assessment, if any."""

    session: SessionRecord
    profile: str
    open_cascade: CascadeRecord | None
    latest: AssessmentRecord | None
    next_step: str


def _one_write(method: M) -> M:
    """The method's writes are one (:meth:`~noetic.store.base.BaseStore.unit`): an assessment,
    its checkpoint and its events are stored together or not at all, so a failure (a full
    disk) after the first of them never leaves a record the command reports as not stored."""

    @functools.wraps(method)
    def wrapper(self: Tracker, *args: Any, **kwargs: Any) -> Any:
        me = _thread.get_ident()
        if me in self._appending:  # inside another one: its write, its checkpoints
            return method(self, *args, **kwargs)
        # a checkpoint's git runs while the rest of the write does, and is waited for before
        # the write ends: where git fails, the checkpoint goes to SQLite in the same write
        appending = self._appending[me] = []
        try:
            with self.store.unit():
                try:
                    result = method(self, *args, **kwargs)
                except BaseException:
                    for checkpoint in appending:
                        checkpoint.abandon()
                    raise
                for checkpoint in appending:
                    checkpoint.finish()
                return result
        finally:
            del self._appending[me]

    return wrapper  # type: ignore[return-value]


class Tracker:
    """Records the agent-driven workflow. Collaborators are passed in; nothing is global."""

    def __init__(
        self,
        store: Store,
        registry: ProfileRegistry,
        bus: EventBus | None = None,
        *,
        checkpoints: bool = True,
    ) -> None:
        self.store = store
        self.registry = registry
        self.bus = bus or EventBus()
        self.bus.subscribe(store.append_event)
        telemetry.maybe_subscribe(self.bus)  # OpenTelemetry, only when OTEL_* says so
        self.checkpoints = checkpoints
        # [calibration] and the release gate: read from the store's config.toml per decision
        # unless given (noetic.calibration.recalibrating)
        self.settings: Settings | None = None
        self._repo: Path | bool | None = False  # found on first use: it spawns git
        # the checkpoints started by each thread's write in progress (see _one_write)
        self._appending: dict[int, list[Appending]] = {}

    # sessions -----------------------------------------------------------------------------

    @_one_write
    def bootstrap(
        self,
        *,
        ai_id: str = "agent",
        profile: str | None = None,
        ai_model: str | None = None,
        domain: str | None = None,
        project: str | None = None,
        session_type: str | None = None,
    ) -> tuple[SessionRecord, Profile]:
        if not ai_id.strip():
            raise InvalidValueError("ai_id must not be empty", field="ai_id", value=ai_id)
        selected = self.registry.select(profile, ai_model=ai_model, domain=domain)
        chosen = with_overrides(selected, active_overrides(self.store, selected.name))
        session = self.store.create_session(
            ai_id=ai_id, profile=chosen.name, ai_model=ai_model, domain=domain, project=project,
            session_type=session_type,
        )  # fmt: skip
        self.bus.emit(
            EventKind.SESSION_STARTED,
            session_id=session.id,
            data=SessionStarted(ai_id=ai_id, profile=chosen.name, ai_model=ai_model, domain=domain),
        )
        return session, chosen

    def profile_of(self, session: SessionRecord) -> Profile:
        """The session's profile with the guardian's active adjustments applied."""
        return effective_profile(self.store, self.registry, session.profile)

    def state(self, session_id: str) -> EpistemicState:
        session = self.store.get_session(session_id)
        cascade = self.store.open_cascade_of(session.id)
        history = self.store.assessments(session_id=session.id)
        latest = history[-1] if history else None
        if cascade is None:
            step = 'start a task: `noetic preflight "task"`'
        elif latest is None or latest.cascade_id != cascade.id:
            step = "record the PREFLIGHT for the open task"
        elif latest.decision.action.value == "PROCEED":
            step = "act on the task, then `noetic postflight`"
        else:
            step = f"{latest.decision.action.value}: investigate, then `noetic check`"
        return EpistemicState(
            session=session,
            profile=session.profile,
            open_cascade=cascade,
            latest=latest,
            next_step=step,
        )

    def context_for(
        self, session_id: str, phase: Phase, task: str | None = None
    ) -> tuple[str, Profile, Assessment | None]:
        """What an assessment at ``phase`` is about: the task, the session's profile and the
        previous assessment of the open task (none at PREFLIGHT, which starts a task)."""
        session = self.store.get_session(session_id)
        profile = self.profile_of(session)
        if Phase(phase) == Phase.PREFLIGHT:
            if not (task or "").strip():
                raise InvalidValueError("a PREFLIGHT needs the task", field="task", value=task)
            return task or "", profile, None
        cascade = self._open_cascade(session, Phase(phase).value.upper())
        history = self.store.assessments(cascade_id=cascade.id)
        return cascade.task, profile, history[-1].assessment if history else None

    def prompt(
        self,
        session_id: str,
        phase: Phase,
        task: str | None = None,
        review: Review | str | None = None,
    ) -> str:
        """The canonical assessment prompt for the session's next assessment at ``phase``
        (an adversarial review's at POSTFLIGHT with ``review``)."""
        from noetic.assessment_prompt import build_assessment_prompt

        the_task, profile, previous = self.context_for(session_id, phase, task)
        return build_assessment_prompt(
            the_task, Phase(phase), profile, previous, review, self.record_for(session_id)
        )

    def record_for(self, session_id: str) -> str | None:
        """The session's agent's record against its outcomes, in one line for its next
        statement (:mod:`noetic.calibration.record`); None before it has outcomes."""
        from noetic.calibration.record import record_line

        return record_line(self.store, self.store.get_session(session_id).ai_id)

    # phases -------------------------------------------------------------------------------

    @_one_write
    def preflight(
        self, session_id: str, task: str, assessment: Assessment, *, abandon_open: bool = False
    ) -> Recorded:
        _expect_phase(assessment, Phase.PREFLIGHT)
        if not task.strip():
            raise InvalidValueError("the task description is empty", field="task", value=task)
        session = self.store.get_session(session_id)
        profile = self.profile_of(session)
        open_cascade = self.store.open_cascade_of(session.id)
        if open_cascade is not None:
            if not abandon_open:
                raise WorkflowError(
                    f"task {open_cascade.id} ({open_cascade.task!r}) is still open",
                    fix="finish it with `noetic postflight`, or pass --abandon-open",
                )
            self.store.finish_cascade(open_cascade.id, "abandoned", open_cascade.result)
        cascade = self.store.open_cascade(session.id, task, profile=profile.name)
        return self._record(session, cascade, profile, assessment, [])  # a new task: none yet

    @_one_write
    def check(self, session_id: str, assessment: Assessment) -> Recorded:
        _expect_phase(assessment, Phase.CHECK)
        session = self.store.get_session(session_id)
        cascade = self._open_cascade(session, "CHECK")
        earlier = self.store.assessments(cascade_id=cascade.id)
        completed = assessment.carry_forward(earlier[-1].assessment)
        return self._record(session, cascade, self.profile_of(session), completed, earlier)

    @_one_write
    def investigate(
        self,
        session_id: str,
        note: str,
        *,
        tool: str | None = None,
        target_vector: str | None = None,
        success: bool | None = None,
    ) -> InvestigationRecord:
        if not note.strip():
            raise InvalidValueError("the investigation note is empty", field="note", value=note)
        session = self.store.get_session(session_id)
        cascade = self._open_cascade(session, "an investigation")
        rounds = 1 + _checks(self.store.assessments(cascade_id=cascade.id))
        profile = self.profile_of(session)
        limit = profile.investigation.max_rounds
        if limit is not None and rounds > limit:
            raise WorkflowError(
                f"the round limit is reached: profile {profile.name!r} allows {limit} "
                f"investigation round{'s' if limit != 1 else ''} (max_rounds) and task "
                f"{cascade.id} has used them",
                fix="act on what you have, then `noetic postflight`; a profile with a higher "
                "max_rounds allows more rounds",
            )
        record = self.store.add_investigation(
            session.id,
            cascade_id=cascade.id,
            round=rounds,
            note=note,
            tool=tool,
            target_vector=target_vector,
            success=success,
        )
        self.bus.emit(
            EventKind.INVESTIGATION,
            session_id=session.id,
            cascade_id=cascade.id,
            data=InvestigationLogged(
                round=rounds, tool=tool, note=note, target_vector=target_vector
            ),
        )
        return record

    @_one_write
    def postflight(
        self, session_id: str, assessment: Assessment, *, extra: dict[str, Any] | None = None
    ) -> Postflight:
        _expect_phase(assessment, Phase.POSTFLIGHT)
        session = self.store.get_session(session_id)
        cascade = self._open_cascade(session, "POSTFLIGHT")
        profile = self.profile_of(session)
        check_postflight_mode(assessment, profile)
        earlier = self.store.assessments(cascade_id=cascade.id)
        pre = next(a.assessment for a in earlier if a.assessment.phase == Phase.PREFLIGHT)
        from noetic.store.summaries import RecallSummary, save_summary

        recorded = self._record(session, cascade, profile, assessment, earlier)
        calibration = basic_calibration(pre, assessment, profile.tuning)
        closed = self.store.finish_cascade(
            cascade.id,
            "completed",
            {**(extra or {}), "calibration": calibration.model_dump(mode="json")},
        )
        save_summary(
            self.store,
            RecallSummary(
                cascade_id=cascade.id,
                session_id=session.id,
                ai_id=session.ai_id,
                project=session.project,
                task=cascade.task,
                ended_at=closed.ended_at or closed.created_at,
                pre=pre.vectors,
                post=assessment.vectors,
                delta=calibration.delta,
                learning=calibration.learning_magnitude,
                calibration=calibration.classification.value,
                confidence_pre=calibration.confidence_pre,
                confidence_post=calibration.confidence_post,
                notes=assessment.note,
            ),
        )
        self.bus.emit(
            EventKind.RUN_FINISHED,
            session_id=session.id,
            cascade_id=cascade.id,
            data=RunFinished(
                status="completed", summary={"classification": calibration.classification.value}
            ),
        )
        return Postflight(
            session_id=session.id,
            cascade=closed,
            assessment=recorded.assessment,
            decision=recorded.decision,
            calibration=calibration,
        )

    @_one_write
    def end_task(self, session_id: str, status: str, result: dict[str, Any]) -> CascadeRecord:
        """Close the open task with a status other than a POSTFLIGHT (clarify, delegate, a
        Sentinel stop, a failure), keeping everything recorded so far."""
        session = self.store.get_session(session_id)
        cascade = self._open_cascade(session, f"ending a task as {status}")
        closed = self.store.finish_cascade(cascade.id, status, result)
        self.bus.emit(
            EventKind.RUN_FINISHED,
            session_id=cascade.session_id,
            cascade_id=cascade.id,
            data=RunFinished(status=status),
        )
        return closed

    @property
    def repo(self) -> Path | None:
        """The git repository holding the store, if any (checkpoints go to its notes)."""
        if self._repo is False:
            from noetic.store.checkpoints import git_root

            self._repo = git_root(self.store.home) if self.checkpoints else None
        return self._repo  # type: ignore[return-value]

    # internals ----------------------------------------------------------------------------

    def _open_cascade(self, session: SessionRecord, what: str) -> CascadeRecord:
        """The session's open cascade, or a :class:`WorkflowError` saying what ``what`` needs."""
        cascade = self.store.open_cascade_of(session.id)
        if cascade is not None:
            return cascade
        done = self.store.cascades(session.id)
        if done:
            raise WorkflowError(
                f"{what} needs an open task, but the last task in session {session.id} "
                f"({done[-1].task!r}) is already {done[-1].status}",
                fix='start a new task with `noetic preflight "task"`',
            )
        raise WorkflowError(
            f"{what} needs a PREFLIGHT first: session {session.id} has no task yet",
            fix='run `noetic preflight "task"` first',
        )

    def _record(
        self,
        session: SessionRecord,
        cascade: CascadeRecord,
        profile: Profile,
        assessment: Assessment,
        earlier: list[AssessmentRecord] | None = None,
    ) -> Recorded:
        """Decide on ``assessment`` and store both; ``earlier``: the task's assessments so far,
        when the caller has read them already."""
        decision = decide(
            assessment,
            profile.thresholds,
            profile.tuning,
            **self._calibration(session, profile, assessment),
        )
        if earlier is None:
            earlier = self.store.assessments(cascade_id=cascade.id)
        if assessment.phase == Phase.CHECK:
            decision = _at_round_limit(decision, 1 + _checks(earlier), profile)
        if self.checkpoints:
            from noetic.store.checkpoints import make_checkpoint, start_checkpoint

            # appended from the repository when it is known, else from the store's folder: git
            # finds the repository from it as `git rev-parse` would (a folder in none, or in one
            # without a commit, falls back to SQLite), so a write asks git once, not twice
            home = self.store.home
            folder = home if self._repo is False and home.is_dir() else self.repo
            appending = start_checkpoint(
                self.store,
                make_checkpoint(
                    session.id,
                    cascade.id,
                    assessment.phase.value,
                    assessment.vectors,
                    decision.action.value,
                    earlier[-1].assessment.vectors if earlier else None,
                    assessment.note,
                ),
                folder,
            )
            # waited for as the write ends (_one_write: every caller of _record is one)
            self._appending[_thread.get_ident()].append(appending)
        record = self.store.add_assessment(session.id, assessment, decision, cascade_id=cascade.id)
        self.bus.emit(
            EventKind.ASSESSMENT_RECORDED,
            session_id=session.id,
            cascade_id=cascade.id,
            # the payloads of values checked as they were built: not checked again
            data=AssessmentRecorded.trusted(
                phase=assessment.phase.value,
                seq=int(record.seq),
                confidence=float(decision.confidence),
                missing=list(assessment.missing),
                carried=list(assessment.carried),
                p_success=assessment.p_success,
                review=assessment.review.value if assessment.review else None,
            ),
        )
        self.bus.emit(
            EventKind.DECISION,
            session_id=session.id,
            cascade_id=cascade.id,
            data=DecisionMade.trusted(
                action=decision.action.value, rule=decision.rule, reason=decision.reason
            ),
        )
        return Recorded(
            session_id=session.id, cascade=cascade, assessment=record, decision=decision
        )

    def _calibration(
        self, session: SessionRecord, profile: Profile, assessment: Assessment
    ) -> dict[str, Any]:
        """What :func:`decide` needs to compare the calibrated value (and, at CHECK, the
        release gate's threshold): nothing when no map is in force or it is turned off."""
        from noetic.calibration.per_phase import stated_value
        from noetic.calibration.recalibrating import for_decision, read_settings
        from noetic.vectors import overall_confidence

        stated, basis = stated_value(
            assessment.p_success, overall_confidence(assessment.vectors, profile.tuning)
        )
        found = for_decision(
            self.store,
            session.ai_id,
            session.ai_model,
            stated,
            basis,
            settings=self.settings or read_settings(self.store.home),
            profile_decide_on=profile.calibration.decide_on,
            check=assessment.phase == Phase.CHECK,
        )
        return {
            "calibrated": found.calibrated,
            "release": found.release,
            "gate_note": found.gate_note,
            "stated": stated,
        }


def _checks(records: list[AssessmentRecord]) -> int:
    """Investigation rounds a task has closed: one per CHECK."""
    return sum(1 for a in records if a.assessment.phase == Phase.CHECK)


def _at_round_limit(decision: Decision, rounds: int, profile: Profile) -> Decision:
    """The decision of the CHECK closing round ``rounds``: past the profile's last round an
    INVESTIGATE becomes PROCEED on what the agent has, and says why."""
    limit = profile.investigation.max_rounds
    if decision.action != Action.INVESTIGATE or limit is None or rounds < limit:
        return decision
    return decision.model_copy(
        update={
            "action": Action.PROCEED,
            "rule": "max_rounds",
            "reason": f"{decision.reason}; but the round limit is reached ({rounds} of {limit} "
            f"rounds, profile {profile.name!r}'s max_rounds): the profile proceeds, so act on "
            "what you have, then postflight",
        }
    )


def _expect_phase(assessment: Assessment, phase: Phase) -> None:
    if assessment.phase != phase:
        raise InvalidValueError(
            f"expected a {phase.value} assessment, got {assessment.phase.value}",
            field="phase",
            value=assessment.phase.value,
        )
