"""What Python handed to ``python3 -c`` can do, read from its syntax tree: only code that
computes and prints is allowed on a host with no sandbox, and no road to ``os`` is left open."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.tools.shellgate.pycode import undetermined

COMPUTES = [
    "print(1+1)",
    "import sys; print(sys.version)",
    'import json,sys; print(json.load(sys.stdin)["version"])',
    "import os.path; print(os.path.join('a', 'b'))",
    "from os import path; print(path.basename('a/b'))",
    "import os; print(os.getcwd(), os.environ.get('HOME'))",
    "from json import loads; print(loads('[1]'))",
    "import platform; print(platform.python_version())",
    "import importlib.metadata as m; print(m.version('pip'))",
    "from platform import os as o; print(o.getcwd())",
    "import collections; print(collections.Counter('aab').most_common(1))",
    "import re, sys; print(re.findall(r'\\d+', sys.stdin.read()))",
    "try:\n    1/0\nexcept ZeroDivisionError as e:\n    print(e)",
    "x = [i * i for i in range(5)]; print(sum(x))",
    "def f(a):\n    return a + 1\nprint(f(1))",
]
BOUNDLESS = [
    ("import os; os.system('id')", "os.system"),
    ("import subprocess", "imports subprocess"),
    ("open('/etc/passwd').read()", "the name open"),
    ("__import__('os').system('id')", "__import__"),
    ("().__class__.__base__.__subclasses__()", "the attribute __"),
    ("import platform; platform.os.system('id')", "platform.os.system"),
    ("import platform; m = platform.os; m.system('id')", "hands the module"),
    ("from platform import os; os.system('id')", "os.system"),
    ("import os; os.path.os.remove('x')", "os.path.os.remove"),
    ("import glob; glob.os.remove('x')", "glob.os.remove"),
    ("import sys; sys.modules['os'].system('id')", "sys.modules"),
    ("import platform; platform.sys.modules", "sys.modules"),
    ("import operator; operator.attrgetter('__class__')(())", "imports operator"),
    ("import string; string.Formatter().get_field('0.__class__', [()], {})", "string.Formatter"),
    ("import typing; typing.get_type_hints(len)", "imports typing"),
    ("import importlib.metadata as m; m.entry_points()", "entry_points"),
    ("exec('print(1)')", "the name exec"),
    ("eval('1')", "the name eval"),
    ("getattr(1, 'real')", "the name getattr"),
    ("import json as j; k = j; print(k)", "hands the module"),
    ("from . import x", "relatively"),
    ("def f(:", "does not parse"),
]


@pytest.mark.parametrize("code", COMPUTES)
def test_code_that_computes_is_allowed(code: str) -> None:
    assert undetermined(code) is None


@pytest.mark.parametrize(("code", "said"), BOUNDLESS)
def test_code_with_a_road_to_effects_is_named(code: str, said: str) -> None:
    what = undetermined(code)
    assert what is not None and said in what, what


@given(
    safe=st.lists(st.sampled_from(COMPUTES), min_size=1, max_size=3),
    bad=st.sampled_from([c for c, _ in BOUNDLESS if "parse" not in c and "from ." not in c]),
    at=st.integers(0, 3),
)
def test_one_bad_statement_taints_the_program(safe: list[str], bad: str, at: int) -> None:
    statements = list(safe)
    statements.insert(at % (len(safe) + 1), bad)
    assert undetermined("\n".join(statements)) is not None


@given(st.text(max_size=200))
def test_any_text_gets_an_answer(code: str) -> None:
    what = undetermined(code)
    assert what is None or isinstance(what, str)
