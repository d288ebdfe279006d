"""The dashboard's eval pages: every eval run (newest first) and one run's report."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from noetic.evaluation.engine import EvalRun
    from noetic.evaluation.report import EvalReport
    from noetic.store.base import BaseStore


def eval_runs(store: BaseStore) -> list[EvalRun]:
    """Every eval run's summary (its problems left out), newest first. Sync."""
    from noetic.evaluation.engine import stored_run
    from noetic.store.evals import runs

    return [stored_run(store, r.id).model_copy(update={"tasks": []}) for r in reversed(runs(store))]


def eval_view(store: BaseStore, run_id: str) -> EvalReport:
    """One eval run: its report per phase and every problem. Sync."""
    from noetic.evaluation.report import eval_report

    return eval_report(store, run_id)
