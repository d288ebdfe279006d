"""The deterministic shell gate: a command's syntax tree judged against a policy that is data.

``check_command("rm -rf ~", workspace)`` returns a :class:`Verdict`: allowed, or the rules the
command broke, each with the part of the command that broke it and what the gate could not
determine there. ``sandboxed=True`` judges a command that will run inside the OS sandbox.
``load_policy(path)`` extends the built-in policy (``policy.yaml`` beside this file) with a
user's file.
"""

from noetic.tools.shellgate.gate import check_command
from noetic.tools.shellgate.policy import Policy, load_policy
from noetic.tools.shellgate.verdict import Verdict, Violation

__all__ = ["Policy", "Verdict", "Violation", "check_command", "load_policy"]
