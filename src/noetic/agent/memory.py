"""The agent's memory: the user's profile and the task's workspace, in the store.

The workspace is saved after every step, whether or not profiles are kept
(:meth:`AgentMemory.save_workspace`), so a task killed mid-run resumes from what it had learned.
The profile is read at the start of a run and updated after it, in the background, by the model,
when a trigger fires:

* ``every`` — every N interactions (5 by default);
* ``session`` — the first interaction of a new session;
* ``high-value`` — a run that used several tools or went deep.

Between syntheses only the interaction count changes. A synthesis that fails (the model is down,
its reply unusable) is reported as an event and leaves the profile as it was.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from noetic.agent import prompts
from noetic.agent.state import State, UserProfile, Workspace
from noetic.errors import NoeticError
from noetic.events import DecisionMade, EventKind
from noetic.llm.base import Message, Request
from noetic.llm.structured import complete_structured
from noetic.store import agent_memory as tables
from noetic.store.base import BaseStore as Store

HIGH_VALUE_TOOL_CALLS = 3


class AgentMemory:
    def __init__(
        self,
        store: Store,
        *,
        profiles: bool = True,
        every: int = 5,
        background: set[asyncio.Task[Any]] | None = None,
    ) -> None:
        self.store = store
        self.profiles = profiles
        self.every = every
        self.background = background if background is not None else set()
        self.syntheses = 0

    def profile(self, user_id: str) -> UserProfile:
        if not self.profiles:
            return UserProfile(user_id=user_id)
        data = tables.load_profile(self.store, user_id)
        if not data or set(data) == {"user_id"}:
            return UserProfile(user_id=user_id)
        return UserProfile.model_validate({**data, "user_id": user_id})

    def save_workspace(self, state: State, status: str | None = None) -> None:
        ex = state.execution
        final = status or ("running" if ex.response is None else (ex.stop_reason or "done"))
        tables.save_workspace(
            self.store,
            state.task_id,
            state.user_id,
            state.query,
            final,
            state.workspace.model_dump(mode="json"),
        )

    def forget_user(self, user_id: str) -> list[str]:
        """Delete what the agent keeps about ``user_id``: the profile and every workspace of
        theirs, the rows really gone (see :mod:`noetic.store.agent_memory`). The task ids."""
        return tables.delete_user(self.store, user_id)

    def forget_task(self, task_id: str) -> str:
        """Delete one task's workspace (a unique id prefix is enough); the id deleted."""
        return tables.delete_workspace(self.store, task_id)

    def load_task(self, task_id: str) -> tuple[State, str]:
        """A saved task's state (its workspace restored) and its status."""
        found, user, query, status, data = tables.load_workspace(self.store, task_id)
        state = State(
            query=query, user_id=user, task_id=found, workspace=Workspace.model_validate(data)
        )
        return state, status

    def triggers(self, profile: UserProfile, session_id: str | None, state: State) -> list[str]:
        fired = []
        if profile.interaction_count % self.every == 0:
            fired.append("every")
        if session_id is not None and profile.last_session not in (None, session_id):
            fired.append("session")
        if (
            len(state.execution.completed_calls) >= HIGH_VALUE_TOOL_CALLS
            or state.execution.depth == "deep"
        ):
            fired.append("high-value")
        return fired

    async def after_run(self, run: Any) -> None:
        """Count the interaction, and synthesize the profile when a trigger fires."""
        if not self.profiles:
            return
        state: State = run.state
        profile = self.profile(state.user_id)
        profile.interaction_count += 1
        fired = self.triggers(profile, run.ctx.session_id, state)
        profile.last_session = run.ctx.session_id or profile.last_session
        if fired and run.status not in ("refused", "failed"):
            run.ctx.emit(
                EventKind.DECISION,
                DecisionMade(action="memory:synthesize", reason=", ".join(fired), rule=fired[0]),
            )
            try:
                update = await complete_structured(
                    run.ctx.model, self._request(profile, state), prompts.ProfileUpdate
                )
            except NoeticError as exc:
                run.ctx.emit(
                    EventKind.DECISION,
                    DecisionMade(action="memory:failed", reason=str(exc)[:300], rule=fired[0]),
                )
            else:
                profile = profile.model_copy(update=update.model_dump())
                self.syntheses += 1
        profile.last_updated = datetime.now(UTC)
        tables.save_profile(self.store, state.user_id, profile.model_dump(mode="json"))

    def _request(self, profile: UserProfile, state: State) -> Request:
        current = profile.model_dump_json(
            include={"preferences", "goals", "expertise_areas", "communication_style", "projects"}
        )
        text = (
            f"Current profile: {current}\n\nThe user asked: {state.query}\n\n"
            f"The agent answered: {(state.execution.response or '')[:2000]}"
        )
        return Request(
            system=prompts.PROFILE_SYSTEM,
            messages=(Message(role="user", content=text),),
            max_tokens=1024,
        )
