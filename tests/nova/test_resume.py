"""Runs that stop part-way (a killed process, a failing expert), a persona's own model, reading
runs back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.errors import NotFoundError, ProviderError
from noetic.nova import resume_nova, run_nova
from noetic.profiles import ProfileRegistry
from noetic.runtime.context import build_context
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store import nova as records

from ..llm.model_server import reply, running
from .panel import Panel, said
from .test_engine import SEED, nova, order

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.subprocess
def test_a_killed_run_resumes_without_asking_again_what_it_had():
    home = os.environ["NOETIC_HOME"]
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.nova._killed", home],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "SYNTHESIS"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        if child.stdout is not None:
            child.stdout.close()
    assert child.returncode == -signal.SIGKILL
    store = Store(Path(home))
    (row,) = records.runs(store)
    assert row["status"] == "running"  # killed: never finished
    assert [t["node"] for t in records.turns(store, row["id"])] == ["unpack"] + ["experts"] * 3

    panel = Panel(SEED)
    ctx = build_context("nova", tracker=Tracker(store, ProfileRegistry()), provider=panel.provider)
    run = asyncio.run(resume_nova(ctx, row["id"]))
    assert run.status == "completed" and run.replayed == 4
    assert [(p, n) for p, n, _ in panel.asked] == [
        ("dce", "synthesize"), ("cae", "critique"), ("dce", "final")
    ]  # fmt: skip
    assert order(run)[0] == ("dce", "unpack", 0) and len(run.turns) == 7


def test_an_expert_that_keeps_failing_is_retried_once_then_left_out_and_said():
    down = ProviderError("connection refused", provider="scripted", model="m", retryable=False)
    uncertain = said("Unsure.", know=0.5, uncertainty=0.6, proposal="OAuth2?",
                     open_question="mobile?")  # fmt: skip
    panel = Panel({**SEED, ("performance", "experts"): down, ("dce", "synthesize", 1): uncertain})
    run, store = nova(panel)
    assert run.status == "completed" and run.rounds == 2
    assert panel.counts[("performance", "experts", 1)] == 2  # tried, retried
    assert ("performance", "experts", 2) not in panel.counts  # then left out
    failed = next(t for t in run.turns if t.persona == "performance")
    assert failed.status == "failed" and "connection refused" in (failed.error or "")
    assert any("performance failed 2 times" in n and "without it" in n for n in run.notes)
    synthesis = panel.prompt("dce", "synthesize", 1)
    assert "## Performance Expert (performance)" not in synthesis
    assert "## Experts who could not answer\n- Performance Expert (performance): " in synthesis
    assert [t["status"] for t in records.turns(store, run.id) if t["persona"] == "performance"] == [
        "failed"
    ]


def test_every_expert_failing_ends_the_run_failed_and_resumable():
    down = ProviderError("down", provider="scripted", model="m", retryable=False)
    panel = Panel({**SEED, **{(e, "experts"): down for e in ("security", "performance",
                                                            "integration")}})  # fmt: skip
    run, _ = nova(panel)
    assert run.status == "failed" and "every expert" in run.detail


@pytest.mark.slow
def test_a_persona_with_its_own_model_is_asked_on_that_model(tmp_path):
    with running() as server:
        server.default = reply(said("Partners expect OAuth2.", know=0.7, uncertainty=0.3))
        own = f"openai-compatible:{server.url}/v1#integration-model"
        text = (ROOT / "src/noetic/nova/personas/experts/integration.md").read_text("utf-8")
        (tmp_path / "integration.md").write_text(
            text.replace("pattern: domain_expert", f"pattern: domain_expert\nmodel: {own}"),
            encoding="utf-8",
        )
        panel = Panel(SEED)
        run, _ = nova(panel, personas=(str(tmp_path),))
    assert run.status == "completed"
    integration = next(t for t in run.turns if t.persona == "integration")
    assert integration.model.endswith(":integration-model")
    assert ("integration", "experts", 1) not in panel.counts  # not the panel's model
    assert len(server.requests) == 1 and server.requests[0]["model"] == "integration-model"
    assert (
        "Turn 4 · experts · round 1 · integration" in server.requests[0]["messages"][-1]["content"]
    )


@pytest.mark.slow
def test_show_and_runs_read_a_run_back_from_the_store():
    run, _ = nova(Panel(SEED))
    runner = CliRunner()
    listed = runner.invoke(app, ["nova", "runs", "--json"])
    assert listed.exit_code == 0 and listed.stdout.count('"id"') == 1
    shown = runner.invoke(app, ["nova", "show", run.id[:6], "--json"])
    assert shown.exit_code == 0, shown.output
    assert '"recommendation": "OAuth2 with PKCE + mobile PKCE"' in shown.stdout
    missing = runner.invoke(app, ["nova", "show", "n_nope", "--json"])
    assert missing.exit_code == 1 and "no Nova run" in missing.stdout


@pytest.mark.slow
def test_resume_of_an_unknown_run_or_with_blank_input_is_refused():
    fatal = said("Fatal.", know=0.5, uncertainty=0.5, severity="critical", issues=["x"])
    run, _ = nova(Panel({**SEED, ("cae", "critique"): fatal}), max_rounds=1)
    assert run.status == "escalated"
    blank = ["nova", "resume", run.id, "--input", "  ", "--json", "--provider", "ollama:x"]
    result = CliRunner().invoke(app, blank)
    assert result.exit_code == 1 and "the input is empty" in result.stdout
    store = Store(Path(os.environ["NOETIC_HOME"]))
    ctx = build_context(
        "nova", tracker=Tracker(store, ProfileRegistry()), provider=Panel(SEED).provider
    )
    with pytest.raises(NotFoundError, match="no Nova run"):
        asyncio.run(resume_nova(ctx, "n_missing"))


def test_two_runs_writing_one_store_at_once_keep_their_turns_apart():
    import threading

    home = Path(os.environ["NOETIC_HOME"])
    Store(home).close()  # migrated once before the writers start
    results = []

    def one(question: str) -> None:
        store = Store(home)
        ctx = build_context(
            "nova", tracker=Tracker(store, ProfileRegistry()), provider=Panel(SEED).provider
        )
        results.append(asyncio.run(run_nova(ctx, question)))
        store.close()

    threads = [threading.Thread(target=one, args=(f"Question {i}?",)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert sorted(r.status for r in results) == ["completed", "completed"]
    store = Store(home)
    for run in results:
        stored = records.turns(store, run.id)
        assert [t["seq"] for t in stored] == list(range(1, 8))
        assert records.get_run(store, run.id)["question"] == run.question
