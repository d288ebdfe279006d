"""Text for a pipe or a file without Rich, the same as Rich's.

An agent runs ``noetic preflight``, ``check`` and ``state`` in its shell, a pipe: their lines and
the vectors' table are written without loading Rich (:class:`noetic.cli.output._Lines`). Each
property below holds the plain text to what Rich's console for a pipe prints for the same input;
text Rich changes (a tab, a control character, a closing tag that closes nothing) still goes
through Rich.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.markup import escape

from noetic.cli import output, render
from noetic.vectors import VECTOR_NAMES

from .._modules import modules_loaded
from ..conftest import uniform


def printed(console: Any, *objects: Any, **options: Any) -> str:
    buffer = io.StringIO()
    with mock.patch.dict(os.environ), redirect_stdout(buffer):
        for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
            os.environ.pop(name, None)
        console.print(*objects, **options)
    return buffer.getvalue()


def by_rich(*objects: Any, **options: Any) -> str:
    return printed(output.console(err=False), *objects, **options)


def plain(*objects: Any, **options: Any) -> str:
    return printed(output._Lines(err=False), *objects, **options)


_MARKUP = st.text(alphabet="ab/[]\\ @=#\t\n·漢", max_size=24)


@given(st.text())
def test_escaping_is_richs(text: str) -> None:
    assert output.esc(text) == escape(text)


@given(st.text(), st.sampled_from(["[bold]{}[/]", "{} · [dim]x[/]", "[yellow]a:[/] {}", "{}"]))
def test_a_line_with_escaped_text_is_written_as_rich_writes_it(text: str, line: str) -> None:
    markup = line.format(output.esc(text))
    assert plain(markup) == by_rich(markup)
    assert plain(text, markup=False) == by_rich(text, markup=False)


@given(_MARKUP)
def test_any_markup_rich_accepts_is_written_as_rich_writes_it(markup: str) -> None:
    try:
        expected = by_rich(markup)
    except Exception as exc:  # Rich refuses it: so does the plain console, which hands it over
        with pytest.raises(type(exc)):
            plain(markup)
    else:
        assert plain(markup) == expected


_SCORES = st.floats(min_value=0, max_value=1, allow_nan=False)


@given(
    st.dictionaries(st.sampled_from(VECTOR_NAMES), _SCORES, min_size=1),
    st.none() | st.dictionaries(st.sampled_from(VECTOR_NAMES), _SCORES),
    st.text(max_size=30),
)
def test_the_vectors_table_is_richs_table_as_text(
    vectors: dict[str, float], before: dict[str, float] | None, task: str
) -> None:
    if before is not None:
        before = {**vectors, **before}
    title = f"CHECK · {output.esc(task)}"
    with mock.patch.object(output, "plain", return_value=False):
        table = render.vector_table(vectors, title, before)
    assert not isinstance(table, str)
    with mock.patch.object(output, "plain", return_value=True):
        text = render.vector_table(vectors, title, before)
    assert plain(text) == by_rich(table)


@pytest.mark.subprocess
def test_the_workflow_commands_text_to_a_pipe_loads_no_rich(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NOETIC_HOME", str(tmp_path / ".noetic"))
    monkeypatch.setenv("NOETIC_AI_ID", "plain")
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NOETIC_SESSION"):
        monkeypatch.delenv(name, raising=False)
    vectors = json.dumps(uniform(0.7))
    for args, code in [
        (["bootstrap"], 0),
        (["preflight", "tidy the [b] parser"], 0),  # the prompt a model answers
        (["preflight", "tidy the [b] parser", "--vectors", vectors, "--abandon-open"], 0),
        (["investigate", "--note", "read it"], 0),
        (["check", "--vectors", json.dumps({"know": 0.9})], 0),
        (["state"], 0),
        (["postflight", "--vectors", vectors], 0),
        (["check", "--vectors", vectors], 1),  # no open task: the error too
    ]:
        report = modules_loaded(args, ("rich",), tmp_path)
        assert (report["code"], report["loaded"]) == (code, []), (args, report["output"])


@pytest.mark.subprocess
def test_stdout_and_stderr_interleave_in_a_shared_pipe_as_they_are_written() -> None:
    # each line is flushed as Rich flushes it, so one pipe for both (`2>&1`) holds the lines
    # in the order they were written
    script = (
        "from noetic.cli.output import stderr, stdout\n"
        "stdout().print('[bold]one[/]'); stderr().print('two', markup=False)\n"
        "stdout().print('three'); stderr().print('[dim]four[/]')\n"
    )
    unset = ("FORCE_COLOR", "TTY_COMPATIBLE", "PYTHONUNBUFFERED")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, "one\ntwo\nthree\nfour\n")
