"""`--provider`: a model writes the assessment, over real HTTP to a local model server."""

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.store import Store, resolve_home
from noetic.store.llm_calls import llm_calls
from noetic.vectors import VECTOR_NAMES

from ..llm.model_server import error, reply, running

runner = CliRunner()


def scores(value):
    body = {v: {"score": value, "rationale": f"{v} looks fine"} for v in VECTOR_NAMES}
    body["engagement"]["score"] = body["coherence"]["score"] = 0.9
    return "My assessment:\n```json\n" + json.dumps({"vectors": body}) + "\n```"


@pytest.mark.subprocess
def test_a_model_writes_preflight_and_postflight_through_the_cli():
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(error(503), reply(scores(0.5)), reply(scores(0.9)))
        runner.invoke(app, ["bootstrap", "--profile", "balanced"])
        pre = runner.invoke(app, ["preflight", "tidy the docs", "--provider", spec, "--json"])
        assert pre.exit_code == 0, pre.output
        body = json.loads(pre.stdout)
        assert body["decision"]["action"] == "INVESTIGATE"
        assert body["assessment"]["assessment"]["rationales"]["know"] == "know looks fine"
        prompt = server.requests[-1]["messages"][-1]["content"]
        assert "TASK: tidy the docs" in prompt
        post = runner.invoke(app, ["postflight", "--provider", spec, "--json"])
        assert post.exit_code == 0, post.output
        assert json.loads(post.stdout)["calibration"]["classification"] == "underconfident"
    with Store(resolve_home()) as store:
        calls = llm_calls(store)
    assert [(c.attempt, c.outcome, c.status) for c in calls] == [
        (1, "error", 503),
        (2, "ok", None),
        (1, "ok", None),
    ]
    assert calls[-1].cascade_id is not None


@pytest.mark.slow
def test_an_unusable_model_reply_exits_3_and_records_nothing():
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(reply("I am quite sure."), reply("Really, very sure."))
        runner.invoke(app, ["bootstrap"])
        result = runner.invoke(app, ["preflight", "t", "--provider", spec, "--json"])
    assert result.exit_code == 3
    assert "after one repair round" in json.loads(result.stdout)["error"]["message"]
    state = json.loads(runner.invoke(app, ["state", "--json"]).stdout)
    assert state["latest"] is None


def test_scores_and_provider_together_are_refused():
    runner.invoke(app, ["bootstrap"])
    result = runner.invoke(app, ["check", "--vectors", "{}", "--provider", "ollama:x"])
    assert result.exit_code == 1 and "not both" in result.stderr


@pytest.mark.subprocess
def test_the_default_provider_answers_assessments_only_when_asked(monkeypatch):
    """NOETIC_PROVIDER never replaces the caller's own assessment; --provider default uses it."""
    with running() as server:
        monkeypatch.setenv("NOETIC_PROVIDER", f"openai-compatible:{server.url}/v1#local-model")
        runner.invoke(app, ["bootstrap", "--profile", "balanced"])
        prompt = runner.invoke(app, ["preflight", "tidy the docs"])
        assert prompt.exit_code == 0 and "TASK: tidy the docs" in prompt.stdout
        assert "--provider default" in prompt.stderr
        assert server.requests == []  # no model was called
        as_json = runner.invoke(app, ["preflight", "tidy the docs", "--json"])
        assert json.loads(as_json.stdout)["recorded"] is False and as_json.stderr == ""
        server.enqueue(reply(scores(0.5)))
        pre = runner.invoke(app, ["preflight", "tidy the docs", "--provider", "default", "--json"])
        assert pre.exit_code == 0, pre.output
        assert json.loads(pre.stdout)["decision"]["action"] == "INVESTIGATE"
        assert len(server.requests) == 1


@pytest.mark.slow
def test_provider_default_without_a_configured_one_says_how_to_configure_it(monkeypatch):
    monkeypatch.delenv("NOETIC_PROVIDER", raising=False)
    runner.invoke(app, ["bootstrap"])
    result = runner.invoke(app, ["preflight", "t", "--provider", "default"])
    assert result.exit_code == 1 and "NOETIC_PROVIDER" in result.stderr
    assert "--provider default" not in runner.invoke(app, ["preflight", "t"]).stderr


def with_p(value, p):
    text = scores(value)
    body = json.loads(text[text.index("{") : text.rindex("}") + 1])
    return json.dumps({**body, "p_success": p})


@pytest.mark.subprocess
def test_postflight_review_adversarial_asks_the_model_to_find_bugs_and_records_it():
    with running() as server:
        spec = f"openai-compatible:{server.url}/v1#local-model"
        server.enqueue(reply(with_p(0.8, 0.75)), reply(with_p(0.8, 0.4)))
        runner.invoke(app, ["bootstrap", "--profile", "balanced"])
        pre = runner.invoke(app, ["preflight", "fix the parser", "--provider", spec, "--json"])
        assert pre.exit_code == 0, pre.output
        assert json.loads(pre.stdout)["assessment"]["assessment"]["p_success"] == 0.75
        assert "p_success" in server.requests[-1]["messages"][-1]["content"]
        args = ["postflight", "--provider", spec, "--review", "adversarial"]
        post = runner.invoke(app, args)
        assert post.exit_code == 0, post.output
        assert "p_success 0.40 · adversarial review" in post.stdout
        prompt = server.requests[-1]["messages"][-1]["content"]
        assert "find bugs" in prompt and "TASK: fix the parser" in prompt
    report = json.loads(runner.invoke(app, ["calibration", "report", "--json"]).stdout)
    assert report["by_phase"]["adversarial_review"]["n"] == 0  # no outcome yet
    runner.invoke(app, ["outcome", "--failure", "--source", "test"])
    report = json.loads(runner.invoke(app, ["calibration", "report", "--json"]).stdout)
    assert report["by_phase"]["adversarial_review"]["mean_stated"] == 0.4
    assert report["by_phase"]["preflight"]["mean_stated"] == 0.75
