"""What each workflow command loads: nothing it does not use.

Every command runs in a fresh interpreter (the way an agent's shell calls it) and reports the
heavy packages left in ``sys.modules``. The workflow commands need the models (pydantic) and
the profiles (yaml); none of them may load a model SDK, the MCP server, HTTP clients, plotting,
vector databases or the embedder: POSTFLIGHT hands the finished task to a background indexer
rather than loading the embedder itself. They run on the fast path, so they load no typer, and
with ``--json`` no rich either.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from .._modules import modules_loaded
from ..conftest import uniform

HEAVY = (
    "mcp",
    "anthropic",
    "openai",
    "httpx",
    "uvicorn",
    "starlette",
    "matplotlib",
    "qdrant_client",
    "sklearn",
    "jsonschema",
    "numpy",
    "tokenizers",
    "wordllama",
    "safetensors",
    "psycopg",  # the PostgreSQL store's: a SQLite store never loads it
    "psycopg_pool",
    "opentelemetry",  # traces go out only when OTEL_EXPORTER_OTLP_ENDPOINT is set
)


def loaded(args: list[str], cwd: Path, heavy: tuple[str, ...] = HEAVY) -> set[str]:
    report = modules_loaded(args, heavy, cwd)
    assert report["code"] == 0, (args, report["output"])
    return set(report["loaded"])


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.delenv("NOETIC_HOME", raising=False)
    monkeypatch.delenv("NOETIC_INDEX", raising=False)  # the default: index in the background
    monkeypatch.setenv("NOETIC_AI_ID", "importer")
    return root


@pytest.mark.slow
@pytest.mark.subprocess
def test_each_workflow_command_loads_only_what_it_uses(project: Path) -> None:
    vectors = json.dumps(uniform(0.8))
    commands = [
        ["bootstrap"],
        ["preflight", "tidy the parser", "--vectors", vectors],
        ["investigate", "--note", "read the parser"],
        ["check", "--vectors", vectors],
        ["postflight", "--vectors", vectors],
        ["state"],
        ["state", "--json"],
        ["sessions", "list"],
        ["where"],
    ]
    fast_path = ("typer", "click", "typer._click")
    for i, args in enumerate(commands):
        assert loaded(args, project, HEAVY + fast_path if i < 7 else HEAVY) == set(), args
    # An outcome, recorded after the task: the fast path too.
    assert loaded(["outcome", "--success", "--json"], project, HEAVY + fast_path) == set()
    # A host runs `noetic hook` on every tool call: the fast path too.
    assert loaded(["hook", "post-tool-use"], project, HEAVY + fast_path + ("rich",)) == set()
    # The same task again, for a program: no terminal output library either.
    again = project.parent / "again"
    again.mkdir()
    subprocess.run(["git", "init", "-q", str(again)], check=True)
    for args in commands[:6]:
        assert loaded([*args, "--json"], again, HEAVY + fast_path + ("rich",)) == set(), args
    # The calibration report needs numpy for its statistics, and nothing else heavy.
    assert loaded(["calibration", "report"], project) <= {"numpy"}
