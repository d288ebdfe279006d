"""Assessments a model writes about itself, for the agent-driven workflow.

The CLI (``noetic preflight --provider P``) and any other interface ask the same function, so
the prompt, the previous assessment carried into CHECK and POSTFLIGHT, and the recording of
every model call cannot drift apart.
"""

from __future__ import annotations

from noetic.assessment import Assessment, Phase, Review
from noetic.errors import UsageError
from noetic.llm.assessment_reply import assess_with_model
from noetic.runtime.context import RunContext


async def model_assessment(
    ctx: RunContext,
    phase: Phase,
    task: str | None = None,
    *,
    review: Review | str | None = None,
) -> Assessment:
    """The context's model assesses itself for ``phase`` of the session's task (or ``task``);
    at POSTFLIGHT ``review`` may ask for an adversarial review first."""
    if ctx.session_id is None:
        raise UsageError("a model-written assessment needs a session", fix="pass --session ID")
    the_task, profile, previous = ctx.tracker.context_for(ctx.session_id, phase, task)
    record = ctx.tracker.record_for(ctx.session_id)
    return await assess_with_model(
        ctx.model, the_task, phase, profile, previous, review=review, record=record
    )
