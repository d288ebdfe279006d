"""Each MCP tool is a module-level function: callable alone, with a server state of its own."""

import asyncio
import inspect

import pytest

from noetic.errors import ValidationError
from noetic.mcp import tools
from noetic.mcp.state import ServerState
from noetic.mcp.tool_calls import bind

from ..conftest import uniform


@pytest.mark.subprocess
def test_the_workflow_through_the_tool_functions_alone(tmp_path):
    n = ServerState(tmp_path / "store", workspace=tmp_path)

    async def flow():
        boot = await tools.bootstrap_session(n, ai_id="solo")
        prompt = await tools.execute_preflight(n, task="fix the parser")
        pre = await tools.submit_preflight_assessment(n, uniform(0.8))  # the task from above
        post = await tools.submit_postflight_assessment(n, uniform(0.9))
        return boot, prompt, pre, post

    boot, prompt, pre, post = asyncio.run(flow())
    assert prompt.session_id == boot.session.id and "fix the parser" in prompt.prompt
    assert pre.phase == "preflight" and pre.decision.action.value == "PROCEED"
    assert post.calibration.delta["know"] == pytest.approx(0.1)
    assert n.store.get_cascade(post.cascade_id).status == "completed"


def test_tool_checks_hold_without_the_server(tmp_path):
    n = ServerState(tmp_path / "store", workspace=tmp_path)
    with pytest.raises(ValidationError, match="limit must be between 1 and 100"):
        asyncio.run(tools.resume_previous_session(n, limit=0))


def test_the_table_names_every_tool_once_and_binding_hides_the_server_argument(tmp_path):
    names = [fn.__name__ for fn in tools.TOOLS]
    assert len(names) == len(set(names)) == 25
    bound = bind(tools.get_workflow_guidance, ServerState(tmp_path / "s", workspace=tmp_path))
    assert list(inspect.signature(bound).parameters) == ["phase"]
    assert "CHECK" in asyncio.run(bound(phase="check")).text
