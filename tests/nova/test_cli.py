"""`noetic nova` end to end over a real HTTP model server: the run, JSON, personas, graph."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..conftest import uniform
from ..llm.model_server import reply, running
from .panel import said

runner = CliRunner()

# One reply every node can use: it names an expert, a proposal, a severity and a decision.
ANY_TURN = said(
    "Analysis.",
    know=0.8,
    uncertainty=0.2,
    experts=[{"name": "security", "reason": "tokens"}, {"name": "integration", "reason": "apis"}],
    proposal="OAuth2 with PKCE",
    severity="none",
    recommendation="OAuth2 with PKCE",
    confidence=0.88,
    vectors=uniform(0.8),  # the run's task assessments read this
)


@pytest.mark.subprocess
def test_nova_question_runs_the_panel_over_http_and_prints_json():
    with running() as server:
        server.default = reply(ANY_TURN)
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["nova", "Should we use OAuth2?", "--provider", spec, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "completed" and data["confidence"] == 0.88
    assert [t["node"] for t in data["turns"]] == [
        "unpack",
        "experts",
        "experts",
        "synthesize",
        "critique",
        "final",
    ]
    assert [t["node"] for t in data["assessments"]] == ["preflight", "check", "postflight"]
    assert len(server.requests) == data["model_calls"] == 9
    assert data["cascade_id"] and data["calibration"]
    assert data["decision_log"].endswith("-should-we-use-oauth2.md")

    shown = runner.invoke(app, ["nova", "resume", data["id"], "--json"])
    assert shown.exit_code == 1 and "already completed" in shown.stdout


@pytest.mark.subprocess
def test_nova_shows_each_turn_live_for_people():
    with running() as server:
        server.default = reply(ANY_TURN)
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["nova", "OAuth2?", "--provider", spec, "--experts", "ux"])
    assert result.exit_code == 0, result.output
    assert "unpack" in result.stderr and "know 0.80 · uncertainty 0.20" in result.stderr
    assert "recommendation OAuth2 with PKCE" in result.stdout
    # the DCE's and the CAE's turns stream; the concurrent experts' do not
    streamed = {(body.get("stream", False), "ux" in body["messages"][-1]["content"][:80])
                for body in server.requests}  # fmt: skip
    assert (True, False) in streamed and (False, True) in streamed and (True, True) not in streamed
    assert "── dce · synthesize ──" in result.stderr and "Analysis." in result.stderr


@pytest.mark.slow
def test_nova_without_a_provider_or_with_bad_options_is_the_callers_mistake():
    result = runner.invoke(app, ["nova", "OAuth2?", "--json"])
    assert result.exit_code == 1 and "provider" in result.stdout
    assert runner.invoke(app, ["nova", "OAuth2?", "--max-rounds", "0"]).exit_code == 2
    unknown = runner.invoke(
        app, ["nova", "OAuth2?", "--provider", "ollama:x", "--experts", "astrologer", "--json"]
    )
    assert unknown.exit_code == 1 and "astrologer" in unknown.stdout


@pytest.mark.slow
def test_personas_list_show_new(tmp_path):
    listed = runner.invoke(app, ["nova", "personas", "list", "--json"])
    assert listed.exit_code == 0
    names = {p["short_name"] for p in json.loads(listed.stdout)}
    assert {"dce", "cae", "security", "legal"} <= names

    shown = runner.invoke(app, ["nova", "personas", "show", "cae"])
    assert shown.exit_code == 0 and "severity" in shown.stdout

    made = runner.invoke(app, ["nova", "personas", "new", "billing", "--json"])
    assert made.exit_code == 0
    path = json.loads(made.stdout)["path"]
    again = runner.invoke(app, ["nova", "personas", "new", "billing"])
    assert again.exit_code == 1 and "exists" in again.stderr
    assert "billing" in runner.invoke(app, ["nova", "personas", "list"]).stdout

    with open(path, "a", encoding="utf-8") as fh:
        fh.write("")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "x.md").write_text("---\nrole: X\n---\nbody\n", encoding="utf-8")
    bad = runner.invoke(app, ["nova", "personas", "list", "--personas", str(broken), "--json"])
    assert bad.exit_code == 1 and "x.md" in bad.stdout and "short_name" in bad.stdout


def test_graph_prints_mermaid_from_the_engines_edges():
    result = runner.invoke(app, ["nova", "graph"])
    assert result.exit_code == 0 and result.stdout.startswith("flowchart TD")
    assert "critique -->|critical| experts" in result.stdout
    data = json.loads(runner.invoke(app, ["nova", "graph", "--json"]).stdout)
    assert {"from": "check", "to": "experts", "when": "uncertain"} in data["edges"]


def _gate_of(*extra):
    with running() as server:
        server.default = reply(ANY_TURN)
        spec = f"openai-compatible:{server.url}/v1#gpt-4o"  # selects high_reasoning_collaborative
        result = runner.invoke(app, ["nova", "OAuth2?", "--provider", spec, *extra])
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.subprocess
def test_the_gate_is_the_seeds_whatever_the_model_and_the_run_says_which_rule_set_it():
    data = json.loads(_gate_of("--json").stdout)
    assert (data["gate"], data["gate_rule"]) == (0.35, "the seed's default")
    data = json.loads(_gate_of("--json", "--gate", "0.2").stdout)
    assert (data["gate"], data["gate_rule"]) == (0.2, "set by --gate")
    data = json.loads(_gate_of("--json", "--profile", "autonomous_agent").stdout)
    assert data["gate"] == 0.3
    assert data["gate_rule"] == "profile 'autonomous_agent': 1 − its confidence threshold 0.70"
    human = _gate_of().stdout
    assert "gate: uncertainty > 0.35 goes back to the experts (the seed's default)" in human


@pytest.mark.subprocess
def test_a_failed_run_and_a_failed_resume_exit_3_and_an_escalated_one_exits_5():
    with running() as server:
        server.default = reply("no JSON block in sight")
        spec = f"openai-compatible:{server.url}/v1#m"
        failed = runner.invoke(
            app, ["nova", "OAuth2?", "--provider", spec, "--experts", "security", "--json"]
        )
        assert failed.exit_code == 3, failed.output
        data = json.loads(failed.stdout)
        assert data["status"] == "failed" and data["recommendation"] is None
        again = runner.invoke(app, ["nova", "resume", data["id"], "--provider", spec, "--json"])
        assert again.exit_code == 3 and json.loads(again.stdout)["status"] == "failed"
        escalating = said(
            "A critical flaw.",
            know=0.5,
            uncertainty=0.5,
            experts=[{"name": "security", "reason": "tokens"}],
            proposal="p",
            severity="critical",
            issues=["no revocation"],
            vectors=uniform(0.8),
        )
        server.default = reply(escalating)
        escalated = runner.invoke(
            app, ["nova", "OAuth2?", "--provider", spec, "--max-rounds", "1", "--json"]
        )
        assert escalated.exit_code == 5, escalated.output
        assert json.loads(escalated.stdout)["status"] == "escalated"
        server.default = reply(ANY_TURN)
        run_id = json.loads(escalated.stdout)["id"]
        decided = runner.invoke(
            app, ["nova", "resume", run_id, "--input", "OAuth2", "--provider", spec, "--json"]
        )
        assert decided.exit_code == 0, decided.output


@pytest.mark.subprocess
def test_resume_goes_on_on_the_runs_own_provider_and_takes_a_panel(monkeypatch):
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    unusable = reply(said("Let me think.", experts=[{"name": "astrologer", "reason": "stars"}]))
    with running() as server:
        server.enqueue(unusable, unusable)  # the DCE names no expert there is, twice
        server.default = reply(ANY_TURN)
        spec = f"openai-compatible:{server.url}/v1#m"
        failed = runner.invoke(app, ["nova", "OAuth2?", "--provider", spec, "--json"])
        run = json.loads(failed.stdout)
        assert run["status"] == "failed" and "--experts" in run["detail"]
        asked = len(server.requests)
        resumed = runner.invoke(app, ["nova", "resume", run["id"], "--experts", "security",
                                      "--json"])  # fmt: skip
        assert resumed.exit_code == 0, resumed.output
        again = json.loads(resumed.stdout)
        assert len(server.requests) > asked  # the same server, with no --provider given
    assert again["status"] == "completed" and [p["name"] for p in again["experts"]] == ["security"]
    shown = runner.invoke(app, ["nova", "resume", "--help"])
    assert "--experts" in shown.stdout and "the provider the run began on" in shown.stdout


@pytest.mark.subprocess
def test_a_profile_asking_for_evidence_gets_it_asked_for_not_a_failed_run():
    with running() as server:
        server.default = reply(ANY_TURN)  # scores without evidence, every time
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["nova", "OAuth2?", "--provider", spec, "--profile",
                                     "critical_domain", "--json"])  # fmt: skip
        repairs = [r for r in server.requests if "requires evidence" in json.dumps(r)]
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["status"] == "completed" and data["recommendation"] == "OAuth2 with PKCE"
    assert repairs  # the POSTFLIGHT's repair round named what was missing
    assert any("POSTFLIGHT assessment was left out" in n and "requires evidence" in n
               for n in data["notes"])  # fmt: skip
