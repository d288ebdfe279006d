"""Lines where bash runs what a grammar reads as text: each is shown to run a command under the
real bash, then shown refused by the gate on a host with no sandbox."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from noetic.tools.shellgate import check_command

# {m} is a marker file outside the workspace: bash creating it proves the line runs `touch`.
EVALUATED = [
    "declare -i x; x='a[$(touch {m})]'",
    "x='a[$(touch {m})]'; (( x ))",
    "x='a[$(touch {m})]'; echo $(( x ))",
    "test -v 'a[$(touch {m})]'",
    "[[ -v 'a[$(touch {m})]' ]]",
    "printf -v 'a[$(touch {m})]' x",
    "read 'a[$(touch {m})]' <<< x",
    "arr=(); arr['$(touch {m})']=1",
    "x='a[$(touch {m})]'; for ((i=x;;)); do break; done",
    'echo "${{x:-`touch {m}`}}"',
    "mapfile -C 'touch {m}' -c 1 < notes.txt",
    "hash -p /usr/bin/touch ls; ls {m}",
]


@pytest.mark.subprocess
@pytest.mark.parametrize("line", EVALUATED)
def test_bash_runs_it_and_the_gate_refuses_it(tmp_path: Path, line: str) -> None:
    bash = shutil.which("bash")
    assert bash is not None
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "notes.txt").write_text("one\n")
    marker = tmp_path / "ran"
    text = line.format(m=marker)
    subprocess.run([bash, "-c", text], cwd=workspace, capture_output=True, timeout=10, check=False)
    assert marker.exists(), f"bash did not run the command in {text!r}"
    verdict = check_command(text, workspace, home=str(tmp_path / "home"))
    assert not verdict.allowed, text
    assert all(v.part in text for v in verdict.violations)


def test_a_literal_dollar_paren_alone_is_only_text(tmp_path: Path) -> None:
    for text in (
        "echo '$(date)'",
        "git commit -m 'use $(...) not backticks'",
        "awk '{print $(NF-1)}' f",
    ):
        assert check_command(text, tmp_path, home=str(tmp_path / "h")).allowed, text
