"""``noetic``'s public names: every engine's entry point, what runs them, the operations; all
loaded on first use, so ``import noetic`` stays cheap. And ``python -m noetic`` is the CLI."""

from __future__ import annotations

import inspect
import json
import subprocess
import sys

import pytest

import noetic


def test_every_public_name_resolves() -> None:
    for name in noetic.__all__:
        assert getattr(noetic, name) is not None, name


def test_the_engines_their_context_and_the_operations_are_public() -> None:
    expected = {
        "run_cascade", "run_chain", "run_nova", "resume_nova", "run_agent", "Agent",
        "build_context", "ScriptedProvider", "operations", "start_cascade", "start_chain",
        "start_nova", "open_agent", "start_agent", "resume_agent",
    }  # fmt: skip
    assert expected <= set(noetic.__all__)
    for name in ("run_cascade", "run_chain", "run_nova", "start_cascade", "start_agent"):
        assert inspect.iscoroutinefunction(getattr(noetic, name)), name
    assert noetic.operations.start_cascade is noetic.start_cascade


@pytest.mark.subprocess
def test_importing_noetic_loads_none_of_them() -> None:
    probe = (
        "import json, sys, noetic\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('noetic.', 'pydantic')))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(out.stdout) == []


@pytest.mark.subprocess
def test_python_dash_m_noetic_is_the_command() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "noetic", "--version"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"noetic {noetic.__version__}"
