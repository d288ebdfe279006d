"""What a newcomer meets first: the version, help, completion, hints that keep their brackets,
the dependencies a plain install brings, and a Makefile that probes for Python quietly."""

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from typer.testing import CliRunner

import noetic
from noetic.cli import app

ROOT = Path(__file__).resolve().parents[2]
NOETIC = str(Path(sys.executable).with_name("noetic"))
runner = CliRunner()


def test_version_flag_prints_the_installed_version():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout == f"noetic {noetic.__version__}\n"
    assert noetic.__version__ == importlib.metadata.version("noetic")


@pytest.mark.subprocess
def test_bare_noetic_prints_help_on_stdout_and_succeeds():
    done = subprocess.run([NOETIC], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert done.stdout.startswith("Usage: noetic")
    for command in ("bootstrap", "preflight", "mcp", "serve", "recall"):
        assert re.search(rf"^\s+{command}\s", done.stdout, re.M), command


@pytest.mark.parametrize(
    "group", ["sessions", "profile", "calibration", "observe", "cascade", "goals", "checkpoint"]
)
def test_a_command_group_without_a_subcommand_prints_its_help_and_succeeds(group):
    result = runner.invoke(app, [group])
    assert result.exit_code == 0
    assert result.stdout.startswith(f"Usage: noetic {group}") and "Commands" in result.stdout


@pytest.mark.subprocess
def test_shell_completion_is_offered_and_completes_commands():
    assert "--install-completion" in runner.invoke(app, ["--help"]).stdout
    env = {**os.environ, "_NOETIC_COMPLETE": "complete_bash", "COMP_WORDS": "noetic pre"}
    done = subprocess.run(
        [NOETIC], env={**env, "COMP_CWORD": "1"}, capture_output=True, text=True, timeout=60
    )
    assert "preflight" in done.stdout.split()


def test_hints_keep_their_square_brackets():
    """Rich markup must not eat `[provider]` or `noetic[openai]` out of a fix."""
    result = runner.invoke(app, ["cascade", "run", "a task"])
    assert result.exit_code == 1
    assert "[provider] default = " in result.stderr


@pytest.mark.parametrize("name", ["openai-compatible:m:", "openai-compatible:[bold]x[/]:"])
def test_a_provider_name_is_printed_as_written_never_as_markup_or_emoji(name):
    result = runner.invoke(app, ["cascade", "run", "a task", "--provider", name])
    assert result.exit_code == 1
    assert f"provider {name!r} needs a base URL" in result.stderr


def test_a_store_path_is_printed_as_written(tmp_path):
    home = tmp_path / "[dim]:smile:" / ".noetic"
    result = runner.invoke(app, ["where", "--store", str(home)])
    assert result.exit_code == 0, result.stderr
    assert str(home) in result.stdout


def test_errors_to_a_pipe_are_never_wrapped():
    long_name = "x" * 150
    result = runner.invoke(app, ["profile", "show", long_name])
    assert result.exit_code == 1
    first = result.stderr.splitlines()[0]
    assert long_name in first and first.startswith("error:")


def test_the_mcp_server_and_offline_recall_come_with_a_plain_install():
    """No extra is needed for `noetic mcp`, `noetic serve`, `noetic recall`; SDKs stay extras."""
    core = {
        Requirement(r).name.lower()
        for r in importlib.metadata.requires("noetic") or []
        if "extra ==" not in r
    }
    assert {"mcp", "uvicorn", "wordllama", "tokenizers", "safetensors"} <= core
    assert not {"anthropic", "openai", "qdrant-client", "matplotlib"} & core


@pytest.mark.subprocess
def test_make_probes_for_python_without_printing_shim_errors(tmp_path):
    """A pyenv shim for a version that is not installed prints to stderr; make stays quiet."""
    if shutil.which("make") is None:
        raise AssertionError("make is needed to build and test Noetic")
    shims = tmp_path / "shims"
    shims.mkdir()
    for name in ("python3.13", "python3.12"):
        shim = shims / name
        shim.write_text(f"#!/bin/sh\necho 'pyenv: {name}: command not found' >&2\nexit 127\n")
        shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "lint"], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "command not found" not in done.stderr


@pytest.mark.slow
def test_tables_to_a_pipe_keep_whole_ids_and_names():
    long_ai = "an-agent-with-a-rather-long-identifier-" * 3
    assert runner.invoke(app, ["bootstrap", "--ai-id", long_ai, "--json"]).exit_code == 0
    sessions = runner.invoke(app, ["sessions", "list"]).stdout
    assert long_ai in sessions
    profiles = runner.invoke(app, ["profile", "list"])
    from noetic.profiles import ProfileRegistry

    registry = ProfileRegistry()
    for name in registry.names():
        assert registry.get(name).description in profiles.stdout


@pytest.mark.subprocess
def test_a_missing_provider_sdk_names_the_extra_with_its_brackets(tmp_path):
    """Without the openai SDK, the fix reads `pip install 'noetic[openai]'`, brackets and all."""
    script = (
        "import sys; sys.modules['openai'] = None\n"
        "from noetic.cli import main\n"
        "sys.argv = ['noetic', 'preflight', 't', '--provider', 'openai:gpt-4o']\n"
        "main()\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": "sk-test", "NOETIC_HOME": str(tmp_path / "s")}
    assert runner.invoke(app, ["bootstrap", "--store", str(tmp_path / "s")]).exit_code == 0
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1, done.stderr
    assert "fix: pip install 'noetic[openai]'" in done.stderr


@pytest.mark.parametrize("score", ["1.5", "-0.1", "nan"])
def test_an_outcome_out_of_range_is_named_before_any_store_is_looked_for(score):
    """No store yet: the range is the first problem to fix, so it is the one named."""
    result = runner.invoke(app, ["outcome", "--score", score])
    assert result.exit_code == 1
    assert result.stderr.startswith("error: outcome score must be in [0, 1]"), result.stderr


@pytest.mark.subprocess
def test_make_says_what_it_installs_before_pip_runs():
    """`make run` on a fresh machine is quiet for minutes while pip runs: it says why first."""
    done = subprocess.run(
        ["make", "-n", "-C", str(ROOT), "-W", "pyproject.toml", ".venv/.installed"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    said = next(
        i for i, line in enumerate(lines) if line.startswith("echo ") and "installing" in line
    )
    assert said < next(i for i, line in enumerate(lines) if "pip install" in line)
