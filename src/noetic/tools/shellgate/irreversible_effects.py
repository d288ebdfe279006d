"""What an allowed command would change irreversibly, for the agent's epistemic gate."""

from __future__ import annotations

import os
import re
from pathlib import Path

from noetic.tools.shellgate.effects_table import PROGRAMS, WRITTEN, Program
from noetic.tools.shellgate.policy import Policy, load_policy
from noetic.tools.shellgate.syntax import TooComplex, Unparseable, parse

_DELETING = frozenset({"rm", "rmdir", "unlink", "shred", "truncate"})
_GIT_REWRITES = {"reset": "--hard", "clean": None, "restore": None, "checkout": "--"}


def effects(
    command: str,
    workspace: Path | str,
    policy: Policy | None = None,
    *,
    home: str | None = None,
    cwd: Path | str | None = None,
) -> list[str]:
    """What an allowed command would change irreversibly, as short phrases: deletions,
    overwrites (``>``, ``mv``, ``sed -i``, ``git reset --hard``…), pushes and other writes.
    Empty for a command that only reads. A command that does not parse has no known effects
    (the gate refuses it anyway)."""
    policy = policy or load_policy()
    root = os.path.realpath(workspace)
    home = os.path.realpath(home or os.path.expanduser("~"))
    start = os.path.realpath(cwd) if cwd is not None else root
    try:
        script = parse(command, home=home, workspace=root, cwd=start)
    except (Unparseable, TooComplex, RecursionError):
        return []
    found: list[str] = []
    for cmd in script.commands:
        if cmd.name is None or cmd.name.value is None or cmd.keyword:
            continue
        base = cmd.name.value.rsplit("/", 1)[-1]
        values = [a.value or a.text for a in cmd.args]
        if base in _DELETING or (base == "find" and "-delete" in values):
            found.append(f"deletes ({cmd.text})")
        elif base == "git":
            sub = next((v for v in values if not v.startswith("-")), "")
            flag = _GIT_REWRITES.get(sub, "missing")
            if sub == "push":
                found.append(f"pushes ({cmd.text})")
            elif flag != "missing" and (flag is None or flag in values):
                found.append(f"discards changes ({cmd.text})")
        elif base in PROGRAMS and _table_writes(PROGRAMS[base], values):
            found.append(f"writes ({cmd.text})")
        elif base in policy.writers and base not in ("find", "git"):
            writer = policy.writers[base]
            if writer.when and not any(v in writer.when for v in values):
                continue
            if writer.paths != "none" or any(
                v == o or v.startswith(o) for v in values for o in writer.options
            ):
                found.append(f"writes ({cmd.text})")
    for r in script.redirects:
        target = r.target.value if r.target is not None else None
        if (
            r.writes
            and target not in (None, *policy.writable)
            and not (target or "").startswith("/dev/")
        ):
            found.append(f"writes {target} ({r.text})")
    return found


def _table_writes(row: Program, values: list[str]) -> bool:
    """Whether a program's row says this use of it writes (``gzip f``, not ``gzip -c f``)."""
    if row.write_when and not _has(values, row.write_when):
        return False
    if row.write_unless and _has(values, row.write_unless):
        return False
    operands = [v for v in values if not v.startswith("-")]
    return bool(operands[WRITTEN[row.writes]]) or _has(values, row.write_options)


def _has(values: list[str], options: tuple[str, ...]) -> bool:
    """Whether an option is given, alone or in a cluster of short ones (``-czf`` has ``-c``)."""
    return any(
        v == o
        or v.startswith(o + "=")
        or (len(o) == 2 and re.fullmatch(r"-[A-Za-z]+", v) is not None and o[1] in v)
        for v in values
        for o in options
    )
