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
import sys
from pathlib import Path

import pytest

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
)

HARNESS = """
import json, sys
from noetic.cli import main
args, heavy = json.loads(sys.argv[1]), json.loads(sys.argv[2])
sys.argv = ["noetic", *args]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code or 0
print(json.dumps({"code": code, "loaded": [m for m in heavy if m in sys.modules]}),
      file=sys.stderr)
"""


def loaded(args: list[str], cwd: Path, heavy: tuple[str, ...] = HEAVY) -> set[str]:
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS, json.dumps(args), json.dumps(heavy)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["code"] == 0, (args, proc.stdout, proc.stderr)
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
