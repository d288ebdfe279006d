"""The epistemic gate on irreversible actions (beyond the seed).

With ``epistemic`` on, a run is wrapped in CASCADE (a PREFLIGHT before triage, each tool call an
investigation round, a POSTFLIGHT after synthesize), and an allowed action that cannot be undone
is held until a CHECK the model writes with what the run has found clears it, or a person says
yes, as ``approve`` decides (``docs/agent.md``). A held action is answered to the model as a
refused call that says why and what would clear it.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from noetic.assessment import Action, Phase
from noetic.errors import NoeticError, UsageError
from noetic.llm.assessment_reply import assess_with_model
from noetic.llm.base import ToolCall
from noetic.tools.file_tools import SandboxRoot
from noetic.tools.shellgate import Policy
from noetic.tools.shellgate.irreversible_effects import effects

Approve = Literal["ask", "never", "always"]
Asker = Callable[[str], Awaitable[bool]]


def irreversible(
    call: ToolCall, root: SandboxRoot, scratch: str | None, policy: Policy
) -> str | None:
    """What ``call`` would change for good, or None for a call that can be undone."""
    args = call.arguments
    if call.name in ("file_write", "file_edit"):
        path = str(args.get("path", ""))
        try:
            real, _ = root.locate(path)
        except NoeticError:
            return None  # the tool refuses it anyway
        if scratch and _inside(real, os.path.join(root.root, scratch)):
            return None
        if call.name == "file_edit":
            return f"edits {path}"
        return f"overwrites {path}" if os.path.exists(real) else f"writes {path}"
    if call.name == "shell":
        try:
            cwd, _ = root.locate(str(args.get("cwd", ".")))
        except NoeticError:
            return None
        found = effects(str(args.get("command", "")), root.root, policy, cwd=cwd)
        return "; ".join(found) or None
    return None


def _inside(path: str, folder: str) -> bool:
    folder = os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip("/") + "/")


class EpistemicGate:
    """CASCADE around one agent run, and the hold on irreversible actions."""

    def __init__(self, approve: Approve = "never", ask: Asker | None = None) -> None:
        if approve not in ("ask", "never", "always"):
            raise UsageError(f"unknown approval {approve!r}", fix="use ask, never or always")
        self.approve = approve
        self.ask = ask
        self.checks = 0
        self.held = 0

    def _session(self, run: Any) -> str:
        if run.ctx.session_id is None:
            session, _ = run.ctx.tracker.bootstrap(ai_id=f"agent:{run.settings.name}")
            run.ctx.session_id = session.id
        return str(run.ctx.session_id)

    async def preflight(self, run: Any) -> None:
        session = self._session(run)
        profile = run.ctx.tracker.profile_of(run.ctx.store.get_session(session))
        record = run.ctx.tracker.record_for(session)
        assessment = await assess_with_model(
            run.model, run.state.query, Phase.PREFLIGHT, profile, record=record
        )
        recorded = run.ctx.tracker.preflight(
            session, run.state.query, assessment, abandon_open=True
        )
        run.ctx.start_task(recorded.cascade.id)

    def investigated(self, run: Any, call: ToolCall, ok: bool, content: str) -> None:
        note = f"{call.name}: {'ok' if ok else 'failed'}: {content[:200]}"
        run.ctx.tracker.investigate(str(run.ctx.session_id), note, tool=call.name, success=ok)

    async def allow(self, run: Any, call: ToolCall, effect: str) -> str | None:
        """None to let the action run, else the refusal the model reads."""
        if self.approve == "always":
            return None if await self._asked(run, effect) else self._refused(run, effect, None)
        session = str(run.ctx.session_id)
        task, profile, previous = run.ctx.tracker.context_for(session, Phase.CHECK)
        findings = "\n".join(run.state.workspace.observations[-20:])
        findings += f"\nThe next action would be irreversible: it {effect}."
        record = run.ctx.tracker.record_for(session)
        assessment = await assess_with_model(
            run.model, task, Phase.CHECK, profile, previous, findings=findings, record=record
        )
        recorded = run.ctx.tracker.check(session, assessment)
        self.checks += 1
        decision = recorded.decision
        if decision.action == Action.PROCEED:
            return None
        if self.approve == "ask" and await self._asked(run, effect, decision.confidence):
            return None
        return self._refused(run, effect, decision)

    async def _asked(self, run: Any, effect: str, confidence: float | None = None) -> bool:
        if self.ask is None:
            return False
        sure = f" (CHECK confidence {confidence:.2f})" if confidence is not None else ""
        yes = await self.ask(f"The agent wants to do something irreversible: it {effect}{sure}.")
        run.decide(
            "approved" if yes else "denied",
            f"a person {'approved' if yes else 'denied'}: {effect}",
            "approval",
        )
        return yes

    def _refused(self, run: Any, effect: str, decision: Any) -> str:
        self.held += 1
        if decision is None:
            why = "a person did not approve it"
        else:
            threshold = decision.threshold if decision.threshold is not None else "the threshold"
            why = (
                f"CHECK gave {decision.action.value} (confidence {decision.confidence:.2f}, "
                f"threshold {threshold}; gaps: {', '.join(decision.gaps) or 'none'})"
            )
        run.decide("hold", f"irreversible action held: it {effect}; {why}", "epistemic-gate")
        return (
            f"held: this action is irreversible (it {effect}) and {why}. Investigate further "
            "with reading tools, or choose a reversible way, then try again."
        )

    async def postflight(self, run: Any) -> None:
        session = str(run.ctx.session_id)
        task, profile, previous = run.ctx.tracker.context_for(session, Phase.POSTFLIGHT)
        findings = (run.state.execution.response or "")[:2000]
        assessment = await assess_with_model(
            run.model,
            task,
            Phase.POSTFLIGHT,
            profile,
            previous,
            findings=findings,
            review=profile.postflight_review,
        )
        run.ctx.tracker.postflight(session, assessment)
        run.decide("postflight", "task closed")
