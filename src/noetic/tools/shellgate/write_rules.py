"""Whether writing a path breaks one of the policy's write rules, without the rest of the gate.

Claude Code's PreToolUse hook asks this for every Write and Edit, and the file tools before
every write: it needs the policy and the path patterns, not the parser and the judge that
:func:`noetic.tools.shellgate.check_command` brings in.
"""

from __future__ import annotations

import os

from noetic.tools.shellgate.path_patterns import compile_all
from noetic.tools.shellgate.policy import Policy
from noetic.tools.shellgate.verdict import Violation


def write_refusal(
    policy: Policy, path: str, *, workspace: str, home: str | None = None
) -> Violation | None:
    """The first write rule of ``policy`` that writing the real path ``path`` breaks, if any.

    The files tools ask this before writing, so they cannot do what the gate refuses a shell
    command for (a git hook, Noetic's own store, a shell start-up file)."""
    home = os.path.realpath(home or os.path.expanduser("~"))
    for rule in policy.rules:
        if not policy.enabled(rule.id):
            continue
        for m in rule.match:
            if (
                m.paths
                and m.access == "write"
                and compile_all(m.paths, home, workspace).match(path)
            ):
                return Violation(rule=rule.id, reason=rule.reason, part=path)
    return None
