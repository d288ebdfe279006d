"""The agent's memory: the user's profile and the task's workspace, in the store.

The workspace is saved after every step, whether or not profiles are kept
(:meth:`AgentMemory.save_workspace`), so a task killed mid-run resumes from what it had learned.
The profile is read at the start of a run and updated after every interaction, in the
background, by one model call: **learn** (what the user stated about themselves, merged in by
:func:`merge`) or, when a trigger fires (``every`` N interactions, a new ``session``, a
``high-value`` run), **consolidate** (the whole profile rewritten from the interactions since the
last consolidation). The triggers decide how often the model consolidates, never whether a
stated preference is kept; a failed call is reported as an event and changes nothing
(``docs/agent.md``).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

from noetic.agent import prompts
from noetic.agent.state import State, UserProfile, Workspace
from noetic.errors import NoeticError
from noetic.llm.base import Request
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
        """Count the interaction, then learn from it, or consolidate when a trigger fires."""
        if not self.profiles:
            return
        state: State = run.state
        profile = self.profile(state.user_id)
        profile.interaction_count += 1
        fired = self.triggers(profile, run.ctx.session_id, state)
        profile.last_session = run.ctx.session_id or profile.last_session
        if run.status not in ("refused", "failed"):
            profile.unconsolidated = [*profile.unconsolidated, _exchange(state)][-MAX_KEPT:]
            rule = fired[0] if fired else "every-interaction"
            action = "memory:consolidate" if fired else "memory:learn"
            run.decide(action, ", ".join(fired) or "an interaction", rule)
            asked = self._consolidation(profile) if fired else self._learning(profile, state)
            try:
                update = await complete_structured(run.ctx.model, asked, prompts.ProfileUpdate)
            except NoeticError as exc:
                run.decide("memory:failed", str(exc)[:300], rule)
            else:
                if fired:
                    profile = profile.model_copy(
                        update={**update.model_dump(), "unconsolidated": []}
                    )
                else:
                    profile = merge(profile, update)
                    learned = update.named()
                    if learned:
                        run.decide("memory:learned", learned, rule)
        profile.last_updated = datetime.now(UTC)
        tables.save_profile(self.store, state.user_id, profile.model_dump(mode="json"))

    async def settle(self) -> None:
        """Wait for the memory work of earlier runs, so a new run reads what they learned."""
        while self.background:
            await asyncio.gather(*list(self.background), return_exceptions=True)

    def _learning(self, profile: UserProfile, state: State) -> Request:
        text = (
            f"Current profile: {_current(profile)}\n\nThe latest interaction:\n{_exchange(state)}"
        )
        return Request.of(text, system=prompts.LEARN_SYSTEM, max_tokens=1024)

    def _consolidation(self, profile: UserProfile) -> Request:
        turns = "\n\n".join(
            f"Interaction {i}:\n{turn}" for i, turn in enumerate(profile.unconsolidated, 1)
        )
        text = (
            f"Current profile: {_current(profile)}\n\nThe interactions since it was last "
            f"consolidated, oldest first:\n\n{turns}"
        )
        return Request.of(text, system=prompts.PROFILE_SYSTEM, max_tokens=1024)


MAX_KEPT = 50  # interactions kept for the next consolidation (the oldest go first)
MAX_LIST = 50  # goals or areas of expertise kept in a profile


def _current(profile: UserProfile) -> str:
    return profile.model_dump_json(
        include={"preferences", "goals", "expertise_areas", "communication_style", "projects"}
    )


def _exchange(state: State) -> str:
    return (
        f"The user said: {state.query[:2000]}\n"
        f"The agent answered: {(state.execution.response or '')[:2000]}"
    )


def merge(profile: UserProfile, learned: prompts.ProfileUpdate) -> UserProfile:
    """The profile with what the model learned from one interaction added: preferences and
    projects by name (a new value replaces the old), goals and expertise appended unless already
    there, the communication style replaced when one was stated. Deterministic; keeps the rest."""

    def union(old: list[str], new: list[str]) -> list[str]:
        seen = {o.casefold() for o in old}
        added = [n for n in dict.fromkeys(x.strip() for x in new) if n and n.casefold() not in seen]
        return [*old, *added][-MAX_LIST:]

    return profile.model_copy(
        update={
            "preferences": {**profile.preferences, **_named(learned.preferences)},
            "projects": {**profile.projects, **_named(learned.projects)},
            "goals": union(profile.goals, learned.goals),
            "expertise_areas": union(profile.expertise_areas, learned.expertise_areas),
            "communication_style": learned.communication_style.strip()
            or profile.communication_style,
        }
    )


def _named(values: dict[str, str]) -> dict[str, str]:
    return {k.strip(): v.strip() for k, v in values.items() if k.strip() and str(v).strip()}
