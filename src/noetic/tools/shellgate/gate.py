"""The deterministic shell gate: a command's syntax tree judged against the policy.

:func:`check_command` parses the command (:mod:`.syntax`) and judges every simple command it could
run and every redirection (:mod:`.judge`). Fail closed: a command that does not parse, or nests
too deeply to analyse, is refused. ``sandboxed=True`` says the command will run inside the OS
sandbox: what the sandbox contains (``sandbox_contains`` in the policy) is then left to it.
``sandboxed=False`` — a host with no sandbox, or a command another tool runs (Claude Code's Bash
tool) — refuses it.
"""

from __future__ import annotations

import os
from pathlib import Path

from noetic.tools.shellgate.judge import Judge
from noetic.tools.shellgate.policy import Policy, load_policy
from noetic.tools.shellgate.verdict import Verdict, Violation


def check_command(
    command: str,
    workspace: Path | str,
    policy: Policy | None = None,
    *,
    home: str | None = None,
    cwd: Path | str | None = None,
    sandboxed: bool = False,
    cdpath: str | None = None,
) -> Verdict:
    """Judge ``command`` as if run in ``cwd`` (default: ``workspace``), the only folder it may
    change being ``workspace``; ``sandboxed`` when it will run inside the OS sandbox, ``cdpath``
    the ``CDPATH`` of the shell that runs it (where ``cd NAME`` may land)."""
    policy = policy or load_policy()
    root = os.path.realpath(workspace)
    home = os.path.realpath(home or os.path.expanduser("~"))
    start = os.path.realpath(cwd) if cwd is not None else root
    judge = Judge(policy, root, home, start, sandboxed=sandboxed, cdpath=cdpath or None)
    found = judge.judge(command)
    unique: dict[tuple[str, str, int], Violation] = {}
    for v in found:
        if policy.enabled(v.rule):
            unique.setdefault((v.rule, v.part, v.start), v)
    return Verdict(
        command=command,
        allowed=not unique,
        violations=tuple(unique.values()),
        workspace=root,
        sandboxed=sandboxed,
    )
