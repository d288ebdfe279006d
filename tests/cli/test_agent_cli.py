"""`noetic agent`: a real model over HTTP (the local model server) drives the whole loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..llm.model_server import calls, reply, running, structured

runner = CliRunner()


def triage(**fields) -> dict:
    base = {"safe": True, "safety_reason": "", "tools": [], "mode": "fast", "answer": None}
    return {**base, **fields}


@pytest.mark.subprocess
def test_a_query_runs_tools_in_the_sandbox_and_answers(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("the answer is 42\n")
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(
            structured(triage(tools=["file_read", "shell"])),
            calls(("c1", "file_read", {"path": "notes.txt"}), ("c2", "shell", {"command": "ls"})),
            reply("The notes say 42."),
        )
        result = runner.invoke(
            app,
            [
                "agent",
                "What do my notes say?",
                "--provider",
                spec,
                "--workspace",
                str(ws),
                "--sandbox",
                "required",
                "--json",
            ],
        )
        assert result.exit_code == 0, result.output
        body = json.loads(result.stdout)
        assert body["answer"] == "The notes say 42."
        assert [c["tool"] for c in body["tool_calls"]] == ["file_read", "shell"]
        assert all(c["ok"] for c in body["tool_calls"])
        assert body["sandbox"].startswith("bubblewrap")
        # the tool results went back to the model over the wire
        sent = server.requests[2]["messages"]
        tool_messages = [m for m in sent if m.get("role") == "tool"]
        assert "the answer is 42" in tool_messages[0]["content"]
        assert "notes.txt" in tool_messages[1]["content"]
        offered = [t["function"]["name"] for t in server.requests[1]["tools"]]
        assert offered == ["file_read", "shell", "switch_mode"]
    listed = runner.invoke(app, ["agent", "tasks", "--json"])
    assert listed.exit_code == 0, listed.output
    (task,) = json.loads(listed.stdout)
    assert (task["task_id"], task["status"]) == (body["task_id"], "answered")
    again = runner.invoke(app, ["agent", "resume", body["task_id"], "--provider", "ollama:m"])
    assert again.exit_code == 1 and "not interrupted" in again.output


@pytest.mark.slow
def test_human_output_streams_steps_to_stderr_and_the_answer_to_stdout(tmp_path: Path) -> None:
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(structured(triage(answer="Four.")))
        result = runner.invoke(
            app, ["agent", "2+2?", "--provider", spec, "--workspace", str(tmp_path)]
        )
    assert result.exit_code == 0, result.output
    assert result.stdout == "Four.\n"
    assert "direct-answer" not in result.stdout and "answer" in result.stderr


@pytest.mark.slow
def test_a_refusal_exits_1_and_names_the_reason(tmp_path: Path) -> None:
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(structured(triage(safe=False, safety_reason="it steals credentials")))
        result = runner.invoke(
            app,
            [
                "agent",
                "grab their ssh keys",
                "--provider",
                spec,
                "--workspace",
                str(tmp_path),
                "--json",
            ],
        )
    assert result.exit_code == 1
    body = json.loads(result.stdout)
    assert body["status"] == "refused" and "steals credentials" in body["answer"]


@pytest.mark.slow
def test_the_chat_loop_keeps_the_conversation(tmp_path: Path) -> None:
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(
            structured(triage(answer="Hello, Ada.")),
            structured({"preferences": {"name": "Ada"}}),  # memory learns from each line
            structured(triage(answer="You are Ada.")),
            structured({}),
        )
        result = runner.invoke(
            app,
            ["agent", "--provider", spec, "--workspace", str(tmp_path), "--json"],
            input="I am Ada\nwho am I?\n\n",
        )
        assert result.exit_code == 0, result.output
        second = server.requests[2]["messages"][-1]["content"]
        knows = server.requests[2]["messages"][0]["content"]
    assert "Earlier in this conversation" in second and "I am Ada" in second
    assert "name: Ada" in knows  # and the profile learned from the first line
    decoder, text, answers = json.JSONDecoder(), result.stdout, []
    while text.strip():
        document, end = decoder.raw_decode(text.strip())
        answers.append(document["answer"])
        text = text.strip()[end:]
    assert answers == ["Hello, Ada.", "You are Ada."]


@pytest.mark.slow
def test_bad_options_and_tasks(tmp_path: Path) -> None:
    bad_mode = runner.invoke(app, ["agent", "x", "--mode", "sideways", "--provider", "ollama:m"])
    assert bad_mode.exit_code == 1 and "unknown mode" in bad_mode.output
    bad_box = runner.invoke(
        app, ["agent", "x", "--sandbox", "sometimes", "--provider", "ollama:m", "--json"]
    )
    assert bad_box.exit_code == 1 and "unknown sandbox mode" in bad_box.stdout
    no_store = runner.invoke(app, ["agent", "tasks", "--json"])
    assert no_store.exit_code == 1 and "store" in no_store.stdout
    missing = runner.invoke(app, ["agent", "resume", "t_nope", "--provider", "ollama:m"])
    assert missing.exit_code == 1 and "no agent task" in missing.output


@pytest.mark.slow
def test_a_run_stopped_by_its_token_budget_exits_3(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(structured(triage(tools=["file_read"])), reply("partial"))
        args = ["agent", "q", "--provider", spec, "--workspace", str(ws), "--max-tokens", "1"]
        result = runner.invoke(app, [*args, "--json"])
    assert result.exit_code == 3, result.output
    assert json.loads(result.stdout)["status"] == "budget"
