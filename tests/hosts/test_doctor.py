"""`noetic doctor`: what is in place, and what to fix."""

from __future__ import annotations

import json
import sqlite3

import pytest

from .conftest import cli, cli_json


def checks(report: dict) -> dict[str, dict]:
    return {c["name"]: c for c in report["checks"]}


@pytest.mark.subprocess
def test_a_fresh_project_has_nothing_to_fix_but_says_what_is_missing(project, home, monkeypatch):
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    report = cli_json("doctor")
    found = checks(report)
    assert found["store"]["status"] == "warn" and "noetic bootstrap" in found["store"]["fix"]
    assert found["provider"]["status"] == "warn" and "NOETIC_PROVIDER" in found["provider"]["fix"]
    assert found["embedder"]["status"] == "ok"
    assert found["git notes"]["status"] == "ok"
    assert not any(name.startswith("claude-code") for name in found)


@pytest.mark.subprocess
def test_a_healthy_store_with_claude_code_installed(project, home, monkeypatch):
    monkeypatch.setenv("NOETIC_PROVIDER", "ollama:llama3.2")
    cli_json("bootstrap")
    cli_json("setup", "claude-code")
    report = cli_json("doctor")
    found = checks(report)
    assert found["store"]["status"] == "ok"
    assert found["schema"]["status"] == "ok"
    assert found["provider"]["status"] == "ok" and "not called" in found["provider"]["detail"]
    assert found["claude-code (project)"]["status"] == "ok"
    assert all(c["status"] != "fail" for c in report["checks"])


@pytest.mark.subprocess
def test_problems_exit_1_and_say_what_to_fix(project, home, monkeypatch, _isolated_home):
    monkeypatch.setenv("NOETIC_PROVIDER", "nosuch:model")
    cli_json("bootstrap")
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"noetic": {"command": "/gone/bin/noetic", "args": ["mcp"]}}})
    )
    with sqlite3.connect(_isolated_home / "noetic.db") as conn:
        conn.execute("INSERT INTO schema_migrations (name, applied_at) VALUES ('m999_future', 'x')")
    result = cli("doctor")
    assert result.exit_code == 1
    report = cli_json("doctor", code=1)
    found = checks(report)
    assert (
        found["provider"]["status"] == "fail" and "unknown provider" in found["provider"]["detail"]
    )
    assert found["schema"]["status"] == "fail" and found["schema"]["fix"] == "upgrade noetic"
    cursor = found["cursor (project)"]
    assert cursor["status"] == "fail" and "/gone/bin/noetic" in cursor["detail"]
    assert "noetic setup cursor" in cursor["fix"]
    assert "fix:" in result.stdout


@pytest.mark.subprocess
def test_a_corrupt_database_is_a_failure(project, home, _isolated_home):
    _isolated_home.mkdir(parents=True)
    (_isolated_home / "noetic.db").write_bytes(b"garbage" * 1000)
    found = checks(cli_json("doctor", code=1))
    assert found["store"]["status"] == "fail" and "rebuild" in found["store"]["fix"]


@pytest.mark.subprocess
def test_a_malformed_host_file_is_reported_and_the_other_checks_still_run(project, home):
    (project / ".mcp.json").write_text("{oops")
    found = checks(cli_json("doctor", code=1))
    assert found["claude-code (project)"]["status"] == "fail"
    assert ".mcp.json:1:" in found["claude-code (project)"]["detail"]
    assert found["embedder"]["status"] == "ok" and "git notes" in found


@pytest.mark.subprocess
def test_the_provider_is_called_only_when_asked(project, home, monkeypatch):
    from ..llm.model_server import error, reply, running

    with running() as server:
        monkeypatch.setenv("NOETIC_PROVIDER", f"openai-compatible:{server.url}/v1#tiny")
        monkeypatch.setenv("NOETIC_API_KEY", "local")
        assert checks(cli_json("doctor"))["provider"]["status"] == "ok"
        assert server.requests == []
        server.queue.append(reply("ok"))
        answered = checks(cli_json("doctor", "--call"))["provider"]
        assert answered["status"] == "ok" and "answered" in answered["detail"]
        assert len(server.requests) == 1
        server.default = error(404)
        refused = checks(cli_json("doctor", "--call", code=1))["provider"]
        assert refused["status"] == "fail" and "did not answer" in refused["detail"]


@pytest.mark.subprocess
def test_a_gate_configuration_that_cannot_be_read_is_a_failure(project, home, _isolated_home):
    cli_json("bootstrap")
    assert checks(cli_json("doctor"))["gate"]["status"] == "ok"
    (_isolated_home / "config.toml").write_text('[gate]\npolicy = ["gone.yaml"]\n')
    found = checks(cli_json("doctor", code=1))["gate"]
    assert found["status"] == "fail" and "gone.yaml" in found["detail"]
    assert "denies every Bash, Write and Edit call" in found["fix"]


@pytest.mark.subprocess
def test_every_configuration_problem_is_a_failing_check_of_its_own(project, home, _isolated_home):
    cli_json("bootstrap")
    config = _isolated_home / "config.toml"
    assert checks(cli_json("doctor"))["config"]["status"] == "ok"
    config.write_text(
        "[hooks]\ncontext_tokens = 50\n"
        '[prices."openai:m"]\ninput = 1\noutput = "two"\n'
        "[gate]\nirreversable = 'deny'\n"
    )
    report = cli_json("doctor", code=1)
    found = [c for c in report["checks"] if c["name"] == "config"]
    assert [c["status"] for c in found] == ["fail"] * 3
    assert [c["detail"] for c in found] == [
        f"{config}: [prices.\"openai:m\"] output must be a number of at least 0, not 'two'",
        f"{config}: [gate] has no setting 'irreversable'",
        f"{config}: [hooks] context_tokens must be a whole number of at least 100, not 50",
    ]
    assert found[1]["fix"].startswith("did you mean 'irreversible'?")
    assert checks(report)["store"]["status"] == "ok"  # a section's problem stops its readers only


@pytest.mark.subprocess
def test_a_configuration_no_command_can_read_is_named_and_the_store_not_opened(
    project, home, _isolated_home
):
    cli_json("bootstrap")
    config = _isolated_home / "config.toml"
    config.write_text('[stor]\nurl = "postgresql://db/noetic"\n')
    report = cli_json("doctor", code=1)
    found = checks(report)
    assert found["config"]["detail"] == f"{config}: no section [stor] is known"
    assert found["config"]["fix"].startswith("did you mean [store]?")
    assert found["store"]["status"] == "fail" and "[stor]" in found["store"]["detail"]
