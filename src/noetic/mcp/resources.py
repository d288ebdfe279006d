"""Resources (sessions and profiles, as JSON) and the workflow-guidance prompt.

Resources are what a client may read without acting: the recent sessions, one session in full
(the same document ``noetic sessions export`` writes), and the profiles.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ResourceNotFoundError
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from noetic.errors import NoeticError, NotFoundError
from noetic.mcp import guidance
from noetic.mcp.state import ServerState

JSON = "application/json"


@contextmanager
def _resource_errors() -> Iterator[None]:
    """An unknown id is "not found" to the client, with Noetic's message naming the fix."""
    try:
        yield
    except NotFoundError as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    except NoeticError as exc:
        raise ResourceError(str(exc)) from exc


def register_resources(server: MCPServer, n: ServerState) -> None:
    """Add the resources and the prompt to ``server``."""
    # the store and the profiles are opened on first use, not while the server starts

    @server.resource(
        "noetic://sessions", description="The 50 most recent sessions.", mime_type=JSON
    )
    async def sessions() -> str:
        with _resource_errors():
            return json.dumps([s.model_dump(mode="json") for s in n.store.list_sessions(limit=50)])

    @server.resource(
        "noetic://sessions/{session_id}",
        description="One session in full: tasks, every assessment and decision, events.",
        mime_type=JSON,
    )
    async def session(session_id: str) -> str:
        with _resource_errors():
            return json.dumps(n.store.export_session(session_id))

    @server.resource(
        "noetic://profiles", description="Every profile, built-in and yours.", mime_type=JSON
    )
    async def profiles() -> str:
        with _resource_errors():
            registry = n.tracker.registry
            return json.dumps([registry.get(p).model_dump(mode="json") for p in registry.names()])

    @server.resource(
        "noetic://profiles/{name}",
        description="One profile: thresholds, tuning, investigation limits.",
        mime_type=JSON,
    )
    async def profile(name: str) -> str:
        with _resource_errors():
            return json.dumps(n.tracker.registry.get(name).model_dump(mode="json"))

    @server.prompt(
        name="workflow_guidance",
        description="How to work through a task with Noetic; optionally one phase "
        "(bootstrap, preflight, investigate, check, act, postflight, outcome).",
    )
    async def workflow_guidance(phase: str | None = None) -> str:
        if phase:
            try:
                return guidance.workflow_guidance(phase)
            except NoeticError as exc:
                raise MCPError(code=INVALID_PARAMS, message=str(exc)) from exc
        return guidance.INTRODUCTION + "\n\n" + guidance.workflow_guidance()
