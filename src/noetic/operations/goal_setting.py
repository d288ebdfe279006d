"""Goals: the session's list, new goals in threshold mode or the seed's LLM mode, one goal.

The CLI (``noetic goals``) and the MCP tools (``query_goal_orchestrator``, ``generate_goals``)
call these and only render, so which session's profile sets the gap threshold is decided once.
Sync store work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from noetic.store.records import GoalRecord

if TYPE_CHECKING:
    from noetic.operations.runs import ProviderChoice
    from noetic.runtime.tracker import Tracker
    from noetic.store.base import BaseStore


def list_goals(store: BaseStore, session_id: str) -> list[GoalRecord]:
    """The session's goals in the order they were set. Sync."""
    return store.goals(session_id=store.get_session(session_id).id)


def generate_goals(tracker: Tracker, session_id: str) -> list[GoalRecord]:
    """Threshold mode: one new goal per vector under the session's profile's gap threshold in
    its latest assessment, weakest first; returns only the goals it added (none twice). Sync."""
    from noetic.cascade.goals import threshold_goals

    session = tracker.store.get_session(session_id)
    return threshold_goals(tracker.store, session.id, tracker.profile_of(session))


async def generate_model_goals(
    tracker: Tracker, session_id: str, *, provider: ProviderChoice = None
) -> list[GoalRecord]:
    """LLM mode: the model proposes goals for the gaps in the session's latest assessment;
    returns only the goals it added (none already open in the task). ``provider``: a provider
    string, a provider, a function giving one, or None for the configured one; the call is
    recorded with the session's model calls. Async."""
    from noetic.cascade.goals import model_goals
    from noetic.runtime.context import build_context

    session = tracker.store.get_session(session_id)
    given = provider() if callable(provider) else provider
    ctx = build_context(
        "cascade", tracker=tracker, provider=given, session_id=session.id, needs_model=True
    )
    return await model_goals(ctx.model, tracker.store, session.id, tracker.profile_of(session))


def get_goal(store: BaseStore, goal_id: str) -> GoalRecord:
    """One goal in full (an error naming the id when there is none). Sync."""
    return store.get_goal(goal_id)
