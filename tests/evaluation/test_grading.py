"""The judge: the function taken from a reply, and the problem's tests run in real bubblewrap."""

from __future__ import annotations

import asyncio
import os
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.evaluation.grading import extract_code, program, run_tests
from noetic.tools.sandbox import choose

from .standin import ESCAPES, HUNGRY, LOOPS, WRONG

NAMES = st.from_regex(r"[a-z_][a-z0-9_]{0,10}", fullmatch=True)


def test_the_block_that_defines_the_function_is_taken():
    text = (
        "First a helper:\n```\nimport math\n```\nThen:\n```python\ndef g():\n    pass\n```\n"
        "```python\ndef f(x):\n    return x\n```\nDone."
    )
    assert extract_code(text, "f") == "def f(x):\n    return x\n"
    assert extract_code("```py\ndef h():\n    return 1\n```", "f") == "def h():\n    return 1\n"
    assert extract_code("def f(x):\n    return 2\n", "f") == "def f(x):\n    return 2\n"
    assert extract_code("I cannot help with that.", "f") is None
    assert extract_code("```python\ndef f(x):\n    return 3\n", "f") == "def f(x):\n    return 3\n"


@given(NAMES, st.text(alphabet=st.characters(blacklist_characters="`"), max_size=60))
def test_a_fenced_function_is_found_whatever_surrounds_it(name, prose):
    body = f"def {name}(a, b):\n    return a + b\n"
    found = extract_code(f"{prose}\n```python\n{body}```\n{prose}", name)
    assert found == body


@given(st.text(max_size=200), NAMES)
def test_extraction_never_fails_on_any_reply(text, name):
    found = extract_code(text, name)
    assert found is None or found.endswith("\n")


def test_the_program_keeps_a_prompt_that_is_python_and_drops_one_that_is_not():
    source = program("import math\ndef f(x):\n    '''doc'''\n", "def f(x):\n    return 1\n",
                     "def check(c):\n    assert c(0) == 1\n", "f")  # fmt: skip
    assert source.startswith("import math") and source.endswith("check(f)\n")
    worded = program("Write f, which returns one.", "def f(x):\n    return 1\n", "", "f")
    assert "Write f" not in worded


def _verdict(problem, code, timeout=10.0, **limits):
    source = program(problem.prompt, code, problem.test, problem.entry_point)
    return asyncio.run(run_tests(source, choose("required"), timeout_s=timeout, **limits))


@pytest.mark.subprocess
def test_the_canonical_solution_passes_and_a_wrong_one_fails_with_its_error(problems):
    p = problems[2]
    assert _verdict(p, p.prompt + p.canonical_solution).passed
    wrong = _verdict(p, WRONG.format(name=p.entry_point))
    assert not wrong.passed and wrong.reason == "the tests failed: ValueError: not written"
    off = _verdict(p, f"def {p.entry_point}(n):\n    return 0\n")
    assert not off.passed and off.reason.startswith("the tests failed: AssertionError at assert")


@pytest.mark.subprocess
def test_an_endless_loop_is_stopped_at_the_time_limit(problems):
    p = problems[0]
    v = _verdict(p, LOOPS.format(name=p.entry_point), timeout=1.5)
    assert not v.passed and v.timed_out and v.exit_code is None
    assert v.reason == "stopped after 1.5s: the tests did not finish (an endless loop?)"


@pytest.mark.subprocess
def test_a_write_outside_the_workspace_is_refused_and_fails_the_tests(problems, tmp_path):
    p = problems[0]
    v = _verdict(p, ESCAPES.format(name=p.entry_point))
    assert not v.passed and "Read-only file system: '/usr/noetic-eval-escape'" in v.reason
    assert not os.path.exists("/usr/noetic-eval-escape")
    target = tmp_path / "outside.txt"  # under /tmp: hidden behind the sandbox's own
    code = f"def {p.entry_point}(*a):\n    open({str(target)!r}, 'w').write('x')\n    return 1\n"
    assert not _verdict(p, code).passed and not target.exists()


@pytest.mark.subprocess
def test_a_program_that_allocates_without_end_is_stopped_at_the_memory_limit(problems):
    p = problems[0]
    v = _verdict(p, HUNGRY.format(name=p.entry_point), timeout=60, memory_mb=200)
    assert not v.passed and v.out_of_memory and not v.timed_out and v.exit_code == 1
    assert v.reason == "stopped at the memory limit (200 MiB): the tests ran out of memory " \
        "(MemoryError)"  # fmt: skip
    # one the same size that fits passes under the same limit, and the default allows more
    fits = f"def {p.entry_point}(*a):\n    return len(bytearray(100 << 20)) and False\n"
    assert not _verdict(p, fits, memory_mb=200).out_of_memory
    big = f"def {p.entry_point}(*a):\n    b = bytearray(400 << 20)\n    return False\n"
    assert _verdict(p, big, memory_mb=200).out_of_memory
    assert not _verdict(p, big).out_of_memory  # 1024 MiB by default


def test_an_allocation_refused_by_the_system_is_told_from_other_failures():
    from noetic.evaluation.grading import _out_of_memory

    assert _out_of_memory(b"Traceback...\nMemoryError\n")
    assert _out_of_memory(b"OSError: [Errno 12] Cannot allocate memory\n")
    assert _out_of_memory(b"Fatal Python error: _PyMem_Malloc: out of memory\nThread 0x1:\n")
    assert not _out_of_memory(b"AssertionError: MemoryError expected\n")
    assert not _out_of_memory(b"ValueError: not written\n")
    assert not _out_of_memory(b"")


names = st.sampled_from(["add", "add_two", "_add", "f1", "Add", "add2", "x"])
indents = st.sampled_from(["", "    ", "\n "])
spaces = st.sampled_from([" ", "  ", "\t"])
lines = st.one_of(
    st.builds(lambda i, a, n, s: f"{i}{a}def{s}{n}{s[:1]}(x):", indents,
              st.sampled_from(["", "async ", "async  "]), names, spaces),
    st.sampled_from(["x = 1", "# def add(x):", "return add(x)", "class add:", "def add", ""]),
)  # fmt: skip


@given(st.lists(lines, max_size=6), names)
def test_a_function_is_found_by_its_name_as_a_pattern_made_for_it_finds_it(code_lines, name):
    """The problem's function is looked for among the names defined, with one pattern for
    every problem: it finds what a pattern compiled for the name finds."""
    from noetic.evaluation.grading import _defines

    code = "\n".join(code_lines)
    own = re.compile(rf"^\s*(async\s+)?def\s+{re.escape(name)}\s*\(", re.MULTILINE)
    assert _defines(code, name) is (own.search(code) is not None)
    assert _defines("def a.b(x):\n", "a.b") and not _defines("def a_b(x):\n", "a.b")
