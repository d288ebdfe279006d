"""The guardian: turns a credible bias into one profile correction, sized by the evidence.

When the bias in ``overall`` is credible, the guardian proposes one change: scale the profile's
``confidence_weight`` so that stated confidence would meet observed success. The evidence alone
supports ``weight · observed / predicted``; the proposal follows the *posterior* instead,

    new = weight · (predicted − μ) / predicted

with ``μ`` the posterior mean bias (:mod:`.beliefs`), which is shrunk toward 0 (no change) when
there are few outcomes and reaches ``predicted − observed`` as they accumulate. The posterior's
95% interval for ``μ`` gives the proposal's interval. [0.5, 1.5] is a safety limit: a proposal
beyond it is cut to it and says so (``clamped``), with the value the evidence asked for. One
knob, so two corrections never compound. Nothing changes unless the proposal is applied.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

from noetic.calibration.beliefs import Belief, update_belief
from noetic.calibration.outcomes import (
    Adjustment,
    Filters,
    add_adjustment,
    adjustments,
    effective_profile,
    outcome_points,
    undo_adjustment,
)
from noetic.profiles import ProfileRegistry
from noetic.store.base import BaseStore as Store

WEIGHT_BOUNDS: Final = (0.5, 1.5)


class Proposal(BaseModel):
    model_config = ConfigDict(frozen=True)

    profile: str
    field: str
    old: float
    new: float
    low: float
    high: float
    supported: float
    clamped: bool
    unclamped: float
    reason: str


def guardian_proposal(
    profile: str,
    current_weight: float,
    belief: Belief,
    mean_predicted: float,
    mean_observed: float,
) -> Proposal | None:
    """A ``confidence_weight`` correction when the overall bias is credible, else ``None``;
    sized by the posterior mean bias, with its interval (module docstring)."""
    if not belief.credible or mean_predicted <= 0:
        return None
    lo, hi = WEIGHT_BOUNDS

    def weight(bias: float) -> float:
        return current_weight * (mean_predicted - bias) / mean_predicted

    unclamped = round(weight(belief.mean), 3)
    new = round(min(hi, max(lo, unclamped)), 3)
    if new == round(current_weight, 3):
        return None
    clamped = new != unclamped
    low, high = (round(min(hi, max(lo, weight(b))), 3) for b in (belief.high, belief.low))
    supported = round(current_weight * mean_observed / mean_predicted, 3)
    limit = (
        f"; cut to the safety limit {new} (the evidence asks for {unclamped})" if clamped else ""
    )
    return Proposal(
        profile=profile,
        field="tuning.confidence_weight",
        old=current_weight,
        new=new,
        low=low,
        high=high,
        supported=supported,
        clamped=clamped,
        unclamped=unclamped,
        reason=(
            f"{belief.direction}: mean bias {belief.mean:+.3f} (95% interval {belief.low:+.3f} "
            f"to {belief.high:+.3f}, {belief.evidence} outcomes); stated confidence "
            f"{mean_predicted:.3f} vs observed {mean_observed:.3f}; weight {new} (95% interval "
            f"{low} to {high}; the outcomes alone say {supported}){limit}"
        ),
    )


class GuardianReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    profile: str
    tasks_considered: int
    belief: Belief
    proposal: Proposal | None
    applied: Adjustment | None
    note: str


def run_guardian(
    store: Store,
    registry: ProfileRegistry,
    profile_name: str,
    *,
    ai_id: str | None = None,
    apply: bool = False,
) -> GuardianReport:
    """Propose a profile correction from credible bias, and make it only with ``apply`` or when
    the profile says ``guardian: {auto_apply: true}``.

    Only outcomes recorded after the profile's last applied adjustment count, so a correction
    is judged on the confidences it produced, not on the ones it corrected."""
    profile = effective_profile(store, registry, profile_name)
    apply = apply or profile.guardian.auto_apply
    applied_before = [a for a in adjustments(store, profile=profile_name) if a.undone_at is None]
    after = applied_before[-1].at if applied_before else None
    points = [
        p
        for p in outcome_points(store, Filters(ai_id=ai_id, profile=profile_name), after=after)
        if p.predicted_preflight is not None
    ]
    biases = [p.predicted_preflight - p.observed for p in points]  # type: ignore[operator]
    belief = update_belief("overall", biases)
    proposal = None
    if points:
        proposal = guardian_proposal(
            profile_name,
            profile.tuning.confidence_weight,
            belief,
            sum(p.predicted_preflight for p in points) / len(points),  # type: ignore[misc]
            sum(p.observed for p in points) / len(points),
        )
    applied = None
    if proposal is not None and apply:
        applied = add_adjustment(
            store,
            profile=profile_name,
            field=proposal.field,
            old=proposal.old,
            new=proposal.new,
            reason=proposal.reason,
            evidence={"belief": belief.model_dump(), "tasks": [p.cascade_id for p in points]},
        )
    if proposal is None:
        note = (
            "no credible bias: nothing to change"
            if points
            else _no_outcomes(store, profile_name, ai_id, after)
        )
    elif applied is None:
        note = "proposal only: run with --apply to change the profile"
    else:
        note = f"applied as adjustment {applied.id}; undo with --undo {applied.id}"
    return GuardianReport(
        profile=profile_name,
        tasks_considered=len(points),
        belief=belief,
        proposal=proposal,
        applied=applied,
        note=note,
    )


def _no_outcomes(store: Store, profile: str, ai_id: str | None, after: str | None) -> str:
    """Why nothing can be judged: no outcomes at all, or none since the last correction."""
    if after is None:
        return "no outcomes yet"
    before = sum(
        p.predicted_preflight is not None
        for p in outcome_points(store, Filters(ai_id=ai_id, profile=profile))
    )
    return f"no outcomes since the last correction ({before} before it)"


def undo(store: Store, adjustment_id: int) -> Adjustment:
    return undo_adjustment(store, adjustment_id)
