"""What the gate leaves to the sandbox, the real bubblewrap contains.

A program whose effects the gate does not model — an alias from the repository's config, a
tool's own shell escape, code on standard input, a program outside the workspace — is refused
without the sandbox and allowed inside it. Each is aimed at a canary folder outside the
workspace that the sandbox shows read-only; run by bash without the sandbox (the control) the
same line changes the canary, run through the shell tool in bubblewrap it does not.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from noetic.errors import ValidationError
from noetic.tools import sandbox as sandbox_module
from noetic.tools.shell import ShellRunner

ATTACKS = [
    "git -C . x",
    "sqlite3 x.db '.shell touch {C}/sqlite'",
    "make -s SHELL=/bin/touch .SHELLFLAGS={C}/make",
    "make -s -f /dev/stdin <<< $'all:\\n\\ttouch {C}/stdin'",
    "ed -s notes.txt <<< '!touch {C}/ed'",
    "{C}/tool.sh",
    "perl -e 'open F, \">{C}/perl\" or die'",
    "cmake -P {C}/script.cmake",
]


@pytest.fixture(scope="module", autouse=True)
def _bubblewrap_is_here() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed: run `make test`, which installs it")
    found = sandbox_module.detect()
    if found.binary is None:
        pytest.fail(f"bubblewrap cannot create a sandbox on this machine: {found.note}")


@pytest.fixture
def places() -> Iterator[tuple[Path, Path, Path]]:
    """A workspace, a canary and a home folder — not under /tmp, which the sandbox replaces
    with an empty folder, so the canary is there to be reached, read-only."""
    cache = Path(os.path.expanduser("~/.cache"))
    cache.mkdir(parents=True, exist_ok=True)
    base = Path(tempfile.mkdtemp(prefix="noetic-sandbox-canary-", dir=cache))
    try:
        workspace, canary, home = base / "ws", base / "canary", base / "home"
        for folder in (workspace, canary, home):
            folder.mkdir()
        (canary / "keep").write_text("KEEP\n")
        (canary / "tool.sh").write_text(f"#!/bin/sh\ntouch {canary}/tool\n")
        (canary / "tool.sh").chmod(0o755)
        (canary / "script.cmake").write_text(f'file(WRITE "{canary}/cmake" "x")\n')
        (workspace / "notes.txt").write_text("a\n")
        (workspace / "Makefile").write_text("all:\n\t@true\n")
        env = {
            "HOME": str(home),
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "GIT_CONFIG_NOSYSTEM": "1",
        }
        subprocess.run(["git", "init", "-q"], cwd=workspace, check=True, env=env)
        with (workspace / ".git" / "config").open("a") as config:
            config.write(f"[alias]\n\tx = !touch {canary}/alias\n")
        yield workspace, canary, home
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _listing(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()}


@pytest.mark.subprocess
@pytest.mark.parametrize("template", ATTACKS)
def test_what_the_gate_leaves_to_the_sandbox_cannot_reach_outside(
    places: tuple[Path, Path, Path], template: str
) -> None:
    workspace, canary, home = places
    line = template.format(C=canary)
    boxed = ShellRunner(workspace, sandbox="required", home=str(home))
    assert boxed.judge(line).allowed, boxed.judge(line).explain()
    bare = ShellRunner(workspace, sandbox="off", home=str(home))
    with pytest.raises(ValidationError, match="refused by the shell gate"):
        asyncio.run(bare.run(line))
    before = _listing(canary)
    done = asyncio.run(boxed.run(line))
    assert done.sandbox == "bubblewrap"
    assert _listing(canary) == before, f"{line!r} changed the canary in the sandbox: {done}"
    # the control: the same line, run by bash with no sandbox and no gate, reaches it
    env = {"HOME": str(home), "PATH": "/usr/local/bin:/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(
        ["bash", "-c", line], cwd=workspace, env=env, capture_output=True, timeout=30,
        check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert _listing(canary) != before, f"{line!r} did nothing without the sandbox: not an attack"
