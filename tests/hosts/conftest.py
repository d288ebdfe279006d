"""A temporary home directory and project for every host test: nothing touches the user's."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from noetic.cli import app

runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    monkeypatch.delenv("CLAUDE_ENV_FILE", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return path


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    monkeypatch.chdir(path)
    return path


def cli(*args: str, input: str | None = None):
    return runner.invoke(app, list(args), input=input)


def cli_json(*args: str, input: str | None = None, code: int = 0):
    result = cli(*args, "--json", input=input)
    assert result.exit_code == code, result.output
    return json.loads(result.stdout)


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` (but the git folder) with its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }
