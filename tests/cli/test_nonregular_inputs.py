"""A path Noetic reads that is a FIFO, a device or a folder is refused with its kind, at once:
nothing waits on a named pipe nobody writes to."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from noetic.errors import ValidationError
from noetic.llm.prices import PriceTable
from noetic.llm.registry import resolve_provider_spec
from noetic.nova.personas import load_persona
from noetic.profiles import load_profile_file
from noetic.tools.web import agent_config

from ..conftest import uniform


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "input.pipe"
    os.mkfifo(path)
    return path


def promptly(fifo: Path, work: Callable[[], Any]) -> Any:
    """``work()``'s result; if it is still waiting after 30 s (blocked on the FIFO), the FIFO is
    opened for writing to release it and the test fails."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except Exception as exc:
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(30)
    if thread.is_alive():
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(10)
        pytest.fail("reading the FIFO blocked")
    if "error" in box:
        raise box["error"]
    return box["value"]


def cli_error(fifo: Path, *args: str) -> str:
    from noetic.cli import app

    cut = args.index("--") if "--" in args else len(args)
    argv = [*args[:cut], "--json", *args[cut:]]
    result = promptly(fifo, lambda: CliRunner().invoke(app, argv))
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    return json.loads(result.stdout)["error"]["message"]


@pytest.mark.subprocess
def test_command_line_paths(fifo: Path, _isolated_home: Path, tmp_path: Path) -> None:
    from noetic.cli import app

    CliRunner().invoke(app, ["bootstrap", "--json"])
    scores = json.dumps(uniform(0.8))
    assert CliRunner().invoke(app, ["preflight", "t", "--vectors", scores, "--json"]).exit_code == 0
    for args in (
        ("outcome", "--from-junit", str(fifo)),
        ("check", "--vectors-file", str(fifo)),
        ("sessions", "import", str(fifo)),
        ("profile", "import", str(fifo)),
        ("agent", "gate", "--policy", str(fifo), "--", "ls"),
    ):
        message = cli_error(fifo, *args)
        assert str(fifo) in message and "FIFO (named pipe)" in message, (args, message)
    device = cli_error(fifo, "outcome", "--from-junit", "/dev/zero")
    assert "/dev/zero is a character device" in device
    folder = cli_error(fifo, "outcome", "--from-junit", str(tmp_path))
    assert f"{tmp_path} is a folder" in folder


def test_personas_profiles_and_configuration(fifo: Path, tmp_path: Path) -> None:
    for load in (load_persona, load_profile_file):
        with pytest.raises(ValidationError, match="is a FIFO"):
            promptly(fifo, lambda load=load: load(fifo))
    home = tmp_path / "store"
    home.mkdir()
    os.mkfifo(home / "config.toml")
    for read in (
        lambda: agent_config(home),
        lambda: PriceTable.from_config(home),
        lambda: resolve_provider_spec(None, home),
    ):
        with pytest.raises(ValidationError, match=r"config\.toml is a FIFO"):
            promptly(home / "config.toml", read)


def test_a_hosts_settings_file(fifo: Path, tmp_path: Path, monkeypatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / ".mcp.json")
    monkeypatch.setenv("HOME", str(tmp_path))
    message = cli_error(project / ".mcp.json", "setup", "claude-code", "--project", str(project))
    assert f"{project / '.mcp.json'} is a FIFO" in message
