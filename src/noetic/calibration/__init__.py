"""Calibration: how an agent's stated confidence compares with what happened.

One public surface over the modules behind it, each saying what it holds: the maths, pure
(domain only; the import contract checks it), in ``basic`` (a task's POSTFLIGHT against its
PREFLIGHT), ``metrics`` and ``rates`` (the statistics over ``(confidence, outcome)`` pairs),
``per_phase`` (per phase, agent, model, engine, persona and profile), ``beliefs``, ``drift`` and
``recalibration``; the store's side in ``outcomes``, ``guardian``, ``learning`` (recording an
outcome and what follows from it), ``recalibrating`` and ``reports``.

Importing the package is cheap: each name loads its module on first use, so a command that
needs ``basic_calibration`` does not pay for the reports, the guardian and the drift monitor.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.calibration.basic import (
        CALIBRATION_TOLERANCE,
        BasicCalibration,
        CalibrationClass,
        basic_calibration,
        classify,
        epistemic_delta,
    )
    from noetic.calibration.beliefs import Belief, update_belief
    from noetic.calibration.drift import (
        Detection,
        DriftAlarm,
        DriftReport,
        detect_drift,
        detection_delay,
        monitor,
    )
    from noetic.calibration.guardian import (
        GuardianReport,
        Proposal,
        guardian_proposal,
        run_guardian,
        undo,
    )
    from noetic.calibration.learning import RecordedOutcome, record_outcome
    from noetic.calibration.metrics import (
        CalibrationMetrics,
        CalibrationTest,
        Metric,
        ReliabilityBin,
        calibration_metrics,
        calibration_test,
    )
    from noetic.calibration.outcomes import (
        Adjustment,
        Filters,
        OutcomePoint,
        OutcomeRecord,
        active_overrides,
        adjustments,
        effective_profile,
        list_outcomes,
        outcome_points,
        phase_points,
        preflight_points,
    )
    from noetic.calibration.per_phase import (
        PHASES,
        Group,
        PhasePoint,
        PhaseStats,
        ReviewComparison,
        Summary,
        stated_value,
    )
    from noetic.calibration.rates import BrierParts, Interval, brier_parts, wilson
    from noetic.calibration.reports import (
        BasicCalibrationReport,
        BeliefsReport,
        CalibrationReport,
        Prediction,
        basic_calibration_report,
        calibration_report,
        check_drift_monitor,
        query_bayesian_beliefs,
    )

_WHERE = {
    name: f"noetic.calibration.{module}"
    for module, names in (
        ("basic", "BasicCalibration CALIBRATION_TOLERANCE CalibrationClass basic_calibration"),
        ("basic", "classify epistemic_delta"),
        ("beliefs", "Belief update_belief"),
        ("drift", "Detection DriftAlarm DriftReport detect_drift detection_delay monitor"),
        ("guardian", "GuardianReport Proposal guardian_proposal run_guardian undo"),
        ("learning", "RecordedOutcome record_outcome"),
        ("metrics", "CalibrationMetrics CalibrationTest Metric ReliabilityBin calibration_metrics"),
        ("metrics", "calibration_test"),
        ("outcomes", "Adjustment Filters OutcomePoint OutcomeRecord active_overrides adjustments"),
        ("outcomes", "effective_profile list_outcomes outcome_points phase_points"),
        ("outcomes", "preflight_points"),
        ("per_phase", "Group PHASES PhasePoint PhaseStats ReviewComparison Summary stated_value"),
        ("rates", "BrierParts Interval brier_parts wilson"),
        ("reports", "BasicCalibrationReport BeliefsReport CalibrationReport Prediction"),
        ("reports", "basic_calibration_report calibration_report check_drift_monitor"),
        ("reports", "query_bayesian_beliefs"),
    )
    for name in names.split()
}


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        # __import__, not importlib's import_module (importlib and the warnings it loads)
        __import__(_WHERE[name])
        value = getattr(sys.modules[_WHERE[name]], name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'noetic.calibration' has no attribute {name!r}")


__all__ = [
    "CALIBRATION_TOLERANCE",
    "PHASES",
    "Adjustment",
    "BasicCalibration",
    "BasicCalibrationReport",
    "Belief",
    "BeliefsReport",
    "BrierParts",
    "CalibrationClass",
    "CalibrationMetrics",
    "CalibrationReport",
    "CalibrationTest",
    "Detection",
    "DriftAlarm",
    "DriftReport",
    "Filters",
    "Group",
    "GuardianReport",
    "Interval",
    "Metric",
    "OutcomePoint",
    "OutcomeRecord",
    "PhasePoint",
    "PhaseStats",
    "Prediction",
    "Proposal",
    "RecordedOutcome",
    "ReliabilityBin",
    "ReviewComparison",
    "Summary",
    "active_overrides",
    "adjustments",
    "basic_calibration",
    "basic_calibration_report",
    "brier_parts",
    "calibration_metrics",
    "calibration_report",
    "calibration_test",
    "check_drift_monitor",
    "classify",
    "detect_drift",
    "detection_delay",
    "effective_profile",
    "epistemic_delta",
    "guardian_proposal",
    "list_outcomes",
    "monitor",
    "outcome_points",
    "phase_points",
    "preflight_points",
    "query_bayesian_beliefs",
    "record_outcome",
    "run_guardian",
    "stated_value",
    "undo",
    "update_belief",
    "wilson",
]
