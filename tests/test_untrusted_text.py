"""Text that carries bytes that were not UTF-8 (lone surrogates) is refused at the first one,
wherever it is; any other text passes unchanged."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import InvalidValueError
from noetic.untrusted import check_text

_SURROGATE = re.compile("[\ud800-\udfff]")


_ANY = st.characters() | st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)


@given(st.text(alphabet=_ANY, max_size=40))
def test_the_first_surrogate_is_named_and_nothing_else_is_refused(text: str) -> None:
    first = _SURROGATE.search(text)
    if first is None:
        assert check_text(text, "arg") is text
        return
    with pytest.raises(InvalidValueError) as refused:
        check_text(text, "arg")
    assert refused.value.value == first.start()
    assert str(refused.value).startswith(
        f"arg is not valid UTF-8: an invalid byte or lone surrogate at character {first.start()}"
    )


def test_an_undecodable_argument_is_refused_where_its_byte_was() -> None:
    arg = b"caf\xe9 ok".decode("utf-8", "surrogateescape")
    with pytest.raises(InvalidValueError, match="lone surrogate at character 3"):
        check_text(arg, "command-line argument 2")
