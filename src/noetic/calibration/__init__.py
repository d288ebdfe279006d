"""Calibration: how an agent's stated confidence compares with what happened.

One public surface; the modules behind it:

* :mod:`~noetic.calibration.basic` — self-consistency, a task's POSTFLIGHT against its PREFLIGHT;
* :mod:`~noetic.calibration.metrics` — Brier, ECE, signed bias, AUROC, reliability, with
  intervals, over ``(confidence, outcome)`` pairs;
* :mod:`~noetic.calibration.beliefs` — the Bayesian belief about an agent's bias;
* :mod:`~noetic.calibration.drift` — has calibration changed recently;
* :mod:`~noetic.calibration.outcomes` — recorded outcomes, the predictions beside them, and the
  profile adjustments (the store's ``outcomes`` and ``profile_adjustments`` tables);
* :mod:`~noetic.calibration.guardian` — the profile correction a credible bias calls for;
* :mod:`~noetic.calibration.reports` — the reports the CLI and the MCP server show.

``basic``, ``metrics``, ``beliefs`` and ``drift`` are pure (domain imports only; the import
contract checks it); ``outcomes``, ``guardian`` and ``reports`` read and write the store.
"""

from __future__ import annotations

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
    record_outcome,
)
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

__all__ = [
    "CALIBRATION_TOLERANCE",
    "Adjustment",
    "BasicCalibration",
    "BasicCalibrationReport",
    "Belief",
    "BeliefsReport",
    "CalibrationClass",
    "CalibrationMetrics",
    "CalibrationReport",
    "CalibrationTest",
    "Detection",
    "DriftAlarm",
    "DriftReport",
    "Filters",
    "GuardianReport",
    "Metric",
    "OutcomePoint",
    "OutcomeRecord",
    "Prediction",
    "Proposal",
    "ReliabilityBin",
    "active_overrides",
    "adjustments",
    "basic_calibration",
    "basic_calibration_report",
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
    "query_bayesian_beliefs",
    "record_outcome",
    "run_guardian",
    "undo",
    "update_belief",
]
