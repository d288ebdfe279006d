"""The repository's answers behind the protected set are kept, and never served stale.

What git says about a workspace (its top folder, its configuration with each entry's file) is
kept in the user's cache so that Claude Code's PreToolUse hook does not start git twice on every
call. These tests run the real git and count how often it is asked: once for a workspace, then
not again while nothing it read changed, and again on the very next call after any file it read
(or would read, were it there) changes: the repository's configuration, the user's, the
XDG one, an included file (edited keeping its size and time, or created where it was missing),
a worktree's ``.git`` file. The parts read afresh on each call (the hook scripts and what they
call, ``[gate] protected``) are seen at once as well.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from noetic.tools import repository
from noetic.tools.repository import control_files
from noetic.tools.shellgate.protected import protected_set


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path / "cache"))
    root = Path(os.path.realpath(tmp_path)) / "ws"
    root.mkdir()
    git(root, "init", "-q")
    return root


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    """Every git command the repository module runs (git itself still answers)."""
    calls: list[tuple[str, ...]] = []
    real = repository._git

    def counted(root: str, *args: str) -> str | None:
        calls.append(args)
        return real(root, *args)

    monkeypatch.setattr(repository, "_git", counted)
    return calls


def hooks_folder(ws: Path) -> str:
    return str(ws / "hk")


def test_git_is_asked_once_then_not_while_nothing_changes(ws: Path, asked: list) -> None:
    git(ws, "config", "core.fsmonitor", "tools/watch.sh")
    (ws / "tools").mkdir()
    (ws / "tools" / "watch.sh").write_text("#!/bin/sh\n")
    first = control_files(str(ws))
    assert asked and str(ws / "tools" / "watch.sh") in first.read_only
    count = len(asked)
    for _ in range(3):
        assert control_files(str(ws)) == first
    assert len(asked) == count


def _repository_config(ws: Path) -> None:
    git(ws, "config", "core.hooksPath", "hk")


def _global_config(ws: Path) -> None:
    Path(os.environ["HOME"], ".gitconfig").write_text("[core]\n\thooksPath = hk\n")


def _xdg_config(ws: Path) -> None:
    folder = Path(os.environ["HOME"], ".config", "git")
    folder.mkdir(parents=True)
    (folder / "config").write_text("[core]\n\thooksPath = hk\n")


def _included_file_same_size_and_time(ws: Path) -> None:
    extra = ws / "extra.cfg"
    before = extra.stat()
    text = extra.read_text().replace("editor = xxx", "hooksPath=hk")
    assert len(text) == before.st_size
    extra.write_text(text)
    os.utime(extra, ns=(before.st_atime_ns, before.st_mtime_ns))


def _included_file_created(ws: Path) -> None:
    (ws / "later.cfg").write_text("[core]\n\thooksPath = hk\n")


def _include_if_file_created(ws: Path) -> None:
    Path(os.environ["HOME"], "work.cfg").write_text("[core]\n\thooksPath = hk\n")


def _before(ws: Path) -> None:
    (ws / "extra.cfg").write_text("[core]\n\teditor = xxx\n")
    git(ws, "config", "include.path", "../extra.cfg")  # relative to .git/config
    git(ws, "config", "--add", "include.path", "../later.cfg")  # not there yet
    git(ws, "config", f"includeIf.gitdir:{ws}/.path", "~/work.cfg")


CHANGES: dict[str, Callable[[Path], None]] = {
    "the repository's configuration": _repository_config,
    "the user's ~/.gitconfig": _global_config,
    "the user's XDG git configuration, created": _xdg_config,
    "an included file, edited keeping its size and time": _included_file_same_size_and_time,
    "an included file that was missing, created": _included_file_created,
    "an includeIf file that was missing, created": _include_if_file_created,
}


@pytest.mark.parametrize("change", list(CHANGES), ids=list(CHANGES))
def test_a_change_to_any_file_git_reads_is_seen_on_the_next_call(
    ws: Path, asked: list, change: str
) -> None:
    _before(ws)
    assert hooks_folder(ws) not in control_files(str(ws)).folders_to_create
    count = len(asked)
    control_files(str(ws))
    assert len(asked) == count  # kept
    CHANGES[change](ws)
    assert hooks_folder(ws) in control_files(str(ws)).folders_to_create
    assert len(asked) > count  # asked again
    count = len(asked)
    assert hooks_folder(ws) in control_files(str(ws)).folders_to_create
    assert len(asked) == count  # and kept again


def test_a_worktrees_git_file_pointing_elsewhere_is_seen(ws: Path, asked: list) -> None:
    git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    tree = ws.parent / "tree"
    git(ws, "worktree", "add", "-q", str(tree))
    other = ws.parent / "other"
    other.mkdir()
    git(other, "init", "-q")
    git(other, "config", "core.hooksPath", "hk")
    assert str(tree / "hk") not in control_files(str(tree)).folders_to_create
    count = len(asked)
    control_files(str(tree))
    assert len(asked) == count
    (tree / ".git").write_text(f"gitdir: {other / '.git'}\n")
    assert str(tree / "hk") in control_files(str(tree)).folders_to_create


def test_a_repository_made_in_the_folder_is_seen(ws: Path, asked: list) -> None:
    inner = ws / "inner"
    inner.mkdir()
    git(ws, "config", "core.hooksPath", "hk")
    assert str(inner / "hk") not in control_files(str(inner)).folders_to_create
    count = len(asked)
    control_files(str(inner))
    assert len(asked) == count
    git(inner, "init", "-q")
    git(inner, "config", "core.hooksPath", "hk")
    assert str(inner / "hk") in control_files(str(inner)).folders_to_create


def test_a_hook_script_and_what_it_calls_are_seen_on_the_next_call(ws: Path, asked: list) -> None:
    (ws / "scripts").mkdir()
    for name in ("a.sh", "b.sh"):
        (ws / "scripts" / name).write_text("#!/bin/sh\n")
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\n./scripts/a.sh\n")
    home = os.environ["HOME"]
    first = protected_set(str(ws), home=home)
    assert str(ws / "scripts" / "a.sh") in first.named
    count = len(asked)
    hook.write_text("#!/bin/sh\n./scripts/b.sh\n")
    second = protected_set(str(ws), home=home)
    assert str(ws / "scripts" / "b.sh") in second.named
    assert str(ws / "scripts" / "a.sh") not in second.named
    assert len(asked) == count  # the repository's configuration did not change: kept
    (ws / "scripts" / "b.sh").write_text("#!/bin/sh\n./scripts/c.sh\n")
    (ws / "scripts" / "c.sh").write_text("#!/bin/sh\n")
    assert str(ws / "scripts" / "c.sh") in protected_set(str(ws), home=home).named


def test_gate_protected_is_seen_on_the_next_call(
    ws: Path, asked: list, monkeypatch: pytest.MonkeyPatch
) -> None:
    from noetic.hosts.hooks.pretool import pre_tool_use
    from noetic.store.location import locate_store

    monkeypatch.setenv("NOETIC_HOME", str(ws / ".noetic"))
    (ws / ".noetic").mkdir()
    config = ws / ".noetic" / "config.toml"
    config.write_text("[gate]\n")
    payload = {
        "session_id": "0b7a2f4e-0000-4000-8000-0000000ca4e1",
        "cwd": str(ws),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(ws / "deploy" / "run.sh"), "content": "x"},
    }
    location = locate_store(cwd=ws)
    assert pre_tool_use(location, payload, ws) is None
    count = len(asked)
    config.write_text('[gate]\nprotected = ["{workspace}/deploy/**"]\n')
    reply = pre_tool_use(location, payload, ws)
    assert reply is not None
    assert reply["hookSpecificOutput"]["permissionDecision"] == "ask"
    assert len(asked) == count


def test_git_writing_its_own_folder_does_not_make_it_asked_again(ws: Path, asked: list) -> None:
    # a commit writes the index, objects and a branch inside `.git`: none of what git reads its
    # configuration from, so the kept answer still holds
    first = control_files(str(ws))
    count = len(asked)
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "a.txt")
    git(ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "a")
    assert control_files(str(ws)) == first
    assert len(asked) == count


def test_a_write_to_the_cache_itself_is_held(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # what is kept there decides the gate (the built policy, git's answers): the agent may not
    # write it
    from noetic.hosts.hooks.pretool import pre_tool_use
    from noetic.store.location import locate_store

    monkeypatch.setenv("NOETIC_HOME", str(ws / ".noetic"))
    cache = Path(os.environ["NOETIC_CACHE_DIR"])
    control_files(str(ws))  # something is kept
    kept = next(cache.glob("git-view-*.marshal"))
    payload = {
        "session_id": "0b7a2f4e-0000-4000-8000-0000000ca4e2",
        "cwd": str(ws),
        "hook_event_name": "PreToolUse",
        "tool_name": "Write",
        "tool_input": {"file_path": str(kept), "content": "x"},
    }
    reply = pre_tool_use(locate_store(cwd=ws), payload, ws)
    assert reply is not None
    assert reply["hookSpecificOutput"]["permissionDecision"] == "ask"
    payload["tool_name"] = "Bash"
    payload["tool_input"] = {"command": f"echo x > {kept}"}
    reply = pre_tool_use(locate_store(cwd=ws), payload, ws)
    assert reply is not None
    assert reply["hookSpecificOutput"]["permissionDecision"] in ("ask", "deny")
