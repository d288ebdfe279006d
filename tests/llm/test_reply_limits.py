"""Replies that break a limit or a rule: refused as malformed, repaired, never raised raw."""

import asyncio
import json

import pytest

from noetic.assessment import Phase
from noetic.errors import ParseError
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
