"""A store in a user's repository: it ignores itself, and the docs name what creates one."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app

from ..llm.model_server import reply, running
from ..nova.test_cli import ANY_TURN

runner = CliRunner()
DOCS = Path(__file__).resolve().parents[2] / "docs" / "storage.md"


def _repo(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def _untracked(repo: Path) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=all"],
                         capture_output=True, text=True, check=True).stdout  # fmt: skip
    return out.splitlines()


@pytest.mark.subprocess
def test_a_store_nova_creates_in_a_repository_ignores_itself(tmp_path, monkeypatch):
    repo = _repo(tmp_path / "project")
    monkeypatch.chdir(repo)
    monkeypatch.delenv("NOETIC_HOME")
    with running() as server:
        server.default = reply(ANY_TURN)
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["nova", "OAuth2?", "--provider", spec, "--json"])
    assert result.exit_code == 0, result.output
    assert (repo / ".noetic" / "noetic.db").is_file()
    assert (repo / ".noetic" / ".gitignore").read_text().splitlines()[-1] == "*"
    assert _untracked(repo) == []


@pytest.mark.subprocess
def test_a_deleted_gitignore_stays_deleted_so_a_store_can_be_shared(tmp_path, monkeypatch):
    repo = _repo(tmp_path / "project")
    monkeypatch.chdir(repo)
    monkeypatch.delenv("NOETIC_HOME")
    assert runner.invoke(app, ["bootstrap"]).exit_code == 0
    (repo / ".noetic" / ".gitignore").unlink()
    assert runner.invoke(app, ["bootstrap"]).exit_code == 0
    assert not (repo / ".noetic" / ".gitignore").exists()
    assert any(".noetic/noetic.db" in line for line in _untracked(repo))


def test_the_docs_name_nova_and_the_agent_among_the_commands_that_create_a_store():
    text = " ".join(DOCS.read_text().split())
    creating = re.search(r"Only commands that write create a store: (.*?)\. Every other", text)
    assert creating, "docs/storage.md lists the commands that create a store"
    for command in ("`bootstrap`", "`cascade run`", "`observe run`", '`nova "question"`',
                    "`agent`", "`sessions import`"):  # fmt: skip
        assert command in creating.group(1)
    assert "`.noetic/.gitignore`" in text and "delete that file" in text


@pytest.mark.slow
def test_nova_and_agent_create_a_store_as_the_docs_say(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("NOETIC_HOME")
    with running() as server:
        server.default = reply(json.dumps({"safe": True, "tools": [], "mode": "fast",
                                           "answer": "hello"}))  # fmt: skip
        spec = f"openai-compatible:{server.url}/v1#m"
        result = runner.invoke(app, ["agent", "hi", "--provider", spec, "--json"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / ".noetic" / "noetic.db").is_file()
