"""The eval engine: a model's calibration measured offline on problems its tests judge.

``run_eval(ctx, run_id)`` runs (or goes on with) an eval run recorded in the store
(:mod:`noetic.store.evals`); :mod:`.problems` holds the task sets (HumanEval built in, a team's
own JSON Lines), :mod:`.judge` the sandboxed test run, :mod:`.report` the per-phase report and
the comparison of two runs. ``noetic eval`` (``docs/eval.md``) starts it through
``noetic.operations.evaluating``.
"""

from __future__ import annotations

from noetic.evaluation.engine import (
    EvalRun,
    EvalSettings,
    Tally,
    TaskResult,
    run_eval,
    stored_run,
)

__all__ = ["EvalRun", "EvalSettings", "Tally", "TaskResult", "run_eval", "stored_run"]
