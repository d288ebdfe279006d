"""What the workflow commands load: plain data, no pydantic.

An agent runs ``bootstrap``, ``preflight``, ``investigate``, ``check``, ``postflight``,
``outcome`` and ``state`` several times a task, each a fresh process, so what they import is
most of what they cost. Each runs here in a fresh interpreter, as a shell runs it, with
``--json`` and as text, and must leave none of the heavy packages in ``sys.modules``:
assessments, decisions, profiles, events and calibration results are plain data
(:mod:`noetic.plain`), and so are the store's records and the fitted maps (no class is
compiled by ``dataclasses`` as its module loads); the profiles' YAML is read from the cache
once parsed. A refused input is refused the same way. No timing is asserted.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from .._modules import modules_loaded

HEAVY = ("pydantic", "pydantic_core", "yaml", "rich", "httpx", "psycopg", "mcp",
         "opentelemetry", "typer", "click", "jinja2", "numpy")  # fmt: skip
# nor the standard library's dataclasses and the inspect it loads (≈6 ms of every command):
# plain values are built without them
# and no subprocess (a checkpoint's git, the recall indexer's start are spawned without it: it
# loads threading, signal, selectors and locale, ≈3 ms), nor threading (the store's locks are
# _thread's) or importlib (a command's module is imported by name), nor typing (≈2 ms: its
# names are imported for the type checker only)
WATCHED = (*HEAVY, "dataclasses", "inspect", "subprocess", "threading", "importlib", "typing")
VECTORS = {"engagement": 0.8, "know": 0.6, "do": 0.7, "context": 0.6, "clarity": 0.7,
           "coherence": 0.7, "signal": 0.6, "density": 0.4, "state": 0.6, "change": 0.6,
           "completion": 0.5, "impact": 0.6, "uncertainty": 0.3}  # fmt: skip


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NOETIC_HOME", str(tmp_path / "store"))
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("HOME", str(tmp_path))
    # a POSTFLIGHT's task is indexed for recall in a process of its own (the default), not in
    # the command's, where the embedder would load numpy; here it is not indexed at all
    monkeypatch.setenv("NOETIC_INDEX", "off")
    for name in ("NOETIC_SESSION", "NOETIC_AI_ID", "OTEL_EXPORTER_OTLP_ENDPOINT",
                 "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):  # fmt: skip
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def run(home: Path, *args: str, code: int = 0, text: bool = False) -> dict[str, Any]:
    report = modules_loaded([*args] if text else [*args, "--json"], WATCHED, home)
    assert report["code"] == code, report["output"]
    report["answer"] = report["output"][0] if text else json.loads(report["output"][0])
    return report


@pytest.mark.subprocess
@pytest.mark.parametrize("text", [False, True], ids=["json", "text"])
def test_the_workflow_commands_load_no_heavy_module(home: Path, text: bool) -> None:
    # the first bootstrap parses the profiles' YAML and keeps it; every command after reads it
    first = run(home, "bootstrap", "--ai-model", "gpt-4o", text=text)
    assert set(first["loaded"]) - {"importlib"} <= {"yaml"}  # yaml's own import
    steps: list[tuple[str, ...]] = [
        ("bootstrap", "--ai-model", "gpt-4o"),
        ("preflight", "fix the bug", "--vectors", json.dumps(VECTORS), "--p-success", "0.7"),
        ("investigate", "--note", "read the code", "--vector", "know"),
        ("check", "--vectors", json.dumps({"know": 0.9, "uncertainty": 0.1})),
        ("check", "--vectors", json.dumps({"know": 0.95}), "--request-id", "r1"),
        ("state",),
        ("postflight", "--vectors", json.dumps(VECTORS), "--review", "adversarial"),
        ("outcome", "--score", "1"),
        ("state",),
    ]
    for step in steps:
        report = run(home, *step, text=text)
        assert report["loaded"] == [], (step, report["loaded"])
        # records, fitted maps and replies are plain values: no class compiled as it loads
        assert report["dataclasses"] == [], (step, report["dataclasses"])
    # what they answered is the workflow's, not a shell of it
    if text:
        assert "latest: postflight" in report["answer"] and "next: start a task" in report["answer"]
    else:
        assert report["answer"]["open_cascade"] is None
        assert report["answer"]["latest"]["assessment"]["review"] == "adversarial"


@pytest.mark.subprocess
def test_refused_input_is_refused_without_heavy_modules(home: Path) -> None:
    run(home, "bootstrap")
    out_of_range = run(home, "preflight", "t", "--vectors", json.dumps({**VECTORS, "know": 1.5}),
                       code=1)  # fmt: skip
    assert "vector 'know' is 1.5, outside [0, 1]" in out_of_range["answer"]["error"]["message"]
    unknown = run(home, "preflight", "t", "--vectors", json.dumps({**VECTORS, "wisdom": 0.5}),
                  code=1)  # fmt: skip
    assert "unknown vector 'wisdom'" in unknown["answer"]["error"]["message"]
    extra = run(home, "preflight", "t", "--vectors",
                json.dumps({"vectors": VECTORS, "mood": "good"}), code=1)  # fmt: skip
    assert "unknown assessment fields: mood" in extra["answer"]["error"]["message"]
    for report in (out_of_range, unknown, extra):
        assert report["loaded"] == [] and report["answer"]["error"]["type"] == "ValidationError"


@pytest.mark.subprocess
def test_a_finished_task_starts_its_indexer_without_subprocess(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # POSTFLIGHT starts the recall indexer in the background (the default), spawned without
    # subprocess and left to the system as the command ends; the indexer, in its own process,
    # indexes the task
    run(home, "bootstrap")
    run(home, "preflight", "fix the bug", "--vectors", json.dumps(VECTORS))
    monkeypatch.setenv("NOETIC_INDEX", "background")
    # nor shlex: the indexer's command is a list of arguments, not text to quote
    done = modules_loaded(["postflight", "--vectors", json.dumps(VECTORS), "--json"],
                          (*WATCHED, "shlex"), home)  # fmt: skip
    assert done["code"] == 0, done["output"]
    assert done["loaded"] == []
    assert json.loads(done["output"][0])["cascade"]["status"] == "completed"
    from noetic.embeddings import recall_embedder
    from noetic.recall.index import pending_count
    from noetic.store import Store

    def waiting() -> int:
        with Store(home / "store") as store:
            return pending_count(store, recall_embedder().name)

    deadline = time.monotonic() + 120
    while waiting() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert waiting() == 0, "the background indexer never embedded the finished task"
