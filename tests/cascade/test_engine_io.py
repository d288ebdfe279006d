"""The engine end to end: the CLI against a local model server, an external MCP server's
tools, and the goals commands."""

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cascade.engine import RunStatus, run_cascade
from noetic.cli import app
from noetic.errors import ValidationError
from noetic.llm.scripted import ScriptedProvider, calling
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.tools.mcp_servers import configured_servers

from ..llm.model_server import calls, error, reply, running
from .test_engine import call, scores, step, think

NOETIC = str(Path(sys.executable).with_name("noetic"))
runner = CliRunner()


@pytest.mark.subprocess
def test_cli_runs_a_cascade_against_a_local_model_server(tmp_path):
    (tmp_path / "notes.txt").write_text("the deadline is Friday")
    with running() as server:
        server.enqueue(
            reply(scores(0.5)),
            reply(think(complex_=False, strategy="research")),
            calls(("c1", "read_file", {"path": "notes.txt"}), text="The notes should say."),
            reply(scores(0.9)),
            reply("The deadline is Friday."),
            reply(scores(0.9)),
        )
        spec = f"openai-compatible:{server.url}/v1#local-model"
        args = ["cascade", "run", "when is the deadline?", "--provider", spec,
                "--workspace", str(tmp_path), "--profile", "balanced"]  # fmt: skip
        result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["status"] == "completed" and body["output"] == "The deadline is Friday."
    assert body["tool_uses"][0]["information"].endswith("the deadline is Friday")
    assert [p["phase"] for p in body["trajectory"]] == ["PREFLIGHT", "CHECK", "POSTFLIGHT"]
    goals = runner.invoke(app, ["goals", "list", "--ai-id", "local-model", "--json"])
    assert goals.exit_code == 0 and json.loads(goals.stdout) == []


@pytest.mark.subprocess
def test_human_output_shows_phases_and_the_trajectory(tmp_path):
    with running() as server:
        server.enqueue(reply(scores(0.9)), reply(think()), reply("Done."), reply(scores(0.9)))
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["cascade", "run", "t", "--provider", spec,
                                     "--workspace", str(tmp_path)])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "PREFLIGHT" in result.stderr and "POSTFLIGHT" in result.stderr
    assert "status completed" in result.stdout and "trajectory" in result.stdout
    assert "session s_" in result.stdout and "agent m" in result.stdout


@pytest.mark.subprocess
def test_tools_of_an_external_mcp_server_are_offered_and_called(store, tmp_path):
    (store.home / "config.toml").write_text(
        # the SDK starts a server with a few safe variables only: `env` adds the run's cache
        "[mcp_servers.guide]\n"
        f'command = ["env", "NOETIC_CACHE_DIR={os.environ["NOETIC_CACHE_DIR"]}"'
        f', "{NOETIC}", "mcp", "--store", "{tmp_path / "other"}"]\n'
    )
    tracker = Tracker(store, ProfileRegistry())
    session, _ = tracker.bootstrap(profile="balanced")
    provider = ScriptedProvider([
        scores(0.5), think(),
        calling(("guide_get_workflow_guidance", {"phase": "check"})),
        scores(0.9), "done", scores(0.9),
    ])  # fmt: skip
    ctx = build_context(
        "cascade", tracker=tracker, provider=provider, session_id=session.id,
        mcp_servers=configured_servers(store.home),
    )  # fmt: skip
    run = asyncio.run(run_cascade(ctx, "t"))
    assert run.status is RunStatus.COMPLETED
    (use,) = run.tool_uses
    assert use.success and "CHECK" in use.information
    assert "guide.get_workflow_guidance" in provider.calls[2].messages[0].content
    # offered natively under a name the wire formats accept
    assert "guide_get_workflow_guidance" in [t.name for t in provider.calls[2].tools]


def test_bad_mcp_server_config_is_a_clear_error(tmp_path):
    (tmp_path / "config.toml").write_text('[mcp_servers.x]\ncommand = "not a list"\n')
    with pytest.raises(ValidationError) as caught:
        configured_servers(tmp_path)
    assert caught.value.message == (
        f"{tmp_path / 'config.toml'}: [mcp_servers.x] command must be a non-empty list of "
        "strings, not 'not a list'"
    )


@pytest.mark.subprocess
def test_act_streams_its_reply_to_stderr_as_it_arrives(tmp_path):
    with running() as server:
        server.enqueue(
            reply(scores(0.9)), reply(think()), reply("Done, all three files."),
            reply(scores(0.9)),
        )  # fmt: skip
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["cascade", "run", "t", "--provider", spec,
                                     "--workspace", str(tmp_path)])  # fmt: skip
        streamed = [body.get("stream", False) for body in server.requests]
    assert result.exit_code == 0, result.output
    assert streamed == [False, False, True, False]  # only ACT, the reply a person waits on
    assert "Done, all three files." in result.stderr
    assert result.stderr.index("Done, all three files.") < result.stderr.index("POSTFLIGHT")
    assert "Done, all three files." in result.stdout  # stdout is not a terminal here
    assert "4 model calls · 44 in / 28 out tokens · cost unknown" in result.stdout


@pytest.mark.subprocess
def test_the_run_summary_has_its_tokens_and_cost(tmp_path, _isolated_home):
    _isolated_home.mkdir(parents=True, exist_ok=True)
    (_isolated_home / "config.toml").write_text(
        '[prices."openai-compatible:m"]\ninput = 2.0\noutput = 10.0\n'
    )
    with running() as server:
        server.enqueue(
            reply(scores(0.9), input_tokens=1000, output_tokens=100), reply(think()),
            error(503), reply("Done."), reply(scores(0.9)),
        )  # fmt: skip
        spec = f"openai-compatible:{server.url}/v1#m"
        args = ["cascade", "run", "t", "--provider", spec, "--workspace", str(tmp_path)]
        result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 0, result.output
    usage = json.loads(result.stdout)["usage"]
    # five attempts, one of them the 503; tokens and cost from the four answers
    assert (usage["calls"], usage["failed"]) == (5, 1)
    assert (usage["input_tokens"], usage["output_tokens"]) == (1000 + 3 * 11, 100 + 3 * 7)
    assert usage["cost_usd"] == pytest.approx(((1000 + 33) * 2 + (100 + 21) * 10) / 1e6)


@pytest.mark.subprocess
def test_a_server_without_tool_support_falls_back_to_the_json_step(tmp_path):
    (tmp_path / "notes.txt").write_text("the deadline is Friday")
    with running() as server:
        server.reject_tools = True
        server.enqueue(
            reply(scores(0.5)), reply(think(complex_=False, strategy="research")),
            reply(step(call("read_file", path="notes.txt"))), reply(scores(0.6)),
            reply(step(call("read_file", path="notes.txt"))), reply(scores(0.9)),
            reply("Friday."), reply(scores(0.9)),
        )  # fmt: skip
        spec = f"openai-compatible:{server.url}/v1#local-model"
        args = ["cascade", "run", "when?", "--provider", spec, "--workspace", str(tmp_path),
                "--profile", "balanced", "--json"]  # fmt: skip
        result = runner.invoke(app, args)
        offered = ["tools" in body for body in server.requests]
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["status"] == "completed" and body["output"] == "Friday."
    assert [u["success"] for u in body["tool_uses"]] == [True, True]
    # one refused request with tools, then the JSON step, and no tools offered again
    assert offered == [False, False, True, False, False, False, False, False, False]
    assert body["usage"]["failed"] == 1


@pytest.mark.subprocess
def test_a_run_that_fails_or_waits_for_a_person_exits_non_zero(tmp_path):
    """parse_failure used to exit 0: the status a script sees is now the run's."""
    with running() as server:
        server.enqueue(reply("no scores here"), reply("still none"))
        spec = f"openai-compatible:{server.url}/v1#m"
        args = ["cascade", "run", "t", "--provider", spec, "--workspace", str(tmp_path)]
        unparsed = runner.invoke(app, [*args, "--json"])
        assert unparsed.exit_code == 3, unparsed.output
        assert json.loads(unparsed.stdout)["status"] == "parse_failure"
        server.enqueue(
            reply(scores(0.8, clarity=0.2)),
            reply(json.dumps({"questions": ["which deadline: the release or the audit?"]})),
        )
        clarify = runner.invoke(app, args)
    assert clarify.exit_code == 5, clarify.output
    assert "status clarify" in clarify.stdout and "which deadline" in clarify.stdout
