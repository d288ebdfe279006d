"""noetic.cached: a value built once, read back by content hash, never stale, never invalid."""

from __future__ import annotations

import marshal
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic import cached


@dataclass(frozen=True, slots=True)
class Leaf:
    name: str
    values: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Tree:
    leaves: tuple[Leaf, ...]
    table: dict[str, Leaf] = field(default_factory=dict)
    flags: dict[str, tuple[str, ...]] = field(default_factory=dict)
    count: int = 0
    ratio: float = 0.5
    note: str | None = None


TYPES = (Leaf, Tree)


def counting(value: object) -> tuple[list[int], object]:
    calls: list[int] = []

    def build() -> object:
        calls.append(1)
        return value

    return calls, build


def test_a_value_is_built_once_and_read_back_equal(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path))
    tree = Tree((Leaf("a", ("x", "y")),), {"k": Leaf("b")}, {"f": ("1",)}, 3, 0.25, None)
    calls, build = counting(tree)
    first = cached.load("tree", [b"source"], build, TYPES)
    again = cached.load("tree", [b"source"], build, TYPES)
    assert first == again == tree and calls == [1]
    assert isinstance(again, Tree) and isinstance(again.table["k"], Leaf)
    assert isinstance(again.leaves, tuple) and isinstance(again.flags["f"], tuple)
    # other bytes (an edited file, other code) are another entry: built again
    cached.load("tree", [b"source", b"code"], build, TYPES)
    cached.load("tree", [b"sourc", b"ecode"], build, TYPES)  # not the same as concatenated
    assert calls == [1, 1, 1]


def test_a_failed_build_is_raised_every_time_and_nothing_is_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path))

    def broken() -> object:
        raise ValueError("bad policy")

    for _ in range(2):
        with pytest.raises(ValueError, match="bad policy"):
            cached.load("tree", [b"x"], broken, TYPES)
    assert list(tmp_path.iterdir()) == []


def test_an_unwritable_or_damaged_cache_only_means_building_again(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(blocked / "cache"))
    calls, build = counting(Leaf("a"))
    assert cached.load("leaf", [b"x"], build, TYPES) == Leaf("a")
    assert cached.load("leaf", [b"x"], build, TYPES) == Leaf("a")
    assert calls == [1, 1]
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path / "ok"))
    cached.load("leaf", [b"x"], build, TYPES)
    (entry,) = (tmp_path / "ok").iterdir()
    entry.write_bytes(b"\x00garbage")
    assert cached.load("leaf", [b"x"], build, TYPES) == Leaf("a")
    assert len(calls) == 4
    assert cached.load("leaf", [b"x"], build, ()) == Leaf("a")  # a type it is not told of
    assert len(calls) == 5


plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=4).map(tuple)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@given(plain)
def test_plain_data_comes_back_as_it_went(value: object) -> None:
    assert cached._decode(marshal.loads(marshal.dumps(cached._encode(value))), {}) == value


class Branch(NamedTuple):
    leaf: Leaf
    names: tuple[str, ...] = ()
    table: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)


def test_named_tuples_come_back_as_themselves(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path))
    branch = Branch(Leaf("a", ("x",)), ("n",), {"k": ("v",)})
    calls, build = counting((branch, Branch(Leaf("b"))))
    first = cached.load("branch", [b"source"], build, (*TYPES, Branch))
    again = cached.load("branch", [b"source"], build, (*TYPES, Branch))
    assert first == again and calls == [1]
    assert type(again[0]) is Branch and again[0].leaf == Leaf("a", ("x",))
    assert again[0].table == {"k": ("v",)}
