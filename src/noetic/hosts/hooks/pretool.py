"""``noetic hook pre-tool-use``: the shell gate and the epistemic gate in front of Claude Code's
tools.

Claude Code asks before each Bash, Write, Edit and MultiEdit call (the hook's matcher), and
reads ``hookSpecificOutput.permissionDecision`` from the reply: ``deny`` for what the shell
gate refuses (:func:`noetic.tools.shellgate.check_command`, the agent's policy with the project
as the workspace) and for a write to a protected path; ``[gate] irreversible`` (ask, deny or
allow) for an irreversible command (:mod:`noetic.hosts.hooks.irreversible`) while the open
task's latest CHECK has not said PROCEED; ``ask`` (``deny`` under ``irreversible = "deny"``) for
a write to the protected set (:mod:`noetic.tools.shellgate.protected`), whatever CHECK says.
Anything else gets no answer, so Claude Code's own permission rules decide (a hook's ``allow``
would skip them). The table, the settings and the rules files are in ``docs/claude-code.md``.

The store and its configuration are the project root's
(:func:`noetic.hosts.hooks.shared.project_root`), never a ``.noetic`` the agent made below it;
anything that fails on the way — a ``config.toml`` or policy that cannot be read, a store that
does not open — is answered ``deny`` naming it (:func:`guarded_pre_tool_use`).
"""

from __future__ import annotations

import os
from pathlib import Path

from noetic.hosts.hooks.shared import (
    agent_key,
    locate,
    log_failure,
    outside_project,
    project_dir,
    project_root,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.config import GateConfig

WRITERS = ("Write", "Edit", "MultiEdit")
GATED = ("Bash", *WRITERS)
SHOWN_GAPS = 3


def decision(kind: str, reason: str) -> dict[str, Any]:
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": kind,
            "permissionDecisionReason": reason,
        }
    }


def failed(error: BaseException) -> dict[str, Any]:
    """The answer when the gate cannot decide: ``deny``, naming what failed (a configuration or
    policy file that cannot be read names the file)."""
    from noetic.errors import error_name

    what = " ".join(str(error).split())
    return decision(
        "deny",
        f"Noetic's gate could not decide, so it refuses: {error_name(error)}: {what}. "
        "Ask the user to fix it; the error is also in the store's hooks.log.",
    )


def policy_files(gate: GateConfig) -> list[Path]:
    """The shell gate's policy files: ``[gate] policy``, then ``$NOETIC_SHELL_POLICY``."""
    env = os.environ.get("NOETIC_SHELL_POLICY")
    return [*gate.policy, *([Path(env)] if env else [])]


def guarded_pre_tool_use(
    payload: dict[str, Any], *, store: Path | None = None, project: Path | None = None
) -> dict[str, Any] | None:
    """:func:`pre_tool_use`, failing closed: any error (a ``config.toml`` or policy file that
    cannot be read, a store that does not open) is logged and answered ``deny`` naming it, and
    an http hook whose ``cwd`` lies outside the server's ``project`` is denied."""
    if payload.get("tool_name") not in GATED:
        return None
    refused = outside_project(payload, project) if project is not None else None
    if refused is not None:
        return decision(
            "deny", f"Noetic refused this call: {refused}; it answers for that project only."
        )
    try:
        return pre_tool_use(locate(payload, store, project), payload, project)
    except Exception as exc:  # an error the agent can cause must not open the gate
        log_failure("pre-tool-use", payload, store, exc, project)
        return failed(exc)


def pre_tool_use(
    location: Any, payload: dict[str, Any], project: Path | None = None
) -> dict[str, Any] | None:
    """The reply to one PreToolUse event (None: no objection). The store is opened only for
    an irreversible command; a project without a store still has the shell gate."""
    from noetic.tools.shellgate.policy import load_policy
    from noetic.tools.shellgate.protected import protected_set, with_rule

    tool = payload.get("tool_name")
    tool_input = payload.get("tool_input")
    if tool not in GATED or not isinstance(tool_input, dict):
        return None
    from noetic.config import load

    home = location.home
    settings = load(home).gate
    files = policy_files(settings)
    policy = load_policy(*files)
    workspace = str(project_root(payload, project))
    user_home = os.path.realpath(os.path.expanduser("~"))
    # the gate's own files are protected wherever they are: the store's folder, the policy
    # and rules files it names, and the cache the built policy and git's answers are kept in
    from noetic.cached import cache_dir

    own = [str(home), *map(str, files), *map(str, settings.irreversible_rules), str(cache_dir())]
    protected = protected_set(
        workspace,
        home=user_home,
        extra=(*settings.protected, *(f"{os.path.realpath(f)}/**" for f in own)),
    )
    policy = with_rule(policy, protected)
    cwd = project_dir(payload)
    if tool in WRITERS:
        return _protected(tool_input, policy, settings, protected, cwd)
    command = tool_input.get("command")
    if not isinstance(command, str):
        return None
    from noetic.tools.shellgate.gate import check_command
    from noetic.tools.shellgate.protected import RULE, planted

    # the shell that runs the command inherits this CDPATH: `cd NAME` may land outside
    verdict = check_command(
        command, workspace, policy, home=user_home, cwd=str(cwd), cdpath=os.environ.get("CDPATH")
    )
    refused = [v for v in verdict.violations if v.rule != RULE]
    if refused:
        return decision("deny", refusal(refused))
    from noetic.hosts.hooks.irreversible import irreversible, load_rules

    rules = load_rules(*settings.irreversible_rules)
    found = irreversible(command, workspace=workspace, cwd=str(cwd), home=user_home, rules=rules)
    written = [v.detail.removeprefix("it names ") for v in verdict.violations if v.rule == RULE]
    written += [p for p in planted(command, protected, policy, cwd=str(cwd)) if p not in written]
    always = [e for e in found if e.always]
    if written or always:
        return decision(_held_mode(settings), plants(written, always, protected))
    if settings.irreversible == "allow" or not found:
        return None
    held = _held(location, payload, [str(e) for e in found])
    if held is None:
        return None
    return decision(settings.irreversible, held)


def _held_mode(settings: GateConfig) -> str:
    """A write to the protected set waits for the person (``ask``), or is refused when
    ``[gate] irreversible = "deny"``; ``allow`` does not let it through silently."""
    return "deny" if settings.irreversible == "deny" else "ask"


def plants(written: list[str], always: list[Any], protected: Any) -> str:
    """Why a command that writes the protected set waits: each file and what runs it."""
    parts = [f"{path} ({protected.why(path)})" for path in written]
    parts += [str(e) for e in always]
    return (
        "Noetic's gate holds this command: it changes what the developer's own tools run later, "
        "outside the sandbox and the gate — " + "; ".join(parts) + ". The person decides; "
        "Noetic's CHECK does not release this hold."
    )


def _held(location: Any, payload: dict[str, Any], effects: list[str]) -> str | None:
    from noetic.runtime.opening import open_tracker, remembered_session

    if not location.exists:
        return hold(None, None, effects)
    tracker = open_tracker(location.home, create=True)
    with tracker.store:
        return hold(tracker, remembered_session(tracker.store, agent_key(payload)), effects)


def refusal(violations: Any) -> str:
    """The shell gate's violations as the reason Claude reads: each rule, why, what the gate
    found there (where a path lands, what it could not determine) and the part."""
    parts = [
        f"{v.rule}: {v.reason}{f' — {v.detail}' if v.detail else ''} (at `{v.part}`)"
        for v in violations
    ]
    return (
        "Noetic's shell gate refused this command — "
        + "; ".join(parts)
        + ". Do it another way that stays inside the project, or ask the user to run it."
    )


def _protected(
    tool_input: dict[str, Any],
    policy: Any,
    settings: GateConfig,
    protected: Any,
    cwd: Path,
) -> dict[str, Any] | None:
    """A Write or Edit: refused where the policy's write rules say so; held for the person
    where it changes the protected set, as the file is named (a link's own entry) or where it
    leads."""
    from noetic.tools.shellgate.protected import RULE, entry_path
    from noetic.tools.shellgate.write_rules import write_refusal

    path = tool_input.get("file_path")
    if not isinstance(path, str) or not path:
        return None
    workspace, home = protected.workspace, protected.home
    real = os.path.realpath(path if os.path.isabs(path) else os.path.join(cwd, path))
    named = entry_path(path, str(cwd))
    refused = [
        r
        for r in (write_refusal(policy, p, workspace=workspace, home=home) for p in (real, named))
        if r is not None
    ]
    hard = next((r for r in refused if r.rule != RULE), None)
    if hard is not None:
        return decision(
            "deny",
            f"Noetic refused this write: {hard.rule}: {hard.reason} (at `{path}`). "
            "These files change what runs later outside this session; ask the user to edit them.",
        )
    if not refused:
        return None
    target = named if protected.covers(named) else real
    return decision(_held_mode(settings), plants([target], [], protected))


def hold(tracker: Any, sid: str | None, effects: list[str]) -> str | None:
    """Why an irreversible command waits, or None when the open task's latest CHECK said
    PROCEED."""
    what = "; ".join(effects)
    head = f"Noetic's epistemic gate: this command is irreversible ({what})."
    cascade = tracker.store.open_cascade_of(sid) if sid is not None else None
    if cascade is None:
        return (
            f"{head} No Noetic task is open for this session: record a PREFLIGHT for the task "
            "(execute_preflight, submit_preflight_assessment), investigate, then run CHECK; "
            "run the command once CHECK says PROCEED."
        )
    from noetic.assessment import Action, Phase

    records = tracker.store.assessments(cascade_id=cascade.id)
    last = next((a for a in reversed(records) if a.assessment.phase == Phase.CHECK), None)
    if last is None:
        return (
            f"{head} The task {cascade.task!r} has no CHECK yet: run CHECK (execute_check, "
            "submit_check_assessment) with what you now know; run the command once it says "
            "PROCEED."
        )
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
