"""The CLI bridge runs each command in a child process: a command that would wait forever (a
FIFO given as a JUnit report) cannot stall another client, and a timeout really ends the work."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os

import anyio
import pytest

from mcp import Client
from noetic.errors import ValidationError
from noetic.mcp.cli_bridge import run_cli

from ..conftest import uniform
from ._client import call, ok


def _release(fifo) -> None:
    """Open the FIFO for writing and close it, so a reader stuck on it (the old bridge) ends."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@pytest.mark.subprocess
def test_a_fifo_junit_report_does_not_stall_another_clients_call(server, tmp_path) -> None:
    fifo = tmp_path / "report.xml"
    os.mkfifo(fifo)

    async def go():
        async with Client(server) as first, Client(server) as second:
            await first.call_tool("bootstrap_session", {"ai_id": "first"})
            with anyio.fail_after(60):
                return await asyncio.gather(
                    first.call_tool(
                        "execute_cli_command", {"command": f"outcome --from-junit {fifo}"}
                    ),
                    second.call_tool("execute_cli_command", {"command": "sessions list"}),
                )

    try:
        stuck, other = asyncio.run(go())
    finally:
        _release(fifo)
    refused = ok(stuck)
    assert refused["exit_code"] == 1
    message = refused["data"]["error"]["message"]
    assert str(fifo) in message and "FIFO" in message
    listed = ok(other)
    assert listed["exit_code"] == 0 and [s["ai_id"] for s in listed["data"]] == ["first"]


@pytest.mark.subprocess
def test_a_command_past_its_timeout_is_killed_and_its_work_never_lands(server, _isolated_home):
    (boot,) = call(server, ("bootstrap_session", {"ai_id": "slow"}))
    sid = ok(boot)["session"]["id"]
    scores = json.dumps(uniform(0.8))
    command = f"preflight 'never stored' --vectors {scores!r}"
    with pytest.raises(ValidationError, match="was stopped"):
        # far shorter than the interpreter takes to start: the child is killed mid-start
        run_cli(command, _isolated_home, session_id=sid, timeout_s=0.001)
    state = run_cli("state", _isolated_home, session_id=sid)
    assert state.exit_code == 0 and state.data["open_cascade"] is None
    done = run_cli(command, _isolated_home, session_id=sid)  # the same command, given time
    assert done.exit_code == 0
    assert run_cli("state", _isolated_home, session_id=sid).data["open_cascade"]["task"] == (
        "never stored"
    )
