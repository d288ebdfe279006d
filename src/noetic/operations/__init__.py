"""Operations: each thing a user can start or read, written once.

The CLI, the MCP tools, the Python API and the dashboard call these functions and only render
what they return. An operation takes plain arguments (ids, names, numbers, paths; the open
tracker or store of the caller, whose life is the caller's), opens or finds what it needs (the
session, the provider, the run context, the tools) and returns a typed result; it never prints
and never parses a command line. Each says in its docstring whether it is sync or async: the
workflow and the reads are sync store work (from async code, run them on a thread), the engine
runs are async.

==========================  ==========================================================
what                        operation
==========================  ==========================================================
the workflow                :mod:`~noetic.operations.workflow`: ``bootstrap``,
                            ``preflight``, ``investigate``, ``check``, ``postflight``,
                            ``state``, ``prompt``
an engine run               :mod:`~noetic.operations.runs`: ``start_cascade``,
                            ``start_chain``, ``start_nova``, ``resume_nova``
the agent                   :mod:`~noetic.operations.agent_runs`: ``open_agent``,
                            ``start_agent``, ``resume_agent``
recall                      :mod:`~noetic.operations.recalling`: ``recall``
calibration                 :mod:`~noetic.operations.calibrating`: ``outcome``,
                            ``report``
a session's summary         :mod:`~noetic.operations.session_view`: ``session_summary``
goals                       :mod:`~noetic.operations.goal_setting`: ``list_goals``,
                            ``generate_goals``, ``get_goal``
where a command acts        :mod:`~noetic.operations.locating`: ``where``
keeping a store whole,      :mod:`~noetic.operations.maintenance`: ``rebuild``,
moving it                   ``migrate_store``
an eval of a model          :mod:`~noetic.operations.evaluating`: ``start_eval``,
                            ``resume_eval``, ``eval_report``, ``compare_evals``,
                            ``list_evals``
what the dashboard reads    ``session_list``, ``session_view``, ``task_list``,
                            ``task_view``, ``run_view``, ``calibration_view``, ``compare``,
                            ``live``, ``eval_view``: read models over an open store
==========================  ==========================================================

Importing this package loads none of them: each name loads its module on first use, so a
command that needs one operation pays for that one.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_OPERATIONS = {
    "bootstrap": "workflow",
    "prompt": "workflow",
    "preflight": "workflow",
    "investigate": "workflow",
    "check": "workflow",
    "postflight": "workflow",
    "state": "workflow",
    "Bootstrapped": "workflow",
    "AssessmentPrompt": "workflow",
    "start_cascade": "runs",
    "start_chain": "runs",
    "start_nova": "runs",
    "resume_nova": "runs",
    "Started": "runs",
    "open_agent": "agent_runs",
    "start_agent": "agent_runs",
    "resume_agent": "agent_runs",
    "recall": "recalling",
    "outcome": "calibrating",
    "report": "calibrating",
    "migrate_store": "maintenance",
    "list_goals": "goal_setting",
    "generate_goals": "goal_setting",
    "get_goal": "goal_setting",
    "where": "locating",
    "rebuild": "maintenance",
    "start_eval": "evaluating",
    "resume_eval": "evaluating",
    "eval_report": "evaluating",
    "compare_evals": "evaluating",
    "list_evals": "evaluating",
}

__all__ = sorted(_OPERATIONS)


def __getattr__(name: str) -> Any:
    if name in _OPERATIONS:
        # __import__, not importlib's import_module (importlib and the warnings it loads)
        module = f"noetic.operations.{_OPERATIONS[name]}"
        __import__(module)
        return getattr(sys.modules[module], name)
    raise AttributeError(f"module 'noetic.operations' has no attribute {name!r}")
