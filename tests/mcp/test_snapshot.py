"""The tool list and input schemas are deliberate: a rename or schema change fails here.

After an intended change, regenerate the snapshot:
    NOETIC_UPDATE_SNAPSHOT=1 pytest tests/mcp/test_snapshot.py
"""

import asyncio
import json
import os
from pathlib import Path

from mcp import Client

SNAPSHOT = Path(__file__).with_name("tools_snapshot.json")
SEED_TOOLS = {
    "bootstrap_session", "resume_previous_session", "get_session_summary",
    "get_epistemic_state", "execute_preflight", "submit_preflight_assessment", "execute_check",
    "submit_check_assessment", "execute_postflight", "submit_postflight_assessment",
    "get_calibration_report", "query_bayesian_beliefs", "check_drift_monitor",
    "query_goal_orchestrator", "get_empirica_introduction", "get_workflow_guidance", "cli_help",
    "execute_cli_command", "query_ai", "generate_goals", "create_cascade",
}  # fmt: skip


def current(server):
    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools

    return {t.name: t.input_schema for t in asyncio.run(go())}


def test_the_seed_tools_plus_outcome_recording(server):
    assert set(current(server)) == SEED_TOOLS | {
        "record_outcome", "observe", "nova_process", "evaluate"
    }  # fmt: skip


def test_tool_schemas_match_the_snapshot(server):
    tools = current(server)
    if os.environ.get("NOETIC_UPDATE_SNAPSHOT"):
        SNAPSHOT.write_text(json.dumps(tools, indent=2, sort_keys=True) + "\n")
    assert tools == json.loads(SNAPSHOT.read_text())


def test_every_tool_has_a_description_an_agent_can_act_on(server):
    async def go():
        async with Client(server) as client:
            return (await client.list_tools()).tools

    for tool in asyncio.run(go()):
        assert tool.description and len(tool.description) > 30, tool.name
