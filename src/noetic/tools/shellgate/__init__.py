"""The deterministic shell gate: a command's syntax tree judged against a policy that is data.

``check_command("rm -rf ~", workspace)`` returns a :class:`Verdict`: allowed, or the rules the
command broke, each with the part of the command that broke it. ``load_policy(path)`` extends
the built-in policy (``policy.yaml`` beside this file) with a user's file.
"""

from noetic.tools.shellgate.gate import Verdict, Violation, check_command
from noetic.tools.shellgate.policy import Policy, load_policy

__all__ = ["Policy", "Verdict", "Violation", "check_command", "load_policy"]
