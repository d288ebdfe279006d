"""`noetic mcp` as a host starts it: without typer, the store opened on first use, the same
options as the typer command, and a store that cannot be opened reported to the tool that
needs it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from noetic.cli import fast
from noetic.cli.application import build
from noetic.mcp.server import build_server

from .._modules import modules_loaded
from ._client import call, err, ok

NOETIC = str(Path(sys.executable).with_name("noetic"))
UNUSED_AT_START = (
    "typer",
    "rich",
    "numpy",
    "mcp.client",
    "noetic.mcp.tools",
    "noetic.store.sqlite",
)


def start_and_stop(args: list[str]) -> dict:
    """Run ``noetic ARGS`` with stdin at its end (an MCP server stops at once) and report
    which of :data:`UNUSED_AT_START` it loaded."""
    report = modules_loaded(args, UNUSED_AT_START)
    return {"code": report["code"], "loaded": report["loaded"]}


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_plain_noetic_mcp_starts_without_typer_the_store_or_the_tools_types(tmp_path):
    store = str(tmp_path / "store")
    first = start_and_stop(["mcp", "--store", store])  # generates the cached tool list
    assert first["code"] == 0 and "typer" not in first["loaded"]
    assert start_and_stop(["mcp", "--store", store]) == {"code": 0, "loaded": []}
    assert not (tmp_path / "store" / "noetic.db").exists()  # nothing asked for it


def test_the_fast_path_parses_mcp_as_typer_declares_it():
    """tests/cli/test_fast_path.py holds every fast-path command to typer's declaration; here,
    the command lines a host writes, and those left to typer."""
    command = typer.main.get_command(build("mcp")).commands["mcp"]  # type: ignore[attr-defined]
    for args in (["mcp"], ["mcp", "--store", "x"], ["mcp", "--store=x"]):
        with command.make_context("mcp", args[1:]) as ctx:
            expected = {k: v for k, v in ctx.params.items() if v is not None}
        assert fast.parse(args) == ("mcp", expected), args
    for args in (["mcp", "--help"], ["mcp", "--store"], ["mcp", "extra"], ["mcp", "--stor", "x"]):
        assert fast.parse(args) is None, args  # typer's help and errors


@pytest.mark.subprocess
def test_noetic_mcp_help_is_typers():
    out = subprocess.run([NOETIC, "mcp", "--help"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and "Serve MCP over stdio" in out.stdout and "--store" in out.stdout


def test_the_store_opens_on_first_use(tmp_path):
    home = tmp_path / "store"
    server = build_server(home)
    assert not home.exists()
    assert ok(call(server, ("bootstrap_session", {"ai_id": "late"}))[0])["session"]["ai_id"]
    assert (home / "noetic.db").exists()


def test_a_store_that_cannot_be_opened_is_an_error_naming_it_in_each_call(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    server = build_server(blocker / "store")  # the server starts and lists its tools
    results = call(
        server,
        ("bootstrap_session", {"ai_id": "x"}),
        ("get_empirica_introduction", {}),  # needs no store
        mode="legacy",
    )
    assert "cannot create the store directory" in err(results[0])
    assert str(blocker) in err(results[0])
    assert ok(results[1])["text"]


@pytest.mark.slow
@pytest.mark.subprocess
def test_stdio_start_to_tools_list_with_the_cached_list(tmp_path):
    """End to end over a pipe, as a host does: initialize, initialized, tools/list; stdin stays
    open until the answers are in (at its end the server stops, dropping what is in flight)."""
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ]  # fmt: skip
    listed = []
    for _ in range(2):  # without the cache, then with it
        proc = subprocess.Popen(
            [NOETIC, "mcp", "--store", str(tmp_path / "s")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        answers: dict[int, dict] = {}
        try:
            for message in messages:
                proc.stdin.write(json.dumps(message) + "\n")
                proc.stdin.flush()
            while 2 not in answers and (line := proc.stdout.readline()):
                message = json.loads(line)
                answers[message.get("id", 0)] = message
        finally:
            proc.stdin.close()
            proc.wait(timeout=60)
            proc.stdout.close()
        assert answers[1]["result"]["serverInfo"]["name"] == "noetic"
        listed.append(answers[2]["result"]["tools"])
    assert listed[0] == listed[1] and len(listed[0]) == 25


def test_the_collector_is_off_while_the_server_starts_and_on_while_it_serves(tmp_path, monkeypatch):
    import gc

    from noetic.cli import mcp_stdio
    from noetic.cli.exits import CommandExit
    from noetic.errors import StoreError
    from noetic.mcp import server as server_module

    seen = {}

    class Server:
        def run(self, transport):
            seen["serving"] = (transport, gc.isenabled())

    def build(home):
        seen["building"] = gc.isenabled()
        return Server()

    monkeypatch.setattr(server_module, "build_server", build)
    mcp_stdio.mcp(tmp_path / "store")
    assert seen == {"building": False, "serving": ("stdio", True)}

    def fail(home):
        raise StoreError("cannot open it")

    monkeypatch.setattr(server_module, "build_server", fail)
    with pytest.raises(CommandExit) as failed:
        mcp_stdio.mcp(tmp_path / "store")
    assert failed.value.code == 3 and gc.isenabled()
    gc.unfreeze()


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_server_that_exits_right_after_listing_stops_its_threads_first(tmp_path):
    """A host may list the tools and quit at once: the threads the listing started (opening the
    store, loading the embedder) are finished or stopped before the interpreter shuts down."""
    code = (
        "import asyncio, atexit, sys, threading\n"
        "from pathlib import Path\n"
        "def alive():\n"  # registered first, so it runs after the server's own handler
        "    names = {'noetic-start', 'noetic-embedding'}\n"
        "    print(sorted(t.name for t in threading.enumerate() if t.name in names))\n"
        "atexit.register(alive)\n"
        "from mcp import Client\n"
        "from noetic.mcp.server import build_server\n"
        "server = build_server(Path(sys.argv[1]))\n"
        "async def listing():\n"
        "    async with Client(server) as client:\n"
        "        await client.list_tools()\n"
        "asyncio.run(listing())\n"
        "print(sorted(t.name for t in threading.enumerate() if t.name.startswith('noetic-')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "store")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    started, at_exit = out.stdout.splitlines()
    assert "noetic-start" in started or "noetic-embedding" in started
    assert at_exit == "[]"
