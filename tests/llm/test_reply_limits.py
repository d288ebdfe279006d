"""Replies that break a limit or a rule: refused as malformed, repaired, never raised raw."""

import asyncio
import json
from types import SimpleNamespace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.assessment import Phase
from noetic.errors import InvalidValueError, ParseError
from noetic.llm import structured
from noetic.llm.assessment_reply import assess_with_model, parse_assessment_reply
from noetic.llm.scripted import ScriptedProvider
from noetic.llm.structured import extract_json
from noetic.vectors import VECTOR_NAMES

FULL = json.dumps({v: 0.6 for v in VECTOR_NAMES})


@pytest.mark.parametrize(
    "bad",
    [
        "[" * 2048,
        '{"a": ' + "[" * 2000 + "]" * 2000 + "}",
        "{" * 2048 + "}" * 2048,
        '{"know": ' + "9" * 5001 + "}",
        FULL + "x" * 200_001,
    ],
    ids=["open brackets", "nested arrays", "nested braces", "long number", "too long"],
)
def test_a_reply_breaking_a_limit_goes_through_the_repair_round(bad):
    provider = ScriptedProvider([bad, FULL])
    result = asyncio.run(assess_with_model(provider, "t", Phase.PREFLIGHT))
    assert result.vectors["know"] == 0.6
    assert len(provider.calls) == 2
    assert "could not be used" in provider.calls[1].messages[-1].content


def test_two_replies_over_a_limit_end_in_a_parse_error_naming_it():
    deep = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"
    provider = ScriptedProvider([deep, deep])
    with pytest.raises(ParseError) as info:
        asyncio.run(assess_with_model(provider, "t", Phase.PREFLIGHT))
    assert "json_depth" in info.value.message and info.value.raw == deep


def test_duplicate_keys_are_named_in_the_repair_request():
    dup = FULL[:-1] + ', "KNOW": 0.9}'
    provider = ScriptedProvider([dup, FULL])
    asyncio.run(assess_with_model(provider, "t", Phase.PREFLIGHT))
    assert "'know' and 'KNOW'" in provider.calls[1].messages[-1].content


def test_a_malformed_object_is_reported_with_its_position_not_as_missing():
    text = 'Here it is:\n{"know": 0.5\n "do": 0.5}'
    with pytest.raises(ParseError) as info:
        extract_json(text)
    assert "no JSON object" not in info.value.message
    assert "line 3 column 2" in info.value.message


def test_a_valid_object_after_a_broken_one_is_found():
    assert extract_json('{"know": 0.5,} and then {"know": 0.4}') == {"know": 0.4}


def test_an_object_after_an_unclosed_brace_in_prose_is_found():
    assert extract_json('Use a { here, then {"know": 0.4}') == {"know": 0.4}


@pytest.mark.parametrize("unit", ['{"a', "{", '{"a": [', "{}", '{"a":{"b":', "{x} "])
def test_pathological_replies_are_decoded_once_each_character(unit, monkeypatch):
    """Linear work: the candidates handed to the JSON decoder never overlap, so a reply is
    decoded at most once in total, whatever its shape (timings are in bench/parser.py)."""
    decoded = []
    real = structured.parse_json  # type: ignore[attr-defined]

    def counting(text, source):
        decoded.append(len(text))
        return real(text, source)

    monkeypatch.setattr(structured, "parse_json", counting)
    reply = unit * (50_000 // len(unit))
    with pytest.raises(ParseError):
        parse_assessment_reply(reply, Phase.CHECK)
    assert sum(decoded) <= len(reply)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | st.floats(allow_nan=False,
    allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
    max_size=4),
    max_leaves=20,
)  # fmt: skip


@given(
    st.dictionaries(st.text(max_size=6), json_values, max_size=5), st.sampled_from(["", " ", "\n"])
)
def test_a_bare_object_is_read_at_once_as_the_scan_reads_it(value, space):
    """A reply that is one JSON object is parsed whole, without the scan for the first object,
    and gives what the scan gives (the object after prose)."""
    text = space + json.dumps(value, ensure_ascii=False) + space
    scanned = extract_json("Here it is: " + text)
    real = structured._object_spans
    structured._object_spans = None
    try:
        assert extract_json(text) == scanned == value
    finally:
        structured._object_spans = real


def test_only_json_with_an_escape_or_beyond_ascii_is_looked_at_again_for_surrogates(
    monkeypatch,
):
    """A lone surrogate comes only from an escape or from the text itself: plain ASCII JSON
    without one is not encoded again to look for it; both kinds are still refused, and a bare
    object breaking a rule is refused as the scan says."""
    from types import SimpleNamespace

    from noetic import untrusted

    encoded = []
    real = json.dumps

    def dumps(*a, **k):
        encoded.append(a)
        return real(*a, **k)

    fake = {**vars(json), "dumps": dumps}
    monkeypatch.setattr(untrusted, "json", SimpleNamespace(**fake))
    assert extract_json(FULL) == json.loads(FULL)
    assert extract_json('{"a": "line\\nnext \\"q\\""}') == {"a": 'line\nnext "q"'}
    assert encoded == []
    assert extract_json('{"a": "\\u00e9"}') == {"a": "é"} and len(encoded) == 1
    for text in ['{"a": "\\ud800"}', '{"a": "\ud800"}', '{"\\udfff": 1}', '{"é": "\\ud83d"}']:
        with pytest.raises(ParseError, match="lone surrogate"):
            extract_json(text)
    with pytest.raises(ParseError, match="duplicate keys"):
        extract_json('{"know": 0.5, "know": 0.6}')
    with pytest.raises(ParseError, match="line 1 column 14"):
        extract_json('{"know": 0.5,}')
    assert extract_json('{"a": 1} {"b": 2}') == {"a": 1}  # not one object: the first


@given(st.integers(1, 80), st.integers(0, 80))
def test_nesting_is_refused_past_the_limit_and_brackets_in_strings_do_not_count(depth, quoted):
    """Only text with more brackets than the limit, in strings or not, is scanned for its
    nesting; the rest cannot be nested deeper."""
    from noetic import untrusted

    scans = []
    real = untrusted._BRACKET_OR_QUOTE

    def search(*a):
        scans.append(1)
        return real.search(*a)

    untrusted._BRACKET_OR_QUOTE = SimpleNamespace(search=search)
    try:
        text = "[" * depth + json.dumps("[" * quoted + "{" * quoted) + "]" * depth
        if depth > 64:
            with pytest.raises(InvalidValueError, match="json_depth"):
                untrusted.parse_json(text, "the reply")
        else:
            assert untrusted.parse_json(text, "the reply") is not None
    finally:
        untrusted._BRACKET_OR_QUOTE = real
    assert bool(scans) == (depth + 2 * quoted > 64)
