"""`noetic nova`, `noetic agent` and `noetic observe` run a command when given a question: their
help lists that command's options, usage lines name what was typed, the seed's spellings work."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..llm.model_server import reply, running
from ..nova.test_cli import ANY_TURN

runner = CliRunner()


@pytest.mark.parametrize(
    ("group", "argument", "options"),
    [
        ("nova", "QUESTION", ["--provider", "--experts", "--max-rounds", "--gate", "--profile"]),
        ("agent", "QUERY", ["--provider", "--workspace", "--approve", "--memory / --no-memory"]),
        ("observe", "QUERY", ["--provider", "--adaptive / --no-adaptive", "--cache"]),
    ],
)
def test_a_groups_help_lists_the_options_of_what_it_runs(group, argument, options):
    shown = runner.invoke(app, [group, "--help"])
    assert shown.exit_code == 0, shown.output
    assert f"Usage: noetic {group} [OPTIONS] {argument} | COMMAND [ARGS]..." in shown.stdout
    section = shown.stdout.split(f"Options (for noetic {group} {argument}):")[1]
    section = section.split("Commands:")[0]
    for option in options:
        assert option in section, option
    assert "Commands:" in shown.stdout


@pytest.mark.parametrize("word", ["run", "process", "ask"])
def test_the_help_of_nova_run_names_what_was_typed(word):
    shown = runner.invoke(app, ["nova", word, "--help"])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith(f"Usage: noetic nova {word} [OPTIONS]")
    assert "--experts" in shown.stdout


@pytest.mark.subprocess
@pytest.mark.parametrize("spelling", [[], ["process"], ["run"]])
def test_nova_process_is_the_seeds_spelling_of_a_deliberation(spelling):
    with running() as server:
        server.default = reply(ANY_TURN)
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["nova", *spelling, "Should we use OAuth2?", "--provider",
                                     spec, "--json"])  # fmt: skip
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert done["status"] == "completed" and done["question"] == "Should we use OAuth2?"


def test_bare_agent_without_a_model_fails_before_reading_anything(monkeypatch, tmp_path):
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["agent"], input="please list the files\n")
    assert result.exit_code == 1
    assert "no model provider configured" in result.output
    assert "one request per line" not in result.output  # it never started the chat
