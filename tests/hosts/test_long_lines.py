"""A Bash command of megabytes reaching the post-tool-use hook: answered without parsing it, and
a long line of many commands costs time in proportion to its length, not its square."""

from __future__ import annotations

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.calibration import list_outcomes as outcomes
from noetic.hosts.testing import commands as testruns
from noetic.hosts.testing.commands import MAX_LINE_CHARS, Hidden, Recognised, recognise
from noetic.store import Store
from noetic.tools.shellgate.judge import MAX_COMMAND_CHARS
from noetic.tools.shellgate.syntax import parse

from ..tools.gate_sets import places
from .test_hooks import bash, open_task, start

PLACES = {"workspace": "/w", "cwd": "/w", "home": "/h"}


def test_the_limit_is_the_gates() -> None:
    assert MAX_LINE_CHARS == MAX_COMMAND_CHARS


@pytest.mark.subprocess
def test_a_ten_megabyte_command_is_not_parsed_and_the_log_says_why(project, home, _isolated_home):
    start(project)
    (_isolated_home / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')
    open_task(_isolated_home)
    command = "pytest " + "tests/a.py " * 1_000_000  # 11 MB of arguments
    assert bash(project, command) is None
    with Store(_isolated_home) as store:
        assert outcomes(store) == []
    log = (_isolated_home / "hooks.log").read_text()
    assert f"the command line is {len(command):,} characters, over the 65,536" in log
    assert len(log) < 10_000  # the command is shortened in the log, not copied


@pytest.mark.slow
def test_many_commands_on_one_line_are_read_in_one_pass() -> None:
    line = "true; " * 10_000 + "pytest -q"  # 60 KB, 10,001 commands
    found = recognise(line, ["pytest"], **PLACES)
    assert isinstance(found, Recognised) and found.configured == "pytest"
    hidden = recognise("pytest; " * 8_000 + "true", ["pytest"], **PLACES)
    assert isinstance(hidden, Hidden) and "runs after the test run" in hidden.reason


def _quadratic(ordered: list) -> list:
    """The definition the one-pass walk replaced: no other command's text contains it."""

    def inside(inner, outer) -> bool:
        return (
            outer.start <= inner.start
            and inner.start + len(inner.text) <= outer.start + len(outer.text)
            and (outer.start, len(outer.text)) != (inner.start, len(inner.text))
        )

    return [c for c in ordered if not any(inside(c, o) for o in ordered if o is not c)]


def _commands(text: str) -> list | None:
    try:
        script = parse(text, **PLACES)
    except Exception:
        return None
    return sorted(script.commands, key=lambda c: c.start)


def test_the_one_pass_walk_agrees_with_the_definition_on_the_gates_sets() -> None:
    folder = places.__file__.rsplit("/", 1)[0]
    lines = []
    for name in ("benign.yaml", "redteam.yaml"):
        with open(f"{folder}/{name}", encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
        lines += [e["command"] if isinstance(e, dict) else e for e in _entries(data)]
    checked = 0
    for line in lines:
        ordered = _commands(line)
        if ordered:
            assert testruns._top_level(ordered) == _quadratic(ordered), line
            checked += 1
    assert checked > 100


def _entries(data) -> list:
    if isinstance(data, list):
        return data
    return [e for value in data.values() if isinstance(value, list) for e in value]


PIECES = [
    "pytest -q",
    "echo $(pytest)",
    "(cd x && pytest)",
    "{ ls; pytest; }",
    "a | pytest",
    "x=$(echo `date`)",
    "if true; then pytest; fi",
    "cat <(ls)",
    "f() { pytest; }",
]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8), st.sampled_from([";", "&&", "|"]))
def test_the_one_pass_walk_agrees_with_the_definition(pieces, joiner) -> None:
    ordered = _commands(f" {joiner} ".join(pieces))
    if ordered:
        assert testruns._top_level(ordered) == _quadratic(ordered)
