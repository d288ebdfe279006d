"""The policy's path patterns: each one's expression is compiled only when a path holds its
literal part, and the answer is the one a single expression of all of them gives."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from noetic.tools.shellgate import path_patterns
from noetic.tools.shellgate.path_patterns import compile_all

HOME = "/home/u"
WORKSPACE = "/work/p"
_PIECES = st.sampled_from(["/", "a", "b", ".", "*", "**", "?", "~", "{workspace}", "ssh", "-"])
_PATTERNS = st.lists(st.lists(_PIECES, min_size=1, max_size=6).map("".join), max_size=4)
_PATHS = st.lists(
    st.sampled_from(["/", "a", "b", ".", "ssh", "home", "u", "work", "p", "-", "\n"]), max_size=9
).map("".join)


def _whole(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One expression of every pattern, as the gate compiled them before."""
    parts = [path_patterns._source(p, HOME, WORKSPACE)[0] for p in patterns]
    return re.compile("^(?:" + "|".join(parts) + ")$")


@given(_PATTERNS, st.lists(_PATHS, max_size=4))
def test_patterns_match_what_one_expression_of_them_matches(
    patterns: list[str], tried: list[str]
) -> None:
    found = compile_all(tuple(patterns), HOME, WORKSPACE)
    whole = _whole(tuple(patterns))
    for path in [*tried, HOME + "/ssh", WORKSPACE + "/a", "/"]:
        assert found.match(path) == (whole.match(path) is not None), (patterns, path)


def test_a_path_without_a_patterns_literal_part_compiles_nothing() -> None:
    path_patterns._compiled.cache_clear()
    found = compile_all(("~/.ssh/**", "{workspace}/.git/hooks/*", "**/.env"), HOME, WORKSPACE)
    assert not found.match("/tmp/x")
    assert path_patterns._compiled.cache_info().currsize == 0
    assert found.match(HOME + "/.ssh/id_rsa")
    assert found.match(WORKSPACE + "/sub/.env") and not found.match(WORKSPACE + "/.envrc")
    assert path_patterns._compiled.cache_info().currsize == 2
