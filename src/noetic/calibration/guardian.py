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

**Held-out proof.** A correction is proposed only if it would have helped on outcomes it was not
fitted on. The outcomes (oldest first) are split in time order: the correction is fitted on the
earlier :data:`FIT_SHARE` and scored on the later rest, where the Brier score of the stated
confidence is set beside the corrected one's. When the corrected Brier is not lower, nothing
is proposed and the report says why; below :data:`MIN_FIT` earlier and :data:`MIN_HELD_OUT`
later outcomes there is nothing to prove it on, and nothing is proposed either. The proposal is
the correction that was tested, the one fitted on the earlier part.

**What it judges.** The same statements as the per-phase report's ``preflight`` phase
(:func:`~.outcomes.preflight_points`): ``p_success`` where given, the vectors' confidence
otherwise (``stated``, ``stated_from``). ``confidence_weight`` scales the vectors' confidence
and nothing else, so the held-out proof scores a stated confidence at ``clamp(p · new / old)``
and a stated ``p_success`` as stated: a bias in ``p_success`` alone passes no proof, rather than
proposing a change that would leave it where it is (and, once applied, propose it again).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from noetic.calibration.beliefs import Belief, update_belief
from noetic.calibration.outcomes import (
    Adjustment,
    Filters,
    add_adjustment,
    adjustments,
    effective_profile,
    preflight_points,
    undo_adjustment,
)
from noetic.calibration.per_phase import Stated, stated_basis
from noetic.calibration.recalibration import FIT_SHARE as FIT_SHARE
from noetic.calibration.recalibration import MIN_FIT as MIN_FIT
from noetic.calibration.recalibration import MIN_HELD_OUT as MIN_HELD_OUT
from noetic.calibration.recalibration import split
from noetic.frozen import Frozen
from noetic.profiles import ProfileRegistry
from noetic.store.base import BaseStore as Store

WEIGHT_BOUNDS: Final = (0.5, 1.5)


class Proposal(Frozen):
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
    stated: str = "confidence",
) -> Proposal | None:
    """A ``confidence_weight`` correction when the overall bias is credible, else ``None``;
    sized by the posterior mean bias, with its interval (module docstring). ``stated`` names
    what the means are of, for the reason."""
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
            f"to {belief.high:+.3f}, {belief.evidence} outcomes); stated ({stated}) "
            f"{mean_predicted:.3f} vs observed {mean_observed:.3f}; weight {new} (95% interval "
            f"{low} to {high}; the outcomes alone say {supported}){limit}"
        ),
    )


class HeldOut(Frozen):
    """The correction fitted on the earlier outcomes, scored on the later ones."""

    fitted_on: int
    held_out: int
    weight: float | None
    brier_before: float
    brier_after: float | None
    helps: bool


class GuardianReport(Frozen):
    stated: Stated | None  # what was judged (module docstring); None with no outcomes
    stated_from: dict[str, int]
    profile: str
    tasks_considered: int
    belief: Belief
    proposal: Proposal | None
    held_out: HeldOut | None
    applied: Adjustment | None
    note: str


def held_out_check(
    profile: str,
    current_weight: float,
    stated: list[float],
    observed: list[float],
    scaled: Sequence[bool] | None = None,
    label: str = "confidence",
) -> tuple[Proposal | None, HeldOut | None, str]:
    """Fit on the earlier outcomes, score on the later (module docstring): the proposal if it
    helped there, what the held-out part showed, and why nothing is proposed when nothing is.
    ``scaled`` says which statements the weight scales (the vectors' confidence: all, when not
    given); the others (a stated ``p_success``) are scored as stated. ``label`` names what was
    stated, for the reason."""
    n = len(stated)
    scaled = [True] * n if scaled is None else list(scaled)
    if len(scaled) != n:
        raise ValueError("stated and scaled must be equal-length sequences")
    fit = split(n)  # the split the recalibration map's proof uses too
    if fit is None:
        return (
            None,
            None,
            f"{n} outcome{'s' if n != 1 else ''}: a correction is proposed only once it lowers "
            f"the Brier score on outcomes it was not fitted on ({MIN_FIT + MIN_HELD_OUT} needed: "
            f"{MIN_FIT} to fit, {MIN_HELD_OUT} after them to test)",
        )
    early_p, early_y = stated[:fit], observed[:fit]
    late_p, late_y = stated[fit:], observed[fit:]
    belief = update_belief("overall", [p - y for p, y in zip(early_p, early_y, strict=True)])
    proposal = guardian_proposal(
        profile,
        current_weight,
        belief,
        sum(early_p) / len(early_p),
        sum(early_y) / len(early_y),
        label,
    )
    before = _brier(late_p, late_y)
    check = HeldOut(
        fitted_on=fit,
        held_out=n - fit,
        weight=None,
        brier_before=before,
        brier_after=None,
        helps=False,
    )
    if proposal is None:
        return None, check, f"no credible bias in the first {fit} outcomes: nothing to change"
    scale = proposal.new / current_weight
    late_scaled = scaled[fit:]
    corrected = [
        min(1.0, max(0.0, p * scale)) if s else p for p, s in zip(late_p, late_scaled, strict=True)
    ]
    after = _brier(corrected, late_y)
    check = check.model_copy(
        update={"weight": proposal.new, "brier_after": after, "helps": after < before}
    )
    if not any(late_scaled):
        return (
            None,
            check,
            f"the {n - fit} outcomes after the first {fit} all rest on a stated P(success), which "
            "confidence_weight does not scale (it scales the vectors' confidence): no correction "
            "of the profile would change them, so nothing is proposed",
        )
    if not check.helps:
        return (
            None,
            check,
            f"a correction fitted on the first {fit} outcomes (weight {proposal.new}) did not "
            f"lower the Brier score on the {n - fit} after them ({before:.4f} → {after:.4f}): "
            "nothing proposed",
        )
    return proposal, check, ""


def _brier(p: list[float], y: list[float]) -> float:
    return round(sum((a - b) ** 2 for a, b in zip(p, y, strict=True)) / len(p), 6)


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
    points = preflight_points(store, Filters(ai_id=ai_id, profile=profile_name), after=after)
    label, counts = stated_basis([p.basis for p in points])
    stated = [p.stated for p in points]
    observed = [p.observed for p in points]
    belief = update_belief("overall", [a - b for a, b in zip(stated, observed, strict=True)])
    proposal, held_out, why_not = held_out_check(
        profile_name,
        profile.tuning.confidence_weight,
        stated,
        observed,
        scaled=[p.basis == "confidence" for p in points],
        label=label or "confidence",
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
            evidence={
                "belief": belief.model_dump(),
                "held_out": held_out.model_dump() if held_out else None,
                "tasks": [p.cascade_id for p in points],
            },
        )
    if proposal is None and not points and after is not None:  # none since the last correction
        before = len(preflight_points(store, Filters(ai_id=ai_id, profile=profile_name)))
        note = f"no outcomes since the last correction ({before} before it)"
    elif proposal is None:
        note = why_not if points else "no outcomes yet"
    elif applied is None:
        note = "proposal only: run with --apply to change the profile"
    else:
        note = f"applied as adjustment {applied.id}; undo with --undo {applied.id}"
    return GuardianReport(
        stated=label,
        stated_from=counts,
        profile=profile_name,
        tasks_considered=len(points),
        belief=belief,
        proposal=proposal,
        held_out=held_out,
        applied=applied,
        note=note,
    )


undo = undo_adjustment  # the public name: a correction the guardian applied, undone
