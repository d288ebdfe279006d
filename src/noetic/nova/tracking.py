"""A Nova run tracked like any task (seed 002, "Integration with Empirica").

The run's task opens with a PREFLIGHT after the DCE has unpacked the question (the panel's
state then), records a CHECK at every pass through the gate, and closes with a POSTFLIGHT at the
final recommendation, so ``noetic outcome`` on the decision feeds calibration like any other
task; the tracker writes a checkpoint with each assessment, the last one at the end. Each
assessment is written by the DCE's model from the canonical assessment prompt, with what the
panel has said so far as its findings, and is kept as a turn of the run (node ``preflight``,
``check`` or ``postflight``), so a resumed run does not ask for it again.

A run without a session, or whose session already has an open task, is not tracked; the run
says so in its notes. An assessment the model cannot write after one repair round is left out
(and said); a PREFLIGHT left out means the run is not tracked.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from noetic.assessment import Assessment, Phase
from noetic.assessment_prompt import build_assessment_prompt
from noetic.errors import ParseError, WorkflowError
from noetic.events import Timer
from noetic.llm.assessment_reply import SYSTEM, parse_assessment_reply
from noetic.llm.base import Completion, Provider, Request
from noetic.llm.structured import complete_parsed
from noetic.nova.prompts import header
from noetic.nova.turns import Node, Turn
from noetic.profiles import check_postflight_mode
from noetic.runtime.context import RunContext

Bounded = Callable[[Awaitable[Any]], Awaitable[Any]]


class TaskTrack:
    """The run's task: opened, checked and closed through the run context's tracker."""

    def __init__(self, ctx: RunContext, run: Any, enabled: bool) -> None:
        self.ctx = ctx
        self.run = run
        self.on = enabled and ctx.session_id is not None
        # the last CHECK's calibrated value (a recalibration map in force), for the CHECK gate
        self.calibrated: Any = None
        if enabled and ctx.session_id is None:
            run.notes.append("not tracked as a task: the run has no session")

    async def assess(
        self,
        phase: Phase,
        turn: Turn,
        findings: str,
        provider: Provider,
        bounded: Bounded,
        replayed: Turn | None,
    ) -> Turn | None:
        """Record the run's ``phase`` assessment; ``turn`` carries its seq, round and persona.
        Returns the assessment as a turn (to persist), or None when nothing was recorded."""
        if not self.on:
            return None
        if replayed is not None:
            self._replay(phase, replayed)
            return None
        session_id = self.ctx.session_id or ""
        if phase == Phase.PREFLIGHT:
            open_task = self.ctx.store.open_cascade_of(session_id)
            if open_task is not None:
                self.on = False
                self.run.notes.append(
                    f"not tracked as a task: session {session_id} has task {open_task.id} open"
                )
                return None
        task, profile, previous = self.ctx.tracker.context_for(session_id, phase, self.run.question)
        review = profile.postflight_review if phase == Phase.POSTFLIGHT else None
        prompt = (
            f"{header(turn.seq, turn.node, turn.round, turn.persona)}\n\n"
            f"What the panel has said so far:\n{findings.strip()}\n\n"
            + build_assessment_prompt(
                task, phase, profile, previous, review, self.ctx.tracker.record_for(session_id)
            )
        )
        replies: list[Completion] = []
        timer = Timer()
        try:
            assessment: Assessment = await bounded(
                complete_parsed(
                    provider,
                    Request.of(prompt, system=SYSTEM, max_tokens=3000),
                    lambda text: _meeting(parse_assessment_reply(text, phase), profile),
                    replies=replies,
                )
            )
        except ParseError as exc:
            self.run.notes.append(f"the {phase.value.upper()} assessment was left out: {exc}")
            if phase == Phase.PREFLIGHT:
                self.on = False
            return None
        finally:
            self.run.model_calls += len(replies)
        if review is not None:
            assessment = assessment.model_copy(update={"review": review})
        block = self._record(phase, session_id, assessment)
        return turn.model_copy(
            update={
                "status": "ok",
                "content": assessment.note,
                "know": assessment.vectors.get("know"),
                "uncertainty": assessment.vectors.get("uncertainty"),
                "block": block,
                "model": f"{replies[-1].provider}:{replies[-1].model}",
                "ms": timer.ms,
                "calls": len(replies),
                "tokens_in": sum(r.usage.input_tokens for r in replies),
                "tokens_out": sum(r.usage.output_tokens for r in replies),
            }
        )

    def _record(self, phase: Phase, session_id: str, assessment: Assessment) -> dict[str, Any]:
        tracker = self.ctx.tracker
        if phase == Phase.PREFLIGHT:
            try:
                recorded = tracker.preflight(session_id, self.run.question, assessment)
            except WorkflowError as exc:  # a task opened meanwhile by another writer
                self.on = False
                self.run.notes.append(f"not tracked as a task: {exc.message}")
                return {"vectors": assessment.vectors}
            self.run.cascade_id = recorded.cascade.id
            self.ctx.start_task(recorded.cascade.id)
        elif phase == Phase.CHECK:
            recorded = tracker.check(session_id, assessment)
            self.calibrated = recorded.decision.calibrated
        else:
            done = tracker.postflight(
                session_id,
                assessment,
                extra={
                    "nova": {
                        "run": self.run.id,
                        "recommendation": self.run.recommendation,
                        "confidence": self.run.confidence,
                    }
                },
            )
            self.run.calibration = done.calibration.classification.value
            recorded = done
        return {
            "cascade_id": recorded.cascade.id,
            "vectors": assessment.vectors,
            "action": recorded.decision.action.value,
            "confidence": recorded.decision.confidence,
            "calibration": self.run.calibration if phase == Phase.POSTFLIGHT else None,
        }

    def _replay(self, phase: Phase, turn: Turn) -> None:
        self.run.assessments.append(turn)
        if phase == Phase.PREFLIGHT and turn.block.get("cascade_id"):
            self.run.cascade_id = turn.block["cascade_id"]
            self.ctx.start_task(self.run.cascade_id)
        if phase == Phase.POSTFLIGHT:
            self.run.calibration = turn.block.get("calibration")


def phase_node(phase: Phase) -> Node:
    return {Phase.PREFLIGHT: Node.PREFLIGHT, Phase.CHECK: Node.CHECK}.get(phase, Node.POSTFLIGHT)


def _meeting(assessment: Assessment, profile: Any) -> Assessment:
    """The assessment, if it meets what the profile asks of a POSTFLIGHT (evidence for every
    vector under ``evidence_required``); otherwise the error goes back to the model."""
    if assessment.phase == Phase.POSTFLIGHT:
        check_postflight_mode(assessment, profile)
    return assessment
