"""Which command lines are test runs (from the shell gate's syntax tree), and which exit
statuses of each runner are outcomes."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.hosts.testing.commands import (
    RUNNERS,
    Hidden,
    classify,
    key_words,
    recognise,
    run_status,
    runner_of,
)
from noetic.hosts.testing.commands import (
    Recognised as Run,
)
from noetic.tools.shellgate.reduction import reduce

CONFIGURED = ["pytest", "npm test", "make test", "go test ./...", "cargo test", "./gradlew test"]


def seen(command: str, cwd: Path, configured: list[str] = CONFIGURED):
    return recognise(command, configured, workspace=str(cwd), cwd=str(cwd), home="/home/u")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "jest"}}))
    (tmp_path / "Makefile").write_text("all:\n\techo\ntest: all\n\tpytest\n")
    return tmp_path


@pytest.mark.parametrize(
    ("command", "configured", "words"),
    [
        ("pytest", "pytest", ("pytest",)),
        ("pytest -q tests/unit", "pytest", ("pytest", "-q", "tests/unit")),
        ("cd sub && pytest -q", "pytest", ("pytest", "-q")),
        ("cd sub; pytest", "pytest", ("pytest",)),
        ("python -m pytest -x", "pytest", ("pytest", "-x")),
        ("python3.12 -X dev -m pytest", "pytest", ("pytest",)),
        ("uv run pytest", "pytest", ("pytest",)),
        ("uv run --with pytest-xdist -p 3.12 pytest -n 4", "pytest", ("pytest", "-n", "4")),
        ("poetry run python -m pytest", "pytest", ("pytest",)),
        ("FOO=1 BAR='a b' pytest", "pytest", ("pytest",)),
        ("env -u HOME CI=1 pytest", "pytest", ("pytest",)),
        (".venv/bin/pytest", "pytest", ("pytest",)),
        ("py.test", "pytest", ("pytest",)),
        ("'pytest' -q", "pytest", ("pytest", "-q")),
        ("coverage run -m pytest", "pytest", ("pytest",)),
        ("pytest 2>&1", "pytest", ("pytest",)),
        ("(cd sub && pytest) > log.txt 2>&1", "pytest", ("pytest",)),
        ("source .venv/bin/activate && pytest", "pytest", ("pytest",)),
        ("export CI=1 && pytest", "pytest", ("pytest",)),
        ("pip install -e .; pytest", "pytest", ("pytest",)),
        ("pytest tests/a && pytest tests/b", "pytest", ("pytest", "tests/b")),
        ("cd sub &&\n  pytest -q  # the unit tests", "pytest", ("pytest", "-q")),
        ("npm test", "npm test", ("npm", "test")),
        ("npm run test -- --watch=false", "npm test", ("npm", "test", "--", "--watch=false")),
        ("npm t", "npm test", ("npm", "test")),
        ("make -j4 test", "make test", ("make", "-j4", "test")),
        ("go test -v ./pkg/...", "go test ./...", ("go", "test", "-v", "./pkg/...")),
        ("cargo test --release", "cargo test", ("cargo", "test", "--release")),
        ("./gradlew test", "./gradlew test", ("gradle", "test")),
    ],
)
def test_a_test_run_is_recognised_in_its_shapes(project, command, configured, words):
    found = seen(command, project)
    assert isinstance(found, Run), found
    assert found.configured == configured
    assert found.words == words


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("pytest | tail -5", "a pipe into `tail -5` hides"),
        ("pytest 2>&1 | tee log", "a pipe into `tee log` hides"),
        ("pytest || true", "`||` hides the test run's failure"),
        ("pytest &", "runs in the background"),
        ("! pytest", "`!` inverts"),
        ("pytest; echo done", "`echo done` runs after the test run"),
        ("pytest && rm -rf build", "`rm -rf build` runs after the test run"),
        ("pytest a; pytest b", "a later command runs whatever `pytest a` gives"),
        ("pip install -e . && pytest", "`pip install -e .` runs before the test run with `&&`"),
        ("for f in a b; do pytest $f; done", "inside a loop or condition"),
        ("if true; then pytest; fi", "inside a loop or condition"),
        ("echo $(pytest)", "inside a command substitution"),
        ("make test", None),  # the project's Makefile has it: recognised
        ("make check", None),
    ],
)
def test_a_hidden_status_is_not_a_test_run_and_says_why(project, command, reason):
    found = seen(command, project, [*CONFIGURED, "make check"])
    if reason is None:
        assert isinstance(found, Run) or (
            isinstance(found, Hidden) and "no target 'check'" in found.reason
        )
        return
    assert isinstance(found, Hidden), found
    assert reason in found.reason


@pytest.mark.parametrize(
    "command", ["ls -la", "echo pytest", "git commit -m 'run pytest'", "cat pytest.ini", "make"]
)
def test_other_commands_are_not_test_runs(project, command):
    assert seen(command, project) is None


def test_npm_test_without_a_real_test_script_is_not_a_test_run(tmp_path):
    assert isinstance(seen("npm test", tmp_path), Hidden)  # no package.json at all
    placeholder = 'echo "Error: no test specified" && exit 1'
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": placeholder}}))
    found = seen("npm test", tmp_path)
    assert isinstance(found, Hidden) and found.reason == "package.json has no test script"
    (tmp_path / "package.json").write_text(json.dumps({"scripts": {"test": "vitest run"}}))
    assert isinstance(seen("npm test", tmp_path), Run)


def test_make_needs_the_target(tmp_path):
    (tmp_path / "Makefile").write_text("build:\n\tcc x.c\n")
    found = seen("make test", tmp_path)
    assert isinstance(found, Hidden) and found.reason == "the Makefile has no target 'test'"


def test_unparseable_and_empty_lines_are_not_test_runs(project):
    assert seen("pytest 'unterminated", project) is None
    assert seen("", project) is None
    assert seen("pytest", project, []) is None


# exit statuses ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("runner", "code", "score", "meaning"),
    [
        ("pytest", 0, 1.0, "passed"),
        ("pytest", 1, 0.0, "failed"),
        ("pytest", 2, None, "pytest exit 2 means interrupted"),
        ("pytest", 3, None, "pytest exit 3 means an internal error"),
        ("pytest", 4, None, "pytest exit 4 means a usage error (bad option or path)"),
        ("pytest", 5, None, "pytest exit 5 means no tests collected"),
        ("pytest", 130, None, "pytest exit 130 means killed by signal 2 (interrupted)"),
        ("unittest", 1, 0.0, "failed"),
        ("unittest", 5, None, "unittest exit 5 means no tests ran"),
        ("npm test", 1, 0.0, "failed"),
        ("npm test", 7, 0.0, "failed"),  # mocha: the number of failures
        ("npm test", 127, None, "npm test exit 127 means command not found"),
        ("cargo test", 101, 0.0, "failed"),
        ("cargo test", 1, None, "cargo test exit 1 means a usage error"),
        ("go test", 1, 0.0, "failed"),
        ("go test", 2, None, "go test exit 2 means a usage error"),
        ("make", 2, 0.0, "failed"),
        ("make", 1, None, "make exit 1 means make -q: target not up to date"),
        ("gradle", 1, 0.0, "failed"),
        ("mvn", 1, 0.0, "failed"),
        ("command", 3, 0.0, "failed"),
        ("command", 126, None, "command exit 126 means the command could not be run"),
        ("command", 137, None, "command exit 137 means killed by signal 9"),
    ],
)
def test_each_runner_maps_its_exit_statuses(runner, code, score, meaning):
    status = classify(RUNNERS[runner], code)
    assert (status.score, status.meaning) == (score, meaning)


def test_timeout_124_is_not_an_outcome():
    assert classify(RUNNERS["pytest"], 124, timed=True).score is None
    assert reduce(["timeout", "-s", "KILL", "60", "pytest"]).timed


@given(st.integers(min_value=0, max_value=255), st.sampled_from(sorted(RUNNERS)))
def test_only_documented_statuses_are_outcomes(code, name):
    runner = RUNNERS[name]
    status = classify(runner, code)
    assert status.score == (
        1.0 if code in runner.passed else 0.0 if code in runner.failed else None
    )
    assert status.score is not None or status.meaning.startswith(f"{name} exit {code} means ")
    assert code != 0 or status.score == 1.0
    assert code < 126 or status.score is None


@pytest.mark.parametrize(
    ("argv", "code", "score"),
    [
        (["pytest", "-q", "tests/nonexist.py"], 4, None),
        (["pytest", "-q"], 1, 0.0),
        (["python", "-m", "pytest"], 5, None),
        (["uv", "run", "pytest"], 0, 1.0),
        (["sh", "-c", "exit 3"], 3, 0.0),
        (["npm", "test"], 1, None),  # no package.json here: no test script
    ],
)
def test_noetic_run_uses_the_same_mapping(tmp_path, argv, code, score):
    assert run_status(argv, code, tmp_path).score == score


def test_key_words_stop_at_options_and_paths():
    assert key_words("go test ./...") == ("go", "test")
    assert key_words("pytest -q tests") == ("pytest",)
    assert key_words("python -m pytest") == ("pytest",)
    assert key_words("./mvnw test") == ("mvn", "test")
    assert key_words("'unterminated") is None
    assert key_words("") is None


def test_runner_of_reduced_words():
    assert runner_of(reduce(["yarn", "run", "test"]).words).name == "npm test"
    assert runner_of(reduce(["npx", "jest"]).words).name == "command"
    assert runner_of(reduce(["make", "-C", "sub", "test"]).words).name == "make"
    assert runner_of(()).name == "command"


# command shapes: hypothesis ----------------------------------------------------------------------

_NAME = st.from_regex(r"[A-Z][A-Z0-9_]{0,6}", fullmatch=True)
_VALUE = st.text(alphabet="abc123-_./ ", max_size=8)
_ASSIGN = st.builds(lambda n, v: f"{n}={shlex.quote(v)}", _NAME, _VALUE)
_RUNNER = st.sampled_from(
    ["pytest", "python -m pytest", "python3 -m pytest", "uv run pytest", ".venv/bin/pytest",
     "uv run python -m pytest", "poetry run pytest", "env CI=1 pytest", "nice -n 5 pytest"]
)  # fmt: skip
_ARGS = st.lists(st.sampled_from(["-q", "-x", "tests", "-k 'a and b'", "--maxfail=1"]), max_size=3)
_PREP = st.sampled_from(["cd sub", "export CI=1", "source .venv/bin/activate", "X=1"])
_JOIN = st.sampled_from([" && ", "; ", "\n", " &&\n  "])
_REDIRECT = st.sampled_from(["", " 2>&1", " > log.txt", " 2>/dev/null"])


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_PREP, max_size=3),
    _JOIN,
    st.lists(_ASSIGN, max_size=2),
    _RUNNER,
    _ARGS,
    _REDIRECT,
    st.booleans(),
)
@pytest.mark.slow
def test_shapes_of_a_test_run_are_recognised(
    tmp_path_factory, preps, join, assigns, runner, args, redirect, subshell
):
    folder = tmp_path_factory.getbasetemp()
    line = " ".join([*assigns, runner, *args]) + redirect
    if preps:
        line = join.join([*preps, line])
    if subshell:
        line = f"({line})"
    found = recognise(line, ["pytest"], workspace=str(folder), cwd=str(folder), home="/home/u")
    assert isinstance(found, Run), (line, found)
    assert found.runner.name == "pytest"
    assert found.words[0] == "pytest"


@settings(max_examples=150, deadline=None)
@given(
    st.lists(_ASSIGN, max_size=2),
    _RUNNER,
    _ARGS,
    st.sampled_from(
        [" | tail -3", " || true", " &", "; echo done", " && git push", " | tee out.log"]
    ),
)
@pytest.mark.slow
def test_shapes_that_hide_the_status_are_refused_with_a_reason(
    tmp_path_factory, assigns, runner, args, after
):
    folder = tmp_path_factory.getbasetemp()
    line = " ".join([*assigns, runner, *args]) + after
    found = recognise(line, ["pytest"], workspace=str(folder), cwd=str(folder), home="/home/u")
    assert isinstance(found, Hidden), (line, found)
    assert found.reason


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80), st.lists(st.text(max_size=20), max_size=3))
def test_recognising_never_fails_on_any_text(tmp_path_factory, command, configured):
    folder = str(tmp_path_factory.getbasetemp())
    found = recognise(command, configured, workspace=folder, cwd=folder, home="/home/u")
    assert found is None or found.configured in configured


@given(st.lists(st.text(max_size=12), max_size=8))
def test_reducing_never_fails_and_never_grows(words):
    reduced = reduce(words)
    assert len(reduced.words) <= len(words)


# a failed preparation (`cd x && pytest` where x is gone) is the line's status, not the tests' --


@pytest.mark.subprocess
@pytest.mark.parametrize("shell", ["bash", "sh"])
def test_a_failed_cd_before_the_test_run_is_told_from_failing_tests(project, shell):
    import subprocess

    line = "cd gone && pytest -q"
    run = seen(line, project)
    assert isinstance(run, Run) and run.prepared_by == ("cd",)
    done = subprocess.run([shell, "-c", line], cwd=project, capture_output=True, text=True)
    assert done.returncode != 0
    assert run.preparation_failed(done.stderr) == "cd"


@pytest.mark.parametrize(
    "output",
    [
        "zsh:cd:1: no such file or directory: gone",
        "cd: no such file or directory: gone",
        "Exit code 1\n/bin/bash: line 3: cd: gone: No such file or directory",
    ],
)
def test_other_shells_messages_for_a_failed_cd_are_read_too(project, output):
    run = seen("cd gone && pytest -q", project)
    assert isinstance(run, Run) and run.preparation_failed(output) == "cd"


def test_a_test_printing_a_cd_error_above_its_summary_is_still_the_tests_failure(project):
    run = seen("cd sub && pytest -q", project)
    assert isinstance(run, Run)
    output = (
        "F\n--- Captured stderr call ---\nbash: line 1: cd: gone: No such file or directory\n"
        "FAILED tests/test_x.py::test_x - assert 1 == 2\nshort test summary\n1 failed in 0.02s\n"
    )
    assert run.preparation_failed(output) is None


def test_a_line_without_preparation_never_blames_it(project):
    run = seen("pytest -q", project)
    assert isinstance(run, Run) and run.prepared_by == ()
    assert run.preparation_failed("bash: line 1: cd: gone: No such file or directory") is None


@given(st.text(max_size=400))
def test_output_without_a_shell_error_line_for_cd_is_never_read_as_one(text):
    run = Run("pytest", ("pytest",), runner_of(("pytest",)), False, ("cd",))
    found = run.preparation_failed(text)
    if found is not None:
        last = [x for x in text.splitlines() if x.strip()][-3:]
        assert any("cd:" in x and (x.startswith("cd") or "sh" in x.split("cd")[0]) for x in last)
