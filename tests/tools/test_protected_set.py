"""The protected set as data: the built-in list, the user's patterns, what a repository's hooks
call (a worktree's included), and the boundary of an http hook's project."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.hosts.hooks.shared import outside_project
from noetic.tools.shellgate.protected import (
    builtin,
    entry_path,
    protected_set,
)


def git(cwd: Path, *args: str) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


def test_the_built_in_list_is_data_naming_what_runs_each_file():
    entries = builtin()
    assert len(entries) >= 20
    for entry in entries:
        assert entry.pattern.startswith(("{workspace}/", "~/")) and " " not in entry.pattern
        assert entry.runs and not entry.runs.startswith("#")
    patterns = {e.pattern for e in entries}
    for wanted in ("{workspace}/.claude/**", "{workspace}/.mcp.json", "{workspace}/**/*.pth",
                   "{workspace}/**/.noetic/**", "{workspace}/.envrc"):  # fmt: skip
        assert wanted in patterns


@given(st.lists(st.sampled_from(["a", "b", "..", ".", "sub", "x y"]), max_size=5))
def test_an_http_hooks_cwd_is_inside_the_project_or_refused(parts):
    root = Path("/srv/project")
    cwd = os.path.join(str(root), *parts)
    real = os.path.normpath(cwd)
    inside = real == str(root) or real.startswith(str(root) + "/")
    refused = outside_project({"cwd": cwd}, root)
    assert (refused is None) == inside, (cwd, refused)


def test_a_sibling_sharing_the_prefix_is_outside():
    root = Path("/srv/project")
    assert outside_project({"cwd": "/srv/project-evil"}, root) is not None
    assert outside_project({"cwd": "/srv/project/x"}, root) is None
    assert outside_project({}, root) is None
    assert "not an absolute path" in outside_project({"cwd": 3}, root)


def test_the_scripts_hooks_call_are_followed_a_few_calls_deep(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "s").mkdir()
    (ws / ".git" / "hooks" / "pre-commit").write_text('#!/bin/sh\nexec ./s/a.sh "$@"\n')
    for name, calls in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")):
        (ws / "s" / f"{name}.sh").write_text(f"#!/bin/sh\n$ROOT/s/{calls}.sh\n")
    (ws / "s" / "e.sh").write_text("true\n")
    (ws / ".pre-commit-config.yaml").write_text("- id: x\n  entry: tools/fmt.py\n")
    (ws / "tools").mkdir()
    (ws / "tools" / "fmt.py").write_text("")
    named = protected_set(str(ws), home=str(tmp_path)).named
    real = os.path.realpath(ws)
    for name in ("s/a.sh", "s/b.sh", "s/c.sh", "tools/fmt.py"):
        assert f"{real}/{name}" in named, name
    assert f"{real}/s/e.sh" not in named  # beyond three calls


def test_a_worktrees_hooks_are_those_of_its_common_git_folder(tmp_path):
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "main")
    git(main, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "0")  # fmt: skip
    git(main, "worktree", "add", "-q", str(tmp_path / "wt"), "-b", "wt")
    (main / ".git" / "hooks" / "pre-push").write_text("#!/bin/sh\n./ci/check.sh\n")
    (tmp_path / "wt" / "ci").mkdir()
    (tmp_path / "wt" / "ci" / "check.sh").write_text("true\n")
    protected = protected_set(str(tmp_path / "wt"), home=str(tmp_path))
    check = os.path.realpath(tmp_path / "wt" / "ci" / "check.sh")
    assert check in protected.named and protected.covers(check)


def test_a_commondir_that_is_not_text_leaves_the_worktrees_own_hooks(tmp_path):
    """A ``commondir`` the agent filled with bytes that are not UTF-8 is read as absent (the
    worktree's own git folder holds the hooks), not an error that stops the set being built."""
    wt = tmp_path / "wt"
    gitdir = tmp_path / "gitdir"
    (gitdir / "hooks").mkdir(parents=True)
    (gitdir / "commondir").write_bytes(b"\xff\xfe../elsewhere\n")
    (gitdir / "hooks" / "pre-commit").write_text("#!/bin/sh\n./ci/lint.sh\n")
    wt.mkdir()
    (wt / ".git").write_text(f"gitdir: {gitdir}\n")
    (wt / "ci").mkdir()
    (wt / "ci" / "lint.sh").write_text("true\n")
    protected = protected_set(str(wt), home=str(tmp_path))
    lint = os.path.realpath(wt / "ci" / "lint.sh")
    assert lint in protected.named and protected.covers(lint)


def test_a_links_own_entry_is_what_ln_writes(tmp_path):
    (tmp_path / "hooks").mkdir()
    (tmp_path / "payload").write_text("x")
    (tmp_path / "hooks" / "pre-commit").symlink_to(tmp_path / "payload")
    real = os.path.realpath(tmp_path)
    assert entry_path("hooks/pre-commit", str(tmp_path)) == f"{real}/hooks/pre-commit"
    assert entry_path("hooks/../payload", str(tmp_path)) == f"{real}/payload"


@pytest.mark.parametrize(
    ("path", "covered"),
    [
        (".claude/settings.local.json", True),
        ("deep/down/.noetic/config.toml", True),
        ("lib/python3.12/site-packages/x.pth", True),
        (".venv/lib/python3.12/site-packages/requests/api.py", True),
        ("vendor/repo/.git/hooks/pre-commit", True),
        ("src/app.py", False),
        ("docs/claude.md", False),
        ("notes.pth.txt", False),
    ],
)
def test_what_the_set_covers(tmp_path, path, covered):
    protected = protected_set(str(tmp_path), home=str(tmp_path / "home"))
    assert protected.covers(f"{os.path.realpath(tmp_path)}/{path}") is covered


_TOKENS = [*"ab .>|;&-/'\"$()*=", "cp", "ln", "mv", ".git/", ".envrc", "dd", "of=", "-t"]
_SHELL = st.lists(st.sampled_from(_TOKENS), max_size=24).map("".join)


@given(_SHELL)
def test_planted_reads_any_line_and_names_only_protected_paths(command):
    from noetic.tools.shellgate import load_policy
    from noetic.tools.shellgate.protected import Protected, builtin, planted

    root = "/srv/ws"
    protected = Protected(root, "/home/u", tuple(e.pattern for e in builtin()), ())
    for path in planted(command, protected, load_policy(), cwd=root):
        assert protected.covers(path), (command, path)


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("cp -- payload -x/../.envrc", ".envrc"),
        ("mv -- payload -d/../.npmrc", ".npmrc"),
        ("ln -s -- payload -l/../.git/hooks/pre-commit", ".git/hooks/pre-commit"),
        ("cp -t -- payload .envrc", ".envrc"),
    ],
)
def test_after_the_end_of_options_a_word_beginning_with_a_dash_is_a_path(command, found):
    from noetic.tools.shellgate import load_policy
    from noetic.tools.shellgate.protected import Protected, builtin, planted

    root = "/srv/ws"
    protected = Protected(root, "/home/u", tuple(e.pattern for e in builtin()), ())
    assert f"{root}/{found}" in planted(command, protected, load_policy(), cwd=root)
