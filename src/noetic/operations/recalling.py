"""Recall: which earlier tasks to bring into a new one, within a token budget.

Sync (store reads and a query embedding, tens of milliseconds warm): from async code, call it on
a thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from noetic.recall.selection import RecallResult
    from noetic.store.base import BaseStore


def recall(
    store: BaseStore | Callable[[], BaseStore],
    task: str,
    *,
    session_id: str | None = None,
    current: Callable[[BaseStore], str | None] | None = None,
    limit: int | None = None,
    budget: int | None = None,
    ai_id: str | None = None,
    own: bool = False,
    project: str | None = None,
    all_projects: bool = False,
    explain: bool = False,
    qdrant: str | None = None,
) -> RecallResult:
    """Earlier tasks relevant to ``task``: semantic match among every agent's tasks in the
    project of ``session_id`` (or ``project``, or every project; ``ai_id`` narrows it to that
    agent's tasks; ``own``: the caller's, as ``bootstrap --recall --own``), calibration-filtered,
    as much as the session's need asks,
    nothing when none is close enough; a context block ready for a prompt. ``qdrant``: a
    Qdrant backend (a local folder or a server URL) instead of the store's own index, opened
    first: ``store`` may be a function that opens the store, called after it, and ``current``
    one that gives the caller's current session in it (when ``session_id`` is not given)."""
    from noetic.recall.selection import recall_for_current_session

    if own:  # the caller's own tasks: the agent named, else $NOETIC_AI_ID, else the default
        import os

        from noetic.runtime.opening import agent_id

        ai_id = agent_id(ai_id or os.environ.get("NOETIC_AI_ID"))

    index = None
    if qdrant:
        from noetic.embeddings import recall_embedder
        from noetic.store.qdrant_index import QdrantIndex

        index = QdrantIndex(qdrant, recall_embedder().dimension)
    try:
        opened = store() if callable(store) else store
        if session_id is None and current is not None:
            session_id = current(opened)
        return recall_for_current_session(
            opened, task, session_id=session_id, limit=limit, budget=budget, ai_id=ai_id,
            project=project, all_projects=all_projects, index=index, explain=explain,
        )  # fmt: skip
    finally:
        if index is not None:
            index.close()
