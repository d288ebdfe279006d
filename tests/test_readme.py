"""The README's examples run: every console block (commands and the output it shows) and every
Python snippet, in a fresh project, so the walkthrough cannot drift from what Noetic does.

In the shown output a line that is only ``…`` stands for any number of lines, and ``…`` inside
a line for any text. Commands that install software, change the user's shell set-up or need
another program are listed in ``NOT_RUN`` with the reason; anything else must run and exit 0.
"""

from __future__ import annotations

import os
import re
import runpy
import signal
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
BIN = Path(sys.executable).parent

NOT_RUN = {
    "pipx install": "installs software",
    "uv tool install": "installs software",
    "noetic --install-completion": "edits the user's shell start-up file",
    "claude mcp add": "needs Claude Code",
}


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


def _steps(block: str) -> list[tuple[str, list[str]]]:
    """(command, the output lines shown under it) for each ``$`` line of a console block."""
    steps: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        else:
            steps[-1][1].append(line)
    return steps


def matches(shown: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` is what ``shown`` describes, with ``…`` as the wildcard."""
    if not shown:
        return not actual
    head, rest = shown[0], shown[1:]
    if head == "…":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("…"))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


def _skipped(command: str) -> str | None:
    return next((why for start, why in NOT_RUN.items() if command.startswith(start)), None)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh git project where the store is the project's own ``.noetic``."""
    monkeypatch.delenv("NOETIC_HOME")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ['PATH']}")
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    return root


def _serve(command: str, cwd: Path) -> list[str]:
    """`noetic serve` until it has printed how to connect; on a free port, shown as 8765."""
    proc = subprocess.Popen(
        [*command.split(), "--port", "0"], cwd=cwd, stderr=subprocess.PIPE, text=True
    )
    lines = []
    try:
        assert proc.stderr is not None
        while not lines or "claude mcp add --transport http" not in lines[-1]:
            line = proc.stderr.readline()
            assert line, "".join(lines)
            lines.append(re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:8765", line.rstrip("\n")))
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        proc.stderr.close()
    return lines


def test_the_readme_has_examples_to_run():
    assert len(_blocks("console")) >= 3
    assert len(_blocks("python")) >= 1


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("index", range(len(_blocks("console"))))
def test_console_block_runs_and_prints_what_it_shows(index, project):
    for command, shown in _steps(_blocks("console")[index]):
        if _skipped(command):
            assert not shown, f"{command!r} is not run, so it must not show output"
            continue
        if command.startswith("noetic serve"):
            actual = _serve(command, project)
        else:
            done = subprocess.run(
                ["bash", "-o", "pipefail", "-c", command],
                cwd=project,
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, f"$ {command}\n{done.stdout}{done.stderr}"
            actual = done.stdout.splitlines()
        assert matches(shown, actual), (
            f"$ {command}\nshown:\n" + "\n".join(shown) + "\nactual:\n" + "\n".join(actual)
        )


@pytest.mark.subprocess
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_python_snippet_runs(index, project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    snippet = project / "snippet.py"
    snippet.write_text(_blocks("python")[index], encoding="utf-8")
    runpy.run_path(str(snippet), run_name="__main__")
    assert capsys.readouterr().out.strip()


def test_the_wildcard_matcher():
    assert matches(["a", "…", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "…", "d"], ["a", "d"])
    assert matches(["x … z"], ["x yy z"])
    assert not matches(["a", "d"], ["a", "b", "d"])
    assert not matches(["x … z"], ["x y"])
    assert not matches(["a"], [])
