"""The deterministic shell gate: a command's syntax tree judged against a policy that is data.

``check_command("rm -rf ~", workspace)`` returns a :class:`Verdict`: allowed, or the rules the
command broke, each with the part of the command that broke it and what the gate could not
determine there. ``sandboxed=True`` judges a command that will run inside the OS sandbox.
``load_policy(path)`` extends the built-in policy (``policy.yaml`` beside this file) with a
user's file.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.tools.shellgate.gate import check_command
    from noetic.tools.shellgate.policy import Policy, load_policy
    from noetic.tools.shellgate.verdict import Verdict, Violation

__all__ = ["Policy", "Verdict", "Violation", "check_command", "load_policy"]
# imported when first asked for: a write's check needs the policy, not the parser and the judge
_WHERE = {
    "check_command": "gate",
    "Policy": "policy",
    "load_policy": "policy",
    "Verdict": "verdict",
    "Violation": "verdict",
}


def __getattr__(name: str) -> Any:
    where = _WHERE.get(name)
    if where is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f"{__name__}.{where}"), name)
    globals()[name] = value
    return value
