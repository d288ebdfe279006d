"""Finished tasks are indexed for recall off the command's own process, and nothing is lost when
that never happens."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.embeddings import recall_embedder
from noetic.recall import background
from noetic.recall.index import pending_count
from noetic.store import Store

from ..conftest import uniform

GATED = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))


def finish(home: Path, task: str) -> None:
    runner = CliRunner()
    store = ["--store", str(home)]
    assert runner.invoke(app, ["bootstrap", "--project", "p", *store]).exit_code == 0
    assert runner.invoke(app, ["preflight", task, "--vectors", GATED, *store]).exit_code == 0
    done = runner.invoke(app, ["postflight", "--vectors", GATED, *store])
    assert done.exit_code == 0, done.output


def waiting(home: Path) -> int:
    with Store(home) as store:
        return pending_count(store, recall_embedder().name)


@pytest.mark.subprocess
def test_postflight_leaves_indexing_to_a_background_process(tmp_path, monkeypatch):
    monkeypatch.delenv("NOETIC_INDEX", raising=False)
    home = tmp_path / "s"
    finish(home, "make the receipts page load faster")
    deadline = time.monotonic() + 120
    while waiting(home) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert waiting(home) == 0, "the background indexer never embedded the finished task"


@pytest.mark.subprocess
def test_off_leaves_tasks_pending_and_recall_catches_up(tmp_path, monkeypatch):
    monkeypatch.setenv("NOETIC_INDEX", "off")
    home = tmp_path / "s"
    finish(home, "make the receipts page load faster")
    finish(home, "translate the onboarding emails to German")
    assert waiting(home) == 2  # as if the indexer had been killed before it ran
    found = CliRunner().invoke(
        app, ["recall", "receipts take ages to load", "--json", "--store", str(home)]
    )
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["chosen"][0]["task"] == "make the receipts page load faster"
    assert waiting(home) == 0


@pytest.mark.subprocess
def test_inline_indexes_before_the_command_returns(tmp_path, monkeypatch):
    monkeypatch.setenv("NOETIC_INDEX", "inline")
    home = tmp_path / "s"
    finish(home, "make the receipts page load faster")
    assert waiting(home) == 0


@pytest.mark.parametrize("value", ["", "sometimes", "BACKGROUND"])
def test_the_mode_defaults_to_background(value, monkeypatch):
    monkeypatch.setenv("NOETIC_INDEX", value)
    assert background.mode() == "background"


@pytest.mark.subprocess
def test_the_indexer_run_by_hand(tmp_path, monkeypatch):
    monkeypatch.setenv("NOETIC_INDEX", "off")
    home = tmp_path / "s"
    finish(home, "make the receipts page load faster")
    module = [sys.executable, "-m", "noetic.recall.background"]
    usage = subprocess.run(module, capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and "usage" in usage.stderr
    missing = subprocess.run([*module, str(tmp_path / "nowhere")], capture_output=True, timeout=60)
    assert missing.returncode == 1 and not (tmp_path / "nowhere").exists()
    ran = subprocess.run([*module, str(home)], capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert waiting(home) == 0
