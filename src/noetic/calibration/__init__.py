"""Calibration: how an agent's stated confidence compares with what happened.

One public surface; the modules behind it:

* :mod:`~noetic.calibration.basic` — self-consistency, a task's POSTFLIGHT against its PREFLIGHT;
* :mod:`~noetic.calibration.metrics` — Brier, ECE, signed bias, AUROC, reliability, with
  intervals, over ``(confidence, outcome)`` pairs;
* :mod:`~noetic.calibration.rates` — what a few outcomes already say: the success rate's Wilson
  interval, the overconfidence gap, the Brier decomposition;
* :mod:`~noetic.calibration.per_phase` — calibration per phase (PREFLIGHT, CHECK, POSTFLIGHT,
  adversarial review), per agent, model, engine, persona and profile;
* :mod:`~noetic.calibration.beliefs` — the Bayesian belief about an agent's bias;
* :mod:`~noetic.calibration.drift` — has calibration changed recently;
* :mod:`~noetic.calibration.outcomes` — recorded outcomes, the predictions beside them, and the
  profile adjustments (the store's ``outcomes`` and ``profile_adjustments`` tables);
* :mod:`~noetic.calibration.guardian` — the profile correction a credible bias calls for;
* :mod:`~noetic.calibration.learning` — recording an outcome and what follows from it: the
  guardian's correction where the profile applies it, the agent's map refitted;
* :mod:`~noetic.calibration.reports` — the reports the CLI and the MCP server show.

``basic``, ``metrics``, ``rates``, ``per_phase``, ``beliefs`` and ``drift`` are pure (domain
only; the import contract checks it); ``outcomes``, ``guardian``, ``learning`` and ``reports``
read and write the store.

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
    "Adjustment": "noetic.calibration.outcomes",
    "BasicCalibration": "noetic.calibration.basic",
    "BasicCalibrationReport": "noetic.calibration.reports",
    "Belief": "noetic.calibration.beliefs",
    "BeliefsReport": "noetic.calibration.reports",
    "BrierParts": "noetic.calibration.rates",
    "Group": "noetic.calibration.per_phase",
    "Interval": "noetic.calibration.rates",
    "PHASES": "noetic.calibration.per_phase",
    "PhasePoint": "noetic.calibration.per_phase",
    "PhaseStats": "noetic.calibration.per_phase",
    "ReviewComparison": "noetic.calibration.per_phase",
    "Summary": "noetic.calibration.per_phase",
    "brier_parts": "noetic.calibration.rates",
    "phase_points": "noetic.calibration.outcomes",
    "preflight_points": "noetic.calibration.outcomes",
    "RecordedOutcome": "noetic.calibration.learning",
    "stated_value": "noetic.calibration.per_phase",
    "wilson": "noetic.calibration.rates",
    "CALIBRATION_TOLERANCE": "noetic.calibration.basic",
    "CalibrationClass": "noetic.calibration.basic",
    "CalibrationMetrics": "noetic.calibration.metrics",
    "CalibrationReport": "noetic.calibration.reports",
    "CalibrationTest": "noetic.calibration.metrics",
    "Detection": "noetic.calibration.drift",
    "DriftAlarm": "noetic.calibration.drift",
    "DriftReport": "noetic.calibration.drift",
    "Filters": "noetic.calibration.outcomes",
    "GuardianReport": "noetic.calibration.guardian",
    "Metric": "noetic.calibration.metrics",
    "OutcomePoint": "noetic.calibration.outcomes",
    "OutcomeRecord": "noetic.calibration.outcomes",
    "Prediction": "noetic.calibration.reports",
    "Proposal": "noetic.calibration.guardian",
    "ReliabilityBin": "noetic.calibration.metrics",
    "active_overrides": "noetic.calibration.outcomes",
    "adjustments": "noetic.calibration.outcomes",
    "basic_calibration": "noetic.calibration.basic",
    "basic_calibration_report": "noetic.calibration.reports",
    "calibration_metrics": "noetic.calibration.metrics",
    "calibration_report": "noetic.calibration.reports",
    "calibration_test": "noetic.calibration.metrics",
    "check_drift_monitor": "noetic.calibration.reports",
    "classify": "noetic.calibration.basic",
    "detect_drift": "noetic.calibration.drift",
    "detection_delay": "noetic.calibration.drift",
    "effective_profile": "noetic.calibration.outcomes",
    "epistemic_delta": "noetic.calibration.basic",
    "guardian_proposal": "noetic.calibration.guardian",
    "list_outcomes": "noetic.calibration.outcomes",
    "monitor": "noetic.calibration.drift",
    "outcome_points": "noetic.calibration.outcomes",
    "query_bayesian_beliefs": "noetic.calibration.reports",
    "record_outcome": "noetic.calibration.learning",
    "run_guardian": "noetic.calibration.guardian",
    "undo": "noetic.calibration.guardian",
    "update_belief": "noetic.calibration.beliefs",
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
