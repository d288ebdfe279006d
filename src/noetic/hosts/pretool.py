"""``noetic hook pre-tool-use``: the shell gate and the epistemic gate in front of Claude Code's
tools.

Claude Code asks before each Bash, Write, Edit and MultiEdit call (the hook's matcher), and
reads ``hookSpecificOutput.permissionDecision`` from the reply:

- **Bash, refused by the shell gate** (:func:`noetic.tools.shellgate.check_command`, the same
  policy as Noetic's own agent, with the project as the workspace and the hook's ``CDPATH`` as
  the shell's): ``deny``, the reason naming each rule, what the gate found (where a path lands,
  what it could not determine) and the part of the command that broke it. Claude reads the
  reason. A command the gate cannot parse is refused, as in the agent.
- **Bash, irreversible** (:mod:`noetic.hosts.irreversible`: pushes, publishes, deploys,
  migrations, deletions outside the workspace): while this Claude session's open task has no
  CHECK, or its latest CHECK did not decide PROCEED, the answer is ``[gate] irreversible``:
  ``ask`` (the default: the person decides), ``deny`` (the agent is told to investigate and run
  CHECK), or ``allow`` (no hold). The reason quotes the CHECK: its decision, its weakest
  vectors and the confidence against the threshold.
- **Write/Edit/MultiEdit to a protected path** (the policy's write rules: git hooks and config,
  ``.noetic/``, the shell's start-up files, history files): ``deny``.
- Anything else, and an irreversible command after a CHECK that says PROCEED: no answer, so
  Claude Code's own permission rules decide as they would without Noetic (a hook's ``allow``
  would skip them).

Settings, in the store's ``config.toml``::

    [gate]
    irreversible = "ask"                    # ask | deny | allow
    policy = ["shell-policy.yaml"]          # the shell gate's policy files (beside config.toml)
    irreversible_rules = ["irreversible.yaml"]

``$NOETIC_SHELL_POLICY`` names one more policy file, as for the agent.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError

MODES = ("ask", "deny", "allow")
WRITERS = ("Write", "Edit", "MultiEdit")
SHOWN_GAPS = 3


def decision(kind: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": kind,
            "permissionDecisionReason": reason,
        }
    }


def gate_settings(home: Path) -> dict[str, Any]:
    """``[gate]`` from the store's configuration, checked."""
    from noetic.hosts.outcomes import read_config

    table = read_config(home).get("gate", {})
    if not isinstance(table, dict):
        raise InvalidValueError(f"{home / 'config.toml'}: [gate] must be a table", field="gate")
    mode = table.get("irreversible", "ask")
    if mode not in MODES:
        raise InvalidValueError(
            f"{home / 'config.toml'}: [gate] irreversible must be ask, deny or allow",
            field="irreversible",
            value=mode,
        )
    return {
        "irreversible": mode,
        "policy": _paths(home, table, "policy"),
        "irreversible_rules": _paths(home, table, "irreversible_rules"),
    }


def _paths(home: Path, table: dict[str, Any], key: str) -> list[Path]:
    value = table.get(key, [])
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidValueError(
            f"{home / 'config.toml'}: [gate] {key} must be a list of file names", field=key
        )
    return [(home / v).expanduser() if not os.path.isabs(v) else Path(v) for v in value]


def pre_tool_use(location: Any, payload: dict[str, Any]) -> dict[str, Any] | None:
    """The reply to one PreToolUse event (None: no objection). The store is opened only for
    an irreversible command; a project without a store still has the shell gate."""
    from noetic.hosts.hooks import project_dir, workspace_of
    from noetic.tools.shellgate import load_policy

    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if tool not in ("Bash", *WRITERS) or not isinstance(tool_input, dict):
        return None
    home = location.home
    settings = gate_settings(home) if (home / "config.toml").exists() else _defaults()
    extra = settings["policy"]
    env = os.environ.get("NOETIC_SHELL_POLICY")
    policy = load_policy(*extra, *([Path(env)] if env else []))
    workspace = str(workspace_of(payload))
    user_home = os.path.realpath(os.path.expanduser("~"))
    if tool in WRITERS:
        return _protected(tool_input, policy, workspace, user_home, project_dir(payload))
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None
    from noetic.tools.shellgate import check_command

    cwd = str(project_dir(payload))
    # the shell that runs the command inherits this CDPATH: `cd NAME` may land outside
    verdict = check_command(
        command, workspace, policy, home=user_home, cwd=cwd, cdpath=os.environ.get("CDPATH")
    )
    if not verdict.allowed:
        return decision("deny", refusal(verdict))
    if settings["irreversible"] == "allow":
        return None
    from noetic.hosts.irreversible import irreversible, load_rules

    rules = load_rules(*settings["irreversible_rules"])
    effects = irreversible(command, workspace=workspace, cwd=cwd, home=user_home, rules=rules)
    if not effects:
        return None
    held = _held(location, payload, effects)
    if held is None:
        return None
    return decision(settings["irreversible"], held)


def _held(location: Any, payload: dict[str, Any], effects: list[str]) -> str | None:
    from noetic.hosts.hooks import current_session, open_tracker

    if not location.exists:
        return hold(None, None, effects)
    tracker = open_tracker(location.home)
    try:
        return hold(tracker, current_session(tracker, payload), effects)
    finally:
        tracker.store.close()


def _defaults() -> dict[str, Any]:
    return {"irreversible": "ask", "policy": [], "irreversible_rules": []}


def refusal(verdict: Any) -> str:
    """The shell gate's verdict as the reason Claude reads: each rule, why, what the gate found
    there (where a path lands, what it could not determine) and the part."""
    parts = [
        f"{v.rule}: {v.reason}{f' — {v.detail}' if v.detail else ''} (at `{v.part}`)"
        for v in verdict.violations
    ]
    return (
        "Noetic's shell gate refused this command — "
        + "; ".join(parts)
        + ". Do it another way that stays inside the project, or ask the user to run it."
    )


def _protected(
    tool_input: dict[str, Any], policy: Any, workspace: str, home: str, cwd: Path
) -> dict[str, Any] | None:
    from noetic.tools.shellgate.gate import write_refusal

    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    real = os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    refused = write_refusal(policy, real, workspace=workspace, home=home)
    if refused is None:
        return None
    return decision(
        "deny",
        f"Noetic refused this write: {refused.rule}: {refused.reason} (at `{path}`). "
        "These files change what runs later outside this session; ask the user to edit them.",
    )


def hold(tracker: Any, sid: str | None, effects: list[str]) -> str | None:
    """Why an irreversible command waits, or None when the open task's latest CHECK said
    PROCEED."""
    from noetic.assessment import Action, Phase

    what = "; ".join(effects)
    head = f"Noetic's epistemic gate: this command is irreversible ({what})."
    cascade = tracker.store.open_cascade_of(sid) if sid is not None else None
    if cascade is None:
        return (
            f"{head} No Noetic task is open for this session: record a PREFLIGHT for the task "
            "(execute_preflight, submit_preflight_assessment), investigate, then run CHECK; "
            "run the command once CHECK says PROCEED."
        )
    checks = [
        a
        for a in tracker.store.assessments(cascade_id=cascade.id)
        if a.assessment.phase == Phase.CHECK
    ]
    if not checks:
        return (
            f"{head} The task {cascade.task!r} has no CHECK yet: run CHECK (execute_check, "
            "submit_check_assessment) with what you now know; run the command once it says "
            "PROCEED."
        )
    last = checks[-1]
    if last.decision.action == Action.PROCEED:
        return None
    return f"{head} {check_summary(last)} — investigate, then run CHECK again."


def check_summary(record: Any) -> str:
    """``CHECK says INVESTIGATE: know 0.45, context 0.40 (confidence 0.52, threshold 0.70)``."""
    d = record.decision
    vectors = record.assessment.vectors
    weak = ", ".join(
        f"{name} {vectors[name]:.2f}" for name in d.gaps[:SHOWN_GAPS] if name in vectors
    )
    line = f"CHECK says {d.action.value}"
    if weak:
        line += f": {weak}"
    threshold = f", threshold {d.threshold:.2f}" if d.threshold is not None else ""
    cal = getattr(d, "calibrated", None)
    if cal is not None:  # the CHECK compared what the statement has meant (a map in force)
        said = f"stated {cal.stated:.2f}, calibrated {cal.value:.2f} from {cal.outcomes} outcomes"
        return line + f" ({said}{threshold})"
    return line + f" (confidence {d.confidence:.2f}{threshold})"
