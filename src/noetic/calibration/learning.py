"""What Noetic learns from a new outcome: the outcome is kept beside what the agent predicted
(:mod:`.outcomes`), the guardian may correct the profile at once (:mod:`.guardian`, when the
profile's ``auto_apply`` says so), and the agent's recalibration map is refitted
(:mod:`.recalibrating`); the receipt says what the agent stated and what that means now.

This module sits above the three it calls, which read outcomes and never record one, so the
recording of an outcome and what follows from it is in one place.
"""

from __future__ import annotations

from noetic.assessment import Calibrated, Phase
from noetic.calibration.outcomes import (
    OutcomeRecord,
    add_outcome,
    check_outcome_score,
    effective_profile,
)
from noetic.errors import NotFoundError, WorkflowError
from noetic.profiles import ProfileRegistry
from noetic.store.base import BaseStore as Store
from noetic.store.records import CascadeRecord

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal


class RecordedOutcome(OutcomeRecord):
    """The receipt of a newly recorded outcome: the record, and what the agent stated at the
    task's PREFLIGHT as calibration scores it (``stated``: ``p_success`` where the agent gave
    one, ``confidence``, the vectors' overall confidence, otherwise)."""

    stated_preflight: float
    stated: Literal["p_success", "confidence"]
    # the statement as the agent's map, refitted with this outcome, now reads it (None: no map
    # in force); :mod:`.recalibrating`
    calibrated: Calibrated | None = None


def record_outcome(
    store: Store,
    target: str,
    *,
    score: float,
    source: str,
    evidence: str = "",
    refit: bool = True,
    registry: ProfileRegistry | None = None,
) -> RecordedOutcome:
    """Record an outcome for a cascade, or for a session's latest task; the receipt quotes
    what the agent stated at PREFLIGHT, as the per-phase report scores it, and what it means
    calibrated now (the agent's map refitted with this outcome and kept, unless ``refit`` is
    false: then the next decision refits it). ``registry``: the profiles (default: the
    store's)."""
    from noetic.calibration.per_phase import stated_value

    check_outcome_score(score)
    cascade = _resolve_task(store, target)
    session = store.get_session(cascade.session_id)
    from noetic.store.outcome_rows import statements

    history = statements(store, cascade.id)
    pre = next((a for a in history if a.phase == Phase.PREFLIGHT.value), None)
    if pre is None:
        raise WorkflowError(
            f"task {cascade.id} has no PREFLIGHT, so there is no prediction to score",
            fix="record outcomes for tasks that began with a PREFLIGHT",
        )
    checks = [a for a in history if a.phase == Phase.CHECK.value]
    record = add_outcome(
        store,
        session_id=session.id,
        cascade_id=cascade.id,
        ai_id=session.ai_id,
        profile=cascade.profile,
        domain=session.domain,
        source=source,
        score=float(score),
        evidence=evidence,
        predicted_preflight=pre.confidence,
        predicted_check=checks[-1].confidence if checks else None,
        predicted_vectors=pre.vectors,
    )
    registry = registry or ProfileRegistry(store.home / "profiles")
    if effective_profile(store, registry, cascade.profile).guardian.auto_apply:
        from noetic.calibration.guardian import run_guardian

        run_guardian(store, registry, cascade.profile, ai_id=session.ai_id)
    value, basis = stated_value(pre.p_success, pre.confidence)
    calibrated = None
    if refit:
        from noetic.calibration.recalibrating import fitted_for, meaning

        calibrated = meaning(*fitted_for(store, session.ai_id, session.ai_model), value, basis)
    return RecordedOutcome(
        **record.model_dump(), stated_preflight=value, stated=basis, calibrated=calibrated
    )


def _resolve_task(store: Store, target: str) -> CascadeRecord:
    if target.startswith("c_"):
        return store.get_cascade(target)
    session = store.get_session(target)
    cascades = store.cascades(session.id)
    if not cascades:
        raise NotFoundError(f"session {session.id} has no task to record an outcome for")
    return cascades[-1]
