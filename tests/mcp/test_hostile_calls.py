"""Hostile calls to the MCP server through the real client: bounded, off the event loop, timed."""

import asyncio
import threading

import pytest

from mcp import Client
from noetic.mcp import cli_bridge, tool_calls

from ._client import call, err, ok


def test_a_huge_command_line_is_refused_by_its_limit_before_it_is_split(server):
    long, huge = call(
        server,
        ("execute_cli_command", {"command": "state " + "'a" * 5_000}),
        ("execute_cli_command", {"command": "state " + "'a" * 1_000_000}),
    )
    assert "command_chars" in err(long) and "8,192" in err(long)
    assert "text_chars" in err(huge)  # every text argument is bounded before the tool runs


def test_a_huge_help_request_is_refused_too(server):
    (result,) = call(server, ("cli_help", {"command": "x" * 10_000}))
    assert "command_chars" in err(result)


@pytest.mark.subprocess
def test_one_clients_blocking_work_does_not_hold_up_anothers_call(server, monkeypatch):
    """The CLI bridge blocks (here: until released) on a worker thread; meanwhile a second
    client's call completes. Were the work on the event loop, the second call could not."""
    entered, release = threading.Event(), threading.Event()
    real = cli_bridge.parse_command

    def blocking(command):
        entered.set()
        release.wait(30)
        return real(command)

    monkeypatch.setattr(cli_bridge, "parse_command", blocking)

    async def go():
        async with Client(server) as slow, Client(server) as quick:
            first = asyncio.create_task(
                slow.call_tool("execute_cli_command", {"command": "sessions list"})
            )
            await asyncio.to_thread(entered.wait, 10)
            second = await asyncio.wait_for(quick.call_tool("get_workflow_guidance", {}), 10)
            finished_first = first.done()
            release.set()
            return finished_first, second, await first

    finished_first, second, first = asyncio.run(go())
    assert not finished_first
    assert "PREFLIGHT" in ok(second)["text"]
    assert ok(first)["exit_code"] == 0


@pytest.mark.slow
def test_a_tool_over_its_time_limit_returns_an_error_and_the_server_goes_on(server, monkeypatch):
    release = threading.Event()
    real = cli_bridge.parse_command

    def stuck(command):
        release.wait(30)
        return real(command)

    monkeypatch.setattr(cli_bridge, "parse_command", stuck)
    monkeypatch.setattr(tool_calls, "TOOL_TIMEOUT_S", 0.5)
    try:
        timed_out, after = call(
            server,
            ("execute_cli_command", {"command": "sessions list"}),
            ("get_epistemic_state", {}),
        )
    finally:
        release.set()
    assert "took longer than 0.5 s" in err(timed_out)
    assert "no current session" in err(after)  # answered: the server is still serving


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("bootstrap_session", {"ai_id": "a\x00b"}, "control character U+0000"),
        ("execute_preflight", {"task": "t" * 70_000}, "text_chars"),
        ("execute_cli_command", {"command": "state\udcff"}, "not valid UTF-8"),
    ],
)
@pytest.mark.subprocess
def test_bad_arguments_are_refused_with_a_named_problem(server, tool, args, message):
    boot, result = call(server, ("bootstrap_session", {}), (tool, args))
    ok(boot)
    assert message in err(result)
