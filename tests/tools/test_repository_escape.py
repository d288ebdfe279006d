"""Walking out of the sandbox through the repository: every way of planting something the user's
own git runs later, tried through the shell tool and the file tools in a real bubblewrap."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from noetic.errors import UsageError
from noetic.tools import sandbox as sandbox_module
from noetic.tools.base import ToolResult
from noetic.tools.file_tools import file_tools
from noetic.tools.repository import control_files
from noetic.tools.shell import ShellRunner

HOOK = '#!/bin/sh\ntouch "$HOME/pwned"\n'


@pytest.fixture(scope="module", autouse=True)
def _bubblewrap_is_here() -> None:
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap (bwrap) is not installed: run `make test`, which installs it")
    found = sandbox_module.detect()
    if found.binary is None:
        pytest.fail(f"bubblewrap cannot create a sandbox on this machine: {found.note}")


def git(cwd: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A repository with one commit, and an empty home (no global git configuration)."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "0")
    (ws / "hook.sh").write_text(HOOK)
    return ws, home


def sh(runner: ShellRunner, command: str) -> str:
    done = asyncio.run(runner.run(command))
    return f"exit {done.exit_code}: {done.output}"


def write(ws: Path, path: str, content: str = HOOK) -> ToolResult:
    tools = {t.name: t for t in file_tools(ws)}
    return asyncio.run(tools["file_write"].call({"path": path, "content": content}))


def hooks_of(ws: Path) -> list[str]:
    folder = ws / ".git" / "hooks"
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".sample"))


@pytest.mark.subprocess
def test_a_copied_git_with_a_planted_hook_cannot_replace_the_real_one(repo) -> None:
    ws, home = repo
    head = (ws / ".git" / "HEAD").read_text()
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert sh(runner, "cp -r .git newgit").startswith("exit 0")
    assert sh(runner, "cp hook.sh newgit/hooks/pre-commit").startswith("exit 0")
    assert write(ws, "newgit/hooks/post-commit").ok  # a copy is only a folder…
    moved_away = sh(runner, "mv .git old.git")
    moved_in = sh(runner, "mv newgit .git")
    assert not moved_away.startswith("exit 0"), moved_away  # …that can never become .git
    assert not moved_in.startswith("exit 0"), moved_in
    assert (ws / ".git" / "HEAD").read_text() == head and not (ws / "old.git").exists()
    assert hooks_of(ws) == []
    assert not sh(runner, "rm -rf .git").startswith("exit 0")
    assert (ws / ".git" / "HEAD").read_text() == head
    # the control: without the sandbox the same commands do plant the hook
    unsandboxed = ShellRunner(ws, sandbox="off", home=str(home))
    assert sh(unsandboxed, "mv .git old.git").startswith("exit 0")
    assert sh(unsandboxed, "mv newgit .git").startswith("exit 0")
    assert "pre-commit" in hooks_of(ws)


@pytest.mark.subprocess
def test_a_hooks_folder_that_does_not_exist_yet_cannot_be_planted(repo) -> None:
    ws, home = repo
    shutil.rmtree(ws / ".git" / "hooks")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert sh(runner, "mkdir -p h/hooks").startswith("exit 0")
    assert sh(runner, "cp hook.sh h/hooks/pre-commit").startswith("exit 0")
    planted = sh(runner, "cp -r h/hooks .git/")
    assert not planted.startswith("exit 0") and "Read-only" in planted, planted
    assert not (ws / ".git" / "hooks").exists()
    for path in (".git/hooks/pre-commit", ".git/commondir", ".git/config.worktree", ".git/HEAD"):
        refused = write(ws, path)
        assert not refused.ok and ".git" in (refused.error or ""), path
    assert not (ws / ".git" / "hooks").exists() and not (ws / ".git" / "commondir").exists()


@pytest.mark.subprocess
def test_a_new_commondir_or_config_cannot_redirect_git(repo) -> None:
    ws, home = repo
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert sh(runner, "cp -r .git newgit").startswith("exit 0")
    (ws / "commondir").write_text("../newgit\n")
    assert not sh(runner, "cp commondir .git/commondir").startswith("exit 0")
    # the gate refuses `git config core.hooksPath`; a script it cannot see into meets the sandbox
    (ws / "set.py").write_text(
        "import subprocess, sys\n"
        "sys.exit(subprocess.call(['git', 'config', 'core.hooksPath', 'newgit/hooks']))\n"
    )
    assert not sh(runner, f"{sys.executable} set.py").startswith("exit 0")
    assert not (ws / ".git" / "commondir").exists()
    assert "hookspath" not in (ws / ".git" / "config").read_text().lower()


@pytest.mark.subprocess
def test_reading_the_repository_still_works_inside(repo) -> None:
    ws, home = repo
    (ws / "a.txt").write_text("a\n")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    status = sh(runner, "git status --porcelain")
    assert status.startswith("exit 0") and "?? a.txt" in status
    assert sh(runner, "git log --oneline").startswith("exit 0")
    added = sh(runner, "git add a.txt")  # writing the repository is what the sandbox stops
    assert not added.startswith("exit 0") and "Read-only" in added


@pytest.mark.subprocess
def test_the_hooks_path_the_configuration_names_is_protected_even_before_it_exists(repo) -> None:
    ws, home = repo
    git(ws, "config", "core.hooksPath", ".githooks")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert not sh(runner, "cp -r .git/hooks .githooks").startswith("exit 0")
    assert list((ws / ".githooks").iterdir()) == []  # made empty, then kept read-only
    refused = write(ws, ".githooks/pre-commit")
    assert not refused.ok and ".githooks" in (refused.error or "")
    assert not (ws / ".githooks" / "pre-commit").exists()
    # a hooks path set in the user's global configuration counts the same
    git(ws, "config", "--unset", "core.hooksPath")
    (home / ".gitconfig").write_text("[core]\n\thooksPath = .husky\n")
    assert not write(ws, ".husky/pre-commit").ok
    assert str(ws / ".husky") in control_files(str(ws)).folders_to_create


@pytest.mark.subprocess
def test_programs_and_includes_the_configuration_names_are_protected(repo) -> None:
    ws, home = repo
    (ws / "tools").mkdir()
    (ws / "tools" / "watch.sh").write_text("#!/bin/sh\n")
    (ws / "extra.cfg").write_text("[user]\n\tname = x\n")
    git(ws, "config", "core.fsmonitor", "tools/watch.sh")
    git(ws, "config", "include.path", "../extra.cfg")  # relative to .git/config
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert not sh(runner, "cp hook.sh tools/watch.sh").startswith("exit 0")
    assert (ws / "tools" / "watch.sh").read_text() == "#!/bin/sh\n"
    assert not write(ws, "tools/watch.sh").ok
    assert not sh(runner, "cp hook.sh extra.cfg").startswith("exit 0")
    assert not write(ws, "extra.cfg", "[core]\n\thooksPath = h\n").ok
    assert (ws / "extra.cfg").read_text() == "[user]\n\tname = x\n"


@pytest.mark.subprocess
def test_gitmodules_is_read_only(repo) -> None:
    ws, home = repo
    (ws / ".gitmodules").write_text('[submodule "x"]\n\tpath = x\n\turl = ./x\n')
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    assert not sh(runner, "cp hook.sh .gitmodules").startswith("exit 0")
    assert not sh(runner, "mv .gitmodules gone").startswith("exit 0")
    assert (ws / ".gitmodules").read_text().startswith("[submodule")
    assert not write(ws, ".gitmodules", "").ok


@pytest.mark.subprocess
def test_a_worktrees_git_file_cannot_be_replaced(repo, tmp_path: Path) -> None:
    ws, home = repo
    tree = tmp_path / "tree"
    git(ws, "worktree", "add", "-q", str(tree))
    pointer = (tree / ".git").read_text()
    assert pointer.startswith("gitdir:")
    (tree / "fake").write_text("gitdir: ../ws/newgit\n")
    runner = ShellRunner(tree, sandbox="required", home=str(home))
    assert not sh(runner, "cp fake .git").startswith("exit 0")
    assert not sh(runner, "mv .git gone").startswith("exit 0")
    assert (tree / ".git").read_text() == pointer
    refused = write(tree, ".git", "gitdir: /tmp/elsewhere\n")
    assert not refused.ok and (tree / ".git").read_text() == pointer


@pytest.mark.subprocess
def test_a_symlinked_git_is_refused_with_the_target_named(repo) -> None:
    ws, home = repo
    (ws / ".git").rename(ws / "real.git")
    (ws / ".git").symlink_to("real.git")
    runner = ShellRunner(ws, sandbox="required", home=str(home))
    with pytest.raises(UsageError, match=r"\.git is a symlink .*real\.git"):
        asyncio.run(runner.run("ls"))


def test_a_workspace_without_a_repository_is_wrapped_without_looking_for_one(tmp_path):
    from noetic.tools.sandbox import Sandbox, wrap

    (tmp_path / ".git").mkdir()
    args = dict(workspace=str(tmp_path), cwd=str(tmp_path), home="/nonexistent", network=False)
    kept = wrap(["true"], Sandbox("/usr/bin/bwrap", "b"), **args)
    bare = wrap(["true"], Sandbox("/usr/bin/bwrap", "b"), **args, repository=False)
    assert str(tmp_path / ".git") in kept and str(tmp_path / ".git") not in bare
    assert bare[-2:] == ["--", "true"]
