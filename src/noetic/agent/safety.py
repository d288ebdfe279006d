"""Triage fails safe: a request that is itself a command line the shell gate refuses is refused
before the model is asked, whatever the model would have said.

The request is judged by the same gate the shell tool uses (:func:`noetic.tools.shellgate.
check_command`, under the run's policy) when it reads as a command line: the whole request, or
one of its lines, whose first word is a program on ``PATH`` or one the policy's rules name
(``sudo``, ``mkfs``…). Prose is not judged as shell ("I prefer Python and I work at Google" would
otherwise run ``I`` with ``at`` in its arguments); it is the model's to judge, and every command
the agent later runs passes the gate again. A line the gate cannot analyse (it does not parse,
or nests too deeply, or names a program the gate does not model: the shape of a sentence that
happens to start with ``make``, ``time`` or ``watch``) is left to the model too — the shell tool
refuses such a command if the agent ever runs it; every other rule refuses.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from noetic.tools.shellgate import Policy, Violation, check_command

# what the gate says when it cannot analyse the text, rather than that the text does harm: it
# does not parse, nests too deeply, names a program (or runs a command) the gate does not model
UNANALYSABLE = frozenset(
    {"unparseable", "too-complex", "unknown-program", "dynamic-command", "program-exec"}
)


def _programs(policy: Policy) -> frozenset[str]:
    return frozenset(
        name
        for rule in policy.rules
        for m in rule.match
        for name in m.command
        if not any(c in name for c in "*?[")
    )


def _first_word(line: str) -> str:
    try:
        words = shlex.split(line, comments=False)
    except ValueError:
        words = line.split()
    return words[0] if words else ""


def command_lines(request: str, policy: Policy) -> list[str]:
    """The parts of ``request`` that read as command lines: the request, then its lines."""
    named = _programs(policy)
    candidates = [request.strip(), *(line.strip() for line in request.splitlines())]
    found: list[str] = []
    for text in dict.fromkeys(c for c in candidates if c):
        first = _first_word(text)
        if first and (first in named or shutil.which(first) is not None):
            found.append(text)
    return found


def refused_request(request: str, workspace: Path, policy: Policy) -> Violation | None:
    """The first rule the shell gate refuses ``request`` for, when it is a command line."""
    for line in command_lines(request, policy):
        verdict = check_command(line, workspace, policy)
        for violation in verdict.violations:
            if violation.rule not in UNANALYSABLE:
                return violation
    return None
