"""Which store a command uses: --store, NOETIC_HOME, the repository (never above its root), the
working directory; and reading commands that find no store create nothing."""

import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.cli import app
from noetic.errors import NotFoundError
from noetic.store import locate_store, require_store

runner = CliRunner()


@pytest.fixture
def repo(tmp_path, monkeypatch):
    """A real git repository at tmp_path/outer/repo, the working directory two levels in."""
    monkeypatch.delenv("NOETIC_HOME")
    root = tmp_path / "outer" / "repo"
    root.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    deep = root / "src" / "pkg"
    deep.mkdir(parents=True)
    monkeypatch.chdir(deep)
    return root


@pytest.mark.subprocess
def test_a_store_above_the_git_root_is_ignored(repo):
    (repo.parent / ".noetic").mkdir()  # e.g. a stray ~/.noetic or /tmp/.noetic
    (repo.parent.parent / ".noetic").mkdir()
    found = locate_store()
    assert found.home == repo / ".noetic" and found.rule == "repository-root"
    assert found.git_root == repo
    assert found.looked_in == [repo / "src/pkg/.noetic", repo / "src/.noetic", repo / ".noetic"]


@pytest.mark.subprocess
def test_the_nearest_store_inside_the_repository_is_used(repo):
    (repo / ".noetic").mkdir()
    assert locate_store().home == repo / ".noetic"
    (repo / "src" / ".noetic").mkdir()
    found = locate_store()
    assert found.home == repo / "src" / ".noetic" and found.rule == "repository"


def test_outside_a_repository_the_working_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("NOETIC_HOME")
    (tmp_path / ".noetic").mkdir()  # above the working directory: not looked at
    here = tmp_path / "work"
    here.mkdir()
    found = locate_store(cwd=here)
    assert (found.home, found.rule, found.git_root) == (here / ".noetic", "cwd", None)


@pytest.mark.subprocess
def test_explicit_then_environment_win(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("NOETIC_HOME", str(tmp_path / "env"))
    assert locate_store().home == tmp_path / "env" and locate_store().rule == "NOETIC_HOME"
    explicit = locate_store(tmp_path / "x")
    assert explicit.home == tmp_path / "x" and explicit.rule == "--store"


@pytest.mark.subprocess
def test_require_store_says_where_it_looked_and_creates_nothing(repo):
    with pytest.raises(NotFoundError) as caught:
        require_store(locate_store())
    assert f"looked in {repo / 'src/pkg/.noetic'}, " in caught.value.message
    assert "noetic bootstrap" in caught.value.fix
    assert not (repo / ".noetic").exists()


READERS = [
    ["state"],
    ["sessions", "list"],
    ["sessions", "show", "s_x"],
    ["recall", "a task"],
    ["calibration", "report"],
    ["calibration", "beliefs"],
    ["calibration", "drift"],
    ["checkpoint", "list"],
    ["goals", "list"],
    ["rebuild"],
    ["preflight", "a task"],
    ["check"],
    ["outcome", "--success"],
    ["observe", "stats"],
]


@pytest.mark.subprocess
@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a))
def test_commands_that_find_no_store_exit_1_and_create_nothing(repo, args):
    result = runner.invoke(app, [*args, "--json"], input="")
    assert result.exit_code == 1, result.output
    error = json.loads(result.stdout)["error"]
    assert error["message"].startswith("no Noetic store here (looked in ")
    assert not any(p.name == ".noetic" for p in repo.rglob("*")), args
    assert not (repo.parent / ".noetic").exists()


@pytest.mark.subprocess
def test_bootstrap_creates_the_store_at_the_repository_root(repo):
    result = runner.invoke(app, ["bootstrap", "--json"])
    assert result.exit_code == 0, result.output
    assert (repo / ".noetic" / "noetic.db").is_file()
    state = runner.invoke(app, ["state", "--json"])
    assert state.exit_code == 0 and json.loads(state.stdout)["session"]["ai_id"] == "agent"


@settings(max_examples=25, deadline=None)
@given(
    depth=st.integers(1, 5),
    data=st.data(),
)
def test_the_store_is_the_nearest_noetic_between_the_cwd_and_the_git_root(depth, data):
    """For any tree: a git root somewhere on the path, .noetic folders anywhere (also above the
    root), the store is the nearest one at or below the root, else the root's."""
    git_level = data.draw(st.integers(0, depth))
    stores = data.draw(st.sets(st.integers(-1, depth)))
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch).resolve() / "top"
        path = [base / "/".join(f"d{i}" for i in range(level)) for level in range(depth + 1)]
        path[-1].mkdir(parents=True)
        (path[git_level] / ".git").mkdir()
        for level in stores:
            folder = base.parent if level == -1 else path[level]
            (folder / ".noetic").mkdir(exist_ok=True)
        with pytest.MonkeyPatch.context() as env:
            env.delenv("NOETIC_HOME")
            found = locate_store(cwd=path[-1])
        inside = [lvl for lvl in sorted(stores, reverse=True) if lvl >= git_level]
        expected = path[inside[0]] if inside else path[git_level]
        assert found.home == expected / ".noetic"
        assert found.git_root == path[git_level]
