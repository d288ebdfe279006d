"""``recall``: the agent's past tasks, through Noetic's recall (semantic and epistemic)."""

from __future__ import annotations

from noetic.errors import InvalidValueError
from noetic.recall.selection import recall_default
from noetic.store.base import BaseStore as Store
from noetic.tools.base import Tool, tool


def recall_tool(store: Store) -> Tool:
    """The ``recall`` tool over ``store``'s completed tasks, every project."""

    def recall(query: str) -> str:
        """Recall past tasks like this one: what was done, how confident it was, what was
        learned.

        Args:
            query: the task or question to find earlier work for
        """
        if not query.strip():
            raise InvalidValueError("the query is empty", field="query")
        found = recall_default(store, query, all_projects=True)
        if not found.context.strip():
            left = ", ".join(f"{k}: {v}" for k, v in found.left_out.items() if v)
            return (
                f"no past task matches ({found.considered} considered{'; ' + left if left else ''})"
            )
        return found.context

    return tool(recall, improves_vectors=("know", "context"), confidence_gain=0.1)
