"""The sandbox mounts the protected set read-only: every file a developer's own tools run later
(the scripts a hook calls, host configurations, Python start-up files, a `.noetic` anywhere),
tried through the shell tool in a real bubblewrap."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
from pathlib import Path

import pytest

from noetic.errors import UsageError
from noetic.tools import sandbox as sandbox_module
from noetic.tools.shell import ShellRunner

ORIGINAL = "original\n"
PROTECTED = [
    "scripts/lint.sh",  # called by the pre-commit hook
    "tools/check.py",  # called by lint.sh in turn
    ".claude/settings.json",
    ".mcp.json",
    ".vscode/tasks.json",
    ".envrc",
    ".pre-commit-config.yaml",
    ".npmrc",
    "sitecustomize.py",
    ".venv/lib/python3.12/site-packages/pkg.pth",
    "sub/.noetic/config.toml",
]


@pytest.fixture(scope="module", autouse=True)
def _bubblewrap_is_here() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed: run `make test`, which installs it")
    found = sandbox_module.detect()
    if found.binary is None:
        pytest.fail(f"bubblewrap cannot create a sandbox on this machine: {found.note}")


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True, env={"HOME": str(home)})
    for name in PROTECTED:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(ORIGINAL)
    (ws / "scripts" / "lint.sh").write_text("#!/bin/sh\npython3 tools/check.py\n")
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n./scripts/lint.sh\n")
    (ws / "README.md").write_text(ORIGINAL)
    return ws


def sh(ws: Path, command: str) -> tuple[int | None, str]:
    runner = ShellRunner(ws, sandbox="required", home=str(ws.parent / "home"))
    done = asyncio.run(runner.run(command))
    return done.exit_code, done.output


def test_the_protected_set_of_a_workspace(ws: Path) -> None:
    from noetic.tools.shellgate.protected import protected_set

    found = protected_set(str(ws), home=str(ws.parent / "home")).existing()
    real = str(ws.resolve())
    assert f"{real}/.git" in found
    for name in PROTECTED:
        path = f"{real}/{name}"
        assert any(path == p or path.startswith(p + "/") for p in found), name
    assert f"{real}/README.md" not in found


@pytest.mark.subprocess
@pytest.mark.parametrize("name", PROTECTED)
def test_a_sandboxed_command_cannot_change_what_runs_later(ws: Path, name: str) -> None:
    before = (ws / name).read_text()
    # code the gate leaves to the sandbox: only the read-only mount stands in its way
    for code in (
        f"open({name!r}, 'a').write('planted')",
        f"import os; os.remove({name!r})",
        f"import os; os.rename({name!r}, {name + '.old'!r})",
        f"import os; os.rename({str(Path(name).parent)!r}, 'moved')",
    ):
        status, output = sh(ws, f'python3 -c "{code}"')
        assert status != 0, (code, output)
        assert (ws / name).read_text() == before, code


@pytest.mark.subprocess
def test_ordinary_files_stay_writable(ws: Path) -> None:
    assert sh(ws, "printf changed > README.md && mkdir -p src && printf x > src/a.py")[0] == 0
    assert (ws / "README.md").read_text() == "changed"
    assert (ws / "src" / "a.py").read_text() == "x"


@pytest.mark.subprocess
def test_no_folder_above_a_protected_file_can_be_moved_aside(ws: Path) -> None:
    hooks = ws / "ci" / "hooks"
    hooks.mkdir(parents=True)
    (hooks / "pre-commit").write_text(ORIGINAL)
    subprocess.run(["git", "-C", str(ws), "config", "core.hooksPath", "ci/hooks"], check=True)
    plant = (
        "import os; os.rename('ci', 'old'); os.makedirs('ci/hooks'); "
        "open('ci/hooks/pre-commit', 'w').write('planted')"
    )
    status, output = sh(ws, f'python3 -c "{plant}"')
    assert status != 0, output
    assert (hooks / "pre-commit").read_text() == ORIGINAL
    assert not (ws / "old").exists()


@pytest.mark.parametrize("name", PROTECTED)
def test_the_file_tools_refuse_the_protected_set(ws: Path, name: str) -> None:
    from noetic.tools.file_tools import file_tools

    tools = {t.name: t for t in file_tools(ws)}
    done = asyncio.run(tools["file_write"].call({"path": name, "content": "planted"}))
    assert not done.ok and "refused" in (done.error or ""), done
    assert (ws / name).read_text() != "planted"
    assert asyncio.run(tools["file_write"].call({"path": "notes.md", "content": "x"})).ok


@pytest.mark.subprocess
def test_no_new_start_up_file_appears_in_an_environment(ws: Path) -> None:
    packages = ws / ".venv" / "lib" / "python3.12" / "site-packages"
    for name in ("evil.pth", "sitecustomize.py", "pytest/__init__.py"):
        status, output = sh(ws, f"python3 -c \"open('{packages / name}', 'w').write('x')\"")
        assert status != 0, (name, output)
        assert not (packages / name).exists()


@pytest.mark.subprocess
def test_the_users_own_patterns_are_kept_too(ws: Path, _isolated_home: Path) -> None:
    (ws / "deploy").mkdir()
    (ws / "deploy" / "run.sh").write_text(ORIGINAL)
    plant = "open('deploy/run.sh', 'a').write('planted')"
    assert sh(ws, f'python3 -c "{plant}"')[0] == 0  # not protected yet
    (ws / "deploy" / "run.sh").write_text(ORIGINAL)
    _isolated_home.mkdir(parents=True, exist_ok=True)
    (_isolated_home / "config.toml").write_text('[gate]\nprotected = ["{workspace}/deploy/**"]\n')
    assert sh(ws, f'python3 -c "{plant}"')[0] != 0
    assert (ws / "deploy" / "run.sh").read_text() == ORIGINAL
    from noetic.tools.file_tools import file_tools

    tools = {t.name: t for t in file_tools(ws)}
    done = asyncio.run(tools["file_write"].call({"path": "deploy/run.sh", "content": "x"}))
    assert not done.ok and "listed in [gate] protected" in (done.error or "")
    (_isolated_home / "config.toml").write_text("[gate]\nprotected = 3\n")
    with pytest.raises(UsageError, match=r"config.toml: \[gate\] protected must be a list"):
        sh(ws, "true")
