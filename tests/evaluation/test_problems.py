"""Task sets: HumanEval from the package's data, a team's own JSON Lines, and choosing."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import InvalidValueError, UsageError
from noetic.evaluation.problems import built_in, choose, from_jsonl, parse_lines

LINE = {"task_id": "t/0", "prompt": "def f(x):\n    '''x'''\n", "test": "def check(c):\n"
        "    assert c(1) == 1\n", "entry_point": "f"}  # fmt: skip


def test_humaneval_is_the_164_problems_of_the_package(problems):
    assert len(problems) == 164
    assert [p.task_id for p in problems[:2]] == ["HumanEval/0", "HumanEval/1"]
    assert len({p.task_id for p in problems}) == 164
    assert all(p.canonical_solution and "def check(candidate)" in p.test for p in problems)
    assert problems[0].entry_point == "has_close_elements"


def test_an_unknown_task_set_names_the_ones_there_are():
    with pytest.raises(UsageError, match="unknown task set 'mbpp'") as caught:
        built_in("mbpp")
    assert "humaneval" in (caught.value.fix or "")


def test_a_teams_own_set_is_read_plain_or_gzipped(tmp_path):
    lines = "\n".join(json.dumps({**LINE, "task_id": f"t/{i}"}) for i in range(3)) + "\n\n"
    (tmp_path / "set.jsonl").write_text(lines, encoding="utf-8")
    (tmp_path / "set.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    for name in ("set.jsonl", "set.jsonl.gz"):
        assert [p.task_id for p in from_jsonl(tmp_path / name)] == ["t/0", "t/1", "t/2"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{not json", "set.jsonl line 1: not JSON"),
        ("[1, 2]", "line 1: a problem is a JSON object, not list"),
        (json.dumps({"task_id": "a", "prompt": "p"}), "line 1: missing test, entry_point"),
        (json.dumps({**LINE, "entry_point": "not a name"}), "line 1: entry_point"),
        (json.dumps({**LINE, "prompt": 3}), "line 1: prompt"),
        (json.dumps(LINE) + "\n\n" + json.dumps(LINE), "line 3: task_id 't/0' again"),
        ("\n\n", "set.jsonl: no problems in it"),
    ],
)
def test_a_malformed_task_file_is_refused_naming_the_line(tmp_path, text, message):
    path = tmp_path / "set.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InvalidValueError, match=message):
        from_jsonl(path)


def test_a_missing_or_binary_task_file_says_so(tmp_path):
    with pytest.raises(UsageError, match="no task file"):
        from_jsonl(tmp_path / "absent.jsonl")
    (tmp_path / "b.jsonl").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InvalidValueError, match="not UTF-8"):
        from_jsonl(tmp_path / "b.jsonl")


@given(st.lists(st.text(max_size=40), max_size=6))
def test_any_text_gives_problems_or_a_named_refusal(lines):
    try:
        found = parse_lines(lines, source="x")
    except InvalidValueError as exc:
        assert exc.message.startswith("x")
    else:
        assert found and len({p.task_id for p in found}) == len(found)


def test_choosing_filters_shuffles_then_limits(problems):
    assert [p.task_id for p in choose(problems, matching="HumanEval/16")] == [
        "HumanEval/16", "HumanEval/160", "HumanEval/161", "HumanEval/162", "HumanEval/163"
    ]  # fmt: skip
    assert len(choose(problems, matching="HumanEval/1?")) == 10
    first = choose(problems, seed=7, limit=5)
    assert first == choose(problems, seed=7, limit=5) != choose(problems, seed=8, limit=5)
    assert [p.task_id for p in choose(problems, limit=2)] == ["HumanEval/0", "HumanEval/1"]
    with pytest.raises(InvalidValueError, match="no problem's task id matches 'nothing'"):
        choose(problems, matching="nothing")


@given(st.integers(0, 2**32), st.integers(1, 200))
def test_a_seeded_choice_is_a_subset_without_repeats(seed, limit):
    pool = parse_lines([json.dumps({**LINE, "task_id": f"t/{i}"}) for i in range(30)], source="s")
    chosen = choose(pool, seed=seed, limit=limit)
    assert len(chosen) == min(limit, 30) and len({p.task_id for p in chosen}) == len(chosen)
