"""`noetic logs`: recorded model calls with tokens, cost, latency and status, filtered."""

import json

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.llm.base import LLMCall
from noetic.store.llm_calls import record_llm_call

runner = CliRunner()


def call(model="claude-haiku-4-5", provider="anthropic", **kw):
    base = {"attempt": 1, "outcome": "ok", "tokens_in": 100, "tokens_out": 10, "latency_ms": 120.0}
    return LLMCall(provider=provider, model=model, **{**base, **kw})


def seed(store):
    for c in [
        call(session_id="s_a", cascade_id="c_1", cost_usd=0.00015, engine="cascade"),
        call(session_id="s_a", cascade_id="c_1", outcome="error", error_class="status",
             status=429, tokens_in=0, tokens_out=0, attempt=1),
        call(session_id="s_a", cascade_id="c_1", cost_usd=0.0002, attempt=2, tokens_cached=80),
        call(model="qwen2.5-7b", provider="openai-compatible", session_id="s_b"),
    ]:  # fmt: skip
        record_llm_call(store, c)


def test_every_call_with_totals_in_json(store):
    seed(store)
    result = runner.invoke(app, ["logs", "--json"])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert [c["model"] for c in body["calls"]] == ["claude-haiku-4-5"] * 3 + ["qwen2.5-7b"]
    assert body["calls"][1]["status"] == 429 and body["calls"][3]["cost_usd"] is None
    totals = body["totals"]
    assert (totals["calls"], totals["failed"], totals["input_tokens"]) == (4, 1, 300)
    assert totals["cost_usd"] is None and totals["unpriced"] == 1  # qwen has no price


@pytest.mark.slow
def test_filters_by_run_session_and_model(store):
    seed(store)

    def models(*args):
        result = runner.invoke(app, ["logs", "--json", *args])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)

    run = models("--run", "c_1")
    assert len(run["calls"]) == 3 and run["totals"]["cost_usd"] == 0.00035
    assert [c["session_id"] for c in models("--session", "s_b")["calls"]] == ["s_b"]
    assert len(models("--model", "anthropic:claude-haiku")["calls"]) == 3
    assert len(models("--model", "qwen2.5")["calls"]) == 1
    assert models("--model", "gpt")["calls"] == []
    assert len(models("--limit", "2")["calls"]) == 2
    assert models("--limit", "2")["calls"][-1]["model"] == "qwen2.5-7b"  # the most recent


def test_the_table_says_unknown_for_an_unpriced_call(store):
    seed(store)
    result = runner.invoke(app, ["logs"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    qwen = next(line for line in lines if "qwen2.5-7b" in line)
    assert "unknown" in qwen and "$" not in qwen
    assert any("status 429" in line for line in lines)
    assert "4 model calls (1 failed)" in result.stdout
    assert "cost unknown (1 call unpriced; $0.000350 known)" in result.stdout


@pytest.mark.slow
def test_no_calls_and_bad_options(store):
    empty = runner.invoke(app, ["logs"])
    assert empty.exit_code == 0 and "no model calls recorded" in empty.stdout
    assert runner.invoke(app, ["logs", "--limit", "0"]).exit_code == 2
    missing = runner.invoke(app, ["logs", "--store", "/nonexistent/store", "--json"])
    assert missing.exit_code == 1 and "error" in json.loads(missing.stdout)


def test_a_unique_prefix_finds_the_run_and_an_ambiguous_one_is_refused(store):
    seed(store)
    record_llm_call(store, call(session_id="s_a", cascade_id="c_12"))
    record_llm_call(store, call(session_id="s_a", cascade_id="c_345"))
    found = runner.invoke(app, ["logs", "--run", "c_3", "--json"])
    assert found.exit_code == 0, found.output
    assert [c["cascade_id"] for c in json.loads(found.stdout)["calls"]] == ["c_345"]
    exact = json.loads(runner.invoke(app, ["logs", "--run", "c_1", "--json"]).stdout)
    assert {c["cascade_id"] for c in exact["calls"]} == {"c_1"}  # an exact id wins
    ambiguous = runner.invoke(app, ["logs", "--run", "c_", "--json"])
    assert ambiguous.exit_code == 1
    assert "task id prefix 'c_' is ambiguous" in json.loads(ambiguous.stdout)["error"]["message"]


def test_the_totals_cover_every_matching_call_and_say_so_when_some_are_not_shown(store):
    seed(store)
    shown = runner.invoke(app, ["logs", "--limit", "2"])
    assert shown.exit_code == 0, shown.output
    text = " ".join(shown.stdout.split())
    assert "the 2 most recent of 4 matching calls shown (--limit); totals over all of them:" in text
    assert "4 model calls (1 failed)" in text
    body = json.loads(runner.invoke(app, ["logs", "--limit", "2", "--json"]).stdout)
    assert len(body["calls"]) == 2 and body["matching"] == 4 and body["totals"]["calls"] == 4
    every = runner.invoke(app, ["logs"])
    assert "most recent of" not in every.stdout


@pytest.mark.subprocess
def test_a_cascade_runs_preflight_call_is_filed_under_its_task(tmp_path):
    from ..cascade.test_engine import scores, think
    from ..llm.model_server import reply, running

    script = [scores(0.9), think(complex_=False, strategy="research"), "the answer", scores(0.9)]
    with running() as server:
        server.enqueue(*(reply(r) for r in script))
        spec = f"openai-compatible:{server.url}/v1#m"
        ran = runner.invoke(app, ["cascade", "run", "t", "--provider", spec, "--json",
                                  "--workspace", str(tmp_path)])  # fmt: skip
        made = len(server.requests)
    assert ran.exit_code == 0, ran.output
    task = json.loads(ran.stdout)["cascade_id"]
    logged = json.loads(runner.invoke(app, ["logs", "--run", task, "--json"]).stdout)
    assert made == 4 and len(logged["calls"]) == made
    assert all(c["cascade_id"] == task for c in logged["calls"])
