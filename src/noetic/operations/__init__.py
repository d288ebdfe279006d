"""Operations: each thing a user can start or read, written once.

The CLI, the MCP tools, the Python API and the dashboard call these functions and only render
what they return. An operation opens or finds what it needs (the session, the provider, the run
context, the tools), returns a typed result, never prints and never parses a command line; each
says in its docstring whether it is sync or async. Which module holds which operation, what each
takes and returns, is in ``docs/architecture.md`` (the operations layer).

Importing this package loads none of them: each name loads its module on first use, so a
command that needs one operation pays for that one.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


_OPERATIONS = {
    name: module
    for module, names in (
        ("workflow", "bootstrap prompt preflight investigate check postflight state Bootstrapped"),
        ("workflow", "AssessmentPrompt"),
        ("runs", "start_cascade start_chain start_nova resume_nova Started"),
        ("agent_runs", "open_agent start_agent resume_agent"),
        ("recalling", "recall"),
        ("calibrating", "outcome report"),
        ("maintenance", "migrate_store rebuild"),
        ("goal_setting", "list_goals generate_goals get_goal"),
        ("locating", "where"),
        ("evaluating", "start_eval resume_eval eval_report compare_evals list_evals"),
    )
    for name in names.split()
}

__all__ = sorted(_OPERATIONS)


def __getattr__(name: str) -> Any:
    if name in _OPERATIONS:
        # __import__, not importlib's import_module (importlib and the warnings it loads)
        module = f"noetic.operations.{_OPERATIONS[name]}"
        __import__(module)
        return getattr(sys.modules[module], name)
    raise AttributeError(f"module 'noetic.operations' has no attribute {name!r}")
