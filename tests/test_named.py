"""``noetic.named.NamedTuple`` builds the class :class:`typing.NamedTuple` builds: the same
fields, defaults, methods, docstring, equality, pickling and errors, without checking the
annotations (the text kept as written)."""

from __future__ import annotations

import pickle
import typing
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.named import NamedTuple


class Fast(NamedTuple):
    """An option."""

    dest: str
    flags: tuple[str, ...]
    kind: type = str
    default: Any = None
    off_flags: tuple[str, ...] = ()

    def spelled(self) -> str:
        return "/".join(self.flags)


class Slow(typing.NamedTuple):
    """An option."""

    dest: str
    flags: tuple[str, ...]
    kind: type = str
    default: Any = None
    off_flags: tuple[str, ...] = ()

    def spelled(self) -> str:
        return "/".join(self.flags)


@given(st.text(), st.lists(st.text(), max_size=3), st.none() | st.integers() | st.text())
def test_it_behaves_as_typings(dest: str, flags: list[str], default: Any) -> None:
    fast, slow = (
        Fast(dest, tuple(flags), default=default),
        Slow(dest, tuple(flags), default=default),
    )
    assert tuple(fast) == tuple(slow) and fast == slow and hash(fast) == hash(slow)
    assert repr(fast).removeprefix("Fast") == repr(slow).removeprefix("Slow")
    assert fast._asdict() == slow._asdict()
    assert fast._replace(dest="x") == slow._replace(dest="x")
    assert fast.spelled() == slow.spelled()
    assert pickle.loads(pickle.dumps(fast)) == fast


def test_the_class_is_typings() -> None:
    assert Fast._fields == Slow._fields
    assert Fast._field_defaults == Slow._field_defaults
    assert Fast.__doc__ == Slow.__doc__ == "An option."
    assert Fast.__module__ == __name__ and Fast.__qualname__ == "Fast"
    assert issubclass(Fast, tuple) and Fast.__mro__[1:] == Slow.__mro__[1:]
    assert list(Fast.__annotations__) == list(Slow.__annotations__)
    assert typing.get_type_hints(Fast) == typing.get_type_hints(Slow)


def test_its_errors_are_typings() -> None:
    with pytest.raises(
        TypeError, match="Non-default namedtuple field b cannot follow default field a"
    ):

        class Bad(NamedTuple):
            a: int = 1
            b: int

    with pytest.raises(AttributeError, match="Cannot overwrite NamedTuple attribute _replace"):

        class Worse(NamedTuple):
            a: int

            def _replace(self) -> None: ...
