import json
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.assessment import Assessment
from noetic.cli import app
from noetic.llm.tokens import count_tokens
from noetic.profiles import ProfileRegistry
from noetic.runtime.tracker import Tracker
from noetic.store import Store
from noetic.store.checkpoints import (
    NOTES_REF,
    Checkpoint,
    bootstrap_context,
    git_root,
    last_assessment,
    list_checkpoints,
    make_checkpoint,
)
from noetic.vector_names import VECTOR_NAMES

from ..conftest import uniform


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)


@pytest.fixture
def repo(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty",
        "-m", "first")  # fmt: skip
    git(root, "config", "user.name", "t")
    git(root, "config", "user.email", "t@t")
    return root


def work(store):
    tracker = Tracker(store, ProfileRegistry())
    session, _ = tracker.bootstrap(profile="balanced")
    gated = uniform(0.5, engagement=0.9, coherence=0.9)
    tracker.preflight(session.id, "t", Assessment.from_input("preflight", gated))
    tracker.check(session.id, Assessment.from_input("check", {"know": 0.9, "context": 0.85}))
    tracker.postflight(session.id, Assessment.from_input("postflight", gated | {"know": 0.9}))
    return tracker, session


@pytest.mark.subprocess
def test_checkpoints_round_trip_through_git_notes(repo):
    with Store(repo / ".noetic") as store:
        tracker, session = work(store)
        assert tracker.repo == repo.resolve()
        found = list_checkpoints(store, tracker.repo)
        assert [w.startswith("git:") for w, _ in found] == [True, True, True]
        assert [cp.phase for _, cp in found] == ["preflight", "check", "postflight"]
        assert found[1][1].moves == {"know": 0.4, "context": 0.35}
        assert found[1][1].named_vectors()["know"] == 0.9
        assert store.conn.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0
    note = git(repo, "notes", "--ref", NOTES_REF, "show", "HEAD").stdout.splitlines()
    assert Checkpoint.from_line(note[0]).session == session.id


@pytest.mark.subprocess
def test_outside_a_repository_checkpoints_fall_back_to_sqlite(tmp_path):
    with Store(tmp_path / "plain" / ".noetic") as store:
        tracker, _ = work(store)
        assert tracker.repo is None
        found = list_checkpoints(store, None)
        assert [w for w, _ in found] == ["sqlite"] * 3


@pytest.mark.subprocess
def test_a_repository_without_commits_falls_back_too(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    assert git_root(root) is None


def scripted_git(folder: Path, body: str) -> Path:
    """A ``git`` on PATH that writes its pid to ``folder/pid`` and runs ``body`` (shell)."""
    folder.mkdir()
    script = folder / "git"
    script.write_text(f"#!/bin/sh\necho $$ > {folder / 'pid'}\n{body}\n")
    script.chmod(0o755)
    return folder


def logged_git(folder: Path) -> Path:
    """A ``git`` on PATH that writes each call's arguments to ``folder/calls`` and runs the
    real git."""
    import shutil

    return scripted_git(folder, f'echo "$*" >> {folder / "calls"}\nexec {shutil.which("git")} "$@"')


@pytest.mark.subprocess
def test_an_assessment_asks_git_once_to_append_its_checkpoint(repo, tmp_path, monkeypatch):
    bin_dir = logged_git(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    with Store(repo / ".noetic") as store:
        work(store)
        found = list_checkpoints(store, repo)
    calls = (bin_dir / "calls").read_text().splitlines()
    # the three assessments' appends, started in the store's folder (git's -C: spawned without
    # subprocess, which has no working folder), then the listing: no separate search for the
    # repository
    appended = f"-C {repo / '.noetic'} notes --ref {NOTES_REF} append -F - HEAD"
    assert calls[:3] == [appended] * 3
    assert [w.startswith("git:") for w, _ in found] == [True, True, True]


@pytest.mark.subprocess
def test_a_repository_without_commits_keeps_a_tasks_checkpoints_in_sqlite(tmp_path):
    root = tmp_path / "empty"
    root.mkdir()
    git(root, "init", "-q")
    with Store(root / ".noetic") as store:
        tracker, _ = work(store)
        found = list_checkpoints(store, None)
        assert [w for w, _ in found] == ["sqlite"] * 3
        assert [cp.phase for _, cp in found] == ["preflight", "check", "postflight"]
        assert tracker.repo is None


@pytest.mark.subprocess
def test_bootstrap_context_is_compact_against_the_session_json(repo):
    with Store(repo / ".noetic") as store:
        tracker, session = work(store)
        block = bootstrap_context(store, tracker.repo)
        full = json.dumps(store.export_session(session.id))
    one = count_tokens(block.splitlines()[1])
    assert one < 150 and count_tokens(block) < count_tokens(full) / 5


@pytest.mark.subprocess
def test_the_cli_lists_shows_and_loads(repo):
    runner = CliRunner()
    store = ["--store", str(repo / ".noetic")]
    gated = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))
    runner.invoke(app, ["bootstrap", *store])
    runner.invoke(app, ["preflight", "t", "--vectors", gated, *store])
    listed = json.loads(runner.invoke(app, ["checkpoint", "list", "--json", *store]).stdout)
    assert listed[0]["where"].startswith("git:") and listed[0]["phase"] == "preflight"
    shown = json.loads(
        runner.invoke(
            app, ["checkpoint", "show", listed[0]["session"][:8], "--json", *store]
        ).stdout
    )
    assert shown[0]["named"]["know"] == 0.8
    loaded = json.loads(runner.invoke(app, ["checkpoint", "load", "--json", *store]).stdout)
    assert loaded["tokens"] > 0 and listed[0]["session"] in loaded["context"]


_SCORES = st.dictionaries(
    st.sampled_from(VECTOR_NAMES), st.integers(0, 1) | st.floats(0, 1), min_size=1
)


@settings(max_examples=30, deadline=None)
@given(st.lists(_SCORES, min_size=1, max_size=4))
def test_a_tasks_newest_assessment_reads_as_plain_values_as_its_models_give_it(checks):
    # PreCompact reads the newest assessment's scores and action without building the models;
    # the checkpoint made from them is the one the models make, whatever the scores (integers
    # included, partial CHECKs carried forward from the PREFLIGHT)
    with tempfile.TemporaryDirectory() as home, Store(Path(home) / ".noetic") as store:
        tracker = Tracker(store, ProfileRegistry())
        session, _ = tracker.bootstrap(profile="balanced")
        tracker.preflight(session.id, "t", Assessment.from_input("preflight", uniform(0.6)))
        for scores in checks:
            tracker.check(session.id, Assessment.from_input("check", scores))
        cascade = store.open_cascade_of(session.id)
        assert cascade is not None
        last = store.assessments(cascade_id=cascade.id)[-1]
        read = last_assessment(store, cascade.id)
        assert read == (last.assessment.vectors, last.decision.action.value)
        assert read is not None and all(type(x) is float for x in read[0].values())
        args = (session.id, cascade.id, "compact")
        plain = make_checkpoint(*args, *read, None, "n")
        models = make_checkpoint(*args, last.assessment.vectors, read[1], None, "n")
        assert plain.line() == models.line()
        assert Checkpoint.from_line(plain.line()) == plain
        assert last_assessment(store, "c_without_assessments") is None


@pytest.mark.subprocess
def test_a_checkpoint_git_could_not_take_goes_to_sqlite_in_the_same_write(
    repo, tmp_path, monkeypatch
):
    # git runs beside the rest of the write and is waited for before the write ends: when it
    # fails, the checkpoint is inserted into SQLite inside the write, so a write that then
    # fails leaves neither the assessment nor its checkpoint
    bin_dir = scripted_git(tmp_path / "bin", "cat > /dev/null; exit 1")
    monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    with Store(repo / ".noetic") as store:
        tracker, session = work(store)
        assert [w for w, _ in list_checkpoints(store, None)] == ["sqlite"] * 3
        tracker.preflight(session.id, "second", Assessment.from_input("preflight", uniform(0.6)))

        def broken(*args, **kwargs):
            raise RuntimeError("the disk went away")

        monkeypatch.setattr(store, "finish_cascade", broken)
        with pytest.raises(RuntimeError, match="the disk went away"):
            tracker.postflight(session.id, Assessment.from_input("postflight", uniform(0.7)))
        phases = [cp.phase for _, cp in list_checkpoints(store, None)]
        assert phases == ["preflight", "check", "postflight", "preflight"]
        stored = store.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0]
        assert stored == 4


@pytest.mark.subprocess
def test_a_write_that_fails_while_its_checkpoint_git_runs_stops_git(repo, tmp_path, monkeypatch):
    import os
    import time

    # git takes the checkpoints at once, but hangs on the POSTFLIGHT's
    hanging = tmp_path / "bin" / "hanging"  # the POSTFLIGHT's git's pid, once it hangs
    hang = (
        """line=$(cat); case "$line" in *'"p":"postflight"'*) """
        f"""echo $$ > {hanging}.new && mv {hanging}.new {hanging}; sleep 30;; esac; exit 1"""
    )
    bin_dir = scripted_git(tmp_path / "bin", hang)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    with Store(repo / ".noetic") as store:
        tracker = Tracker(store, ProfileRegistry())
        session, _ = tracker.bootstrap(profile="balanced")
        tracker.preflight(session.id, "t", Assessment.from_input("preflight", uniform(0.6)))

        def broken(*args, **kwargs):
            waited = time.monotonic() + 10  # the write fails once git hangs on its line
            while not hanging.exists() and time.monotonic() < waited:
                time.sleep(0.01)
            raise RuntimeError("the disk went away")

        monkeypatch.setattr(store, "finish_cascade", broken)
        started = time.monotonic()
        with pytest.raises(RuntimeError, match="the disk went away"):
            tracker.postflight(session.id, Assessment.from_input("postflight", uniform(0.7)))
        assert time.monotonic() - started < 20  # not waiting out git's 30 s
        pid = int(hanging.read_text())
        with pytest.raises(ChildProcessError):  # reaped: no zombie left
            os.waitpid(pid, os.WNOHANG)
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
        assert store.conn.execute("SELECT COUNT(*) FROM assessments").fetchone()[0] == 1
