"""Model-written assessments: a table of realistic messy replies, a property test, repair."""

import asyncio
import contextlib
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.assessment import Action, Phase
from noetic.errors import ParseError
from noetic.llm.assessment_reply import assess_with_model, parse_assessment_reply
from noetic.llm.scripted import ScriptedProvider
from noetic.vectors import VECTOR_NAMES

FULL = {v: 0.7 for v in VECTOR_NAMES}


def dumps(d, **kw):
    return json.dumps(d, **kw)


def nested(value=0.7):
    return {
        v: {"score": value, "rationale": f"about {v}", "evidence": "seen"} for v in VECTOR_NAMES
    }


GOOD = [
    ("bare flat object", dumps(FULL), {"know": 0.7}),
    ("envelope", dumps({"vectors": FULL, "recommended_action": "PROCEED"}), {"know": 0.7}),
    ("nested scores", dumps({"vectors": nested(0.6)}), {"do": 0.6}),
    ("json code fence", "```json\n" + dumps({"vectors": FULL}) + "\n```", {"impact": 0.7}),
    ("bare code fence", "```\n" + dumps(FULL) + "\n```", {"state": 0.7}),
    ("prose before", "Here is my honest assessment:\n" + dumps(FULL), {"clarity": 0.7}),
    ("prose after", dumps(FULL) + "\n\nLet me know if you need more.", {"signal": 0.7}),
    ("prose both sides", "Sure!\n" + dumps(FULL) + "\nThat's it.", {"change": 0.7}),
    ("numeric strings", dumps({k: "0.85" for k in VECTOR_NAMES}), {"know": 0.85}),
    ("percent strings", dumps({k: "85%" for k in VECTOR_NAMES}), {"uncertainty": 0.85}),
    ("percent with space", dumps({k: "40 %" for k in VECTOR_NAMES}), {"do": 0.4}),
    ("upper-case names", dumps({k.upper(): 0.5 for k in VECTOR_NAMES}), {"know": 0.5}),
    ("title-case names", dumps({k.title(): 0.5 for k in VECTOR_NAMES}), {"context": 0.5}),
    ("padded names", dumps({f"  {k} ": 0.5 for k in VECTOR_NAMES}), {"coherence": 0.5}),
    (
        "integers 0 and 1",
        dumps({k: (1 if i % 2 else 0) for i, k in enumerate(VECTOR_NAMES)}),
        {"know": 1.0, "engagement": 0.0},
    ),
    (
        "value instead of score",
        dumps({"vectors": {k: {"value": 0.3} for k in VECTOR_NAMES}}),
        {"know": 0.3},
    ),
    (
        "list of vectors",
        dumps({"vectors": [{"vector": k, "score": 0.4} for k in VECTOR_NAMES]}),
        {"impact": 0.4},
    ),
    (
        "list with name key",
        dumps({"vectors": [{"name": k, "score": 0.45, "rationale": "r"} for k in VECTOR_NAMES]}),
        {"know": 0.45},
    ),
    (
        "extra commentary fields",
        dumps({"vectors": FULL, "overall_confidence": 0.7, "reasoning": "long text"}),
        {"know": 0.7},
    ),
    ("wrapped in assessment", dumps({"assessment": {"vectors": FULL}}), {"know": 0.7}),
    (
        "action lower case",
        dumps({"vectors": FULL, "recommended_action": "investigate"}),
        {"know": 0.7},
    ),
    ("action key", dumps({"vectors": FULL, "action": "Clarify"}), {"know": 0.7}),
    ("pretty printed", dumps({"vectors": nested()}, indent=4), {"know": 0.7}),
    ("braces in prose first", "I use {curly} words. " + dumps(FULL), {"know": 0.7}),
    ("object inside an array", dumps([FULL]), {"know": 0.7}),
    (
        "two objects takes first",
        dumps(FULL) + "\n" + dumps({k: 0.1 for k in VECTOR_NAMES}),
        {"know": 0.7},
    ),
    (
        "braces inside strings",
        dumps({"vectors": nested(), "note": "a {tricky} } note"}),
        {"know": 0.7},
    ),
    (
        "hyphenated name",
        dumps({**{k: 0.6 for k in VECTOR_NAMES}}).replace('"do"', '"Do"'),
        {"do": 0.6},
    ),
]

BAD = [
    ("no json at all", "I feel fairly confident about this task overall.", "no JSON object"),
    ("empty", "", "no JSON object"),
    ("truncated json", '{"know": 0.8, "do": 0.', "never closed"),
    ("85 without percent", dumps({**FULL, "know": 85}), "outside [0, 1]"),
    ("1.5", dumps({**FULL, "know": 1.5}), "outside [0, 1]"),
    ("negative", dumps({**FULL, "know": -0.2}), "outside [0, 1]"),
    ("NaN", dumps({**FULL, "know": float("nan")}), "nan"),
    ("Infinity", dumps({**FULL, "know": float("inf")}), "inf"),
    ("percent above 100", dumps({**FULL, "know": "150%"}), "outside 0–100%"),
    ("word score", dumps({**FULL, "know": "high"}), "not a number"),
    ("null score", dumps({**FULL, "know": None}), "must be a number"),
    ("bool score", dumps({**FULL, "know": True}), "must be a number"),
    ("unknown vector", dumps({**FULL, "wisdom": 0.5}), "unknown vector"),
    ("missing vectors", dumps({"know": 0.5, "do": 0.5}), "needs all 13"),
    ("vectors not object", dumps({"vectors": "all good"}), "must be an object"),
    ("bare list of numbers", dumps({"vectors": [0.5, 0.6]}), "not an object"),
    ("unknown action", dumps({"vectors": FULL, "action": "PANIC"}), "unknown action"),
    (
        "keys differing only in case",
        dumps({**FULL, "know": 0.1}).replace("}", ', "KNOW": 0.9}'),
        "'know' and 'KNOW'",
    ),
    (
        "names equal once normalised",
        dumps({**FULL, "know": 0.1}).replace("}", ', " Know ": 0.9}'),
        "'know' and ' Know '",
    ),
    ("rationales as a list", dumps({"vectors": FULL, "rationales": [1, 2]}), "must be an object"),
    ("rationale not text", dumps({"vectors": FULL, "rationales": {"know": 3}}), "must be text"),
    ("trailing comma", dumps(FULL)[:-1] + ",\n}", "trailing comma before '}' at line 2"),
    ("nested brackets", '{"vectors": ' + "[" * 1000 + "]" * 1000 + "}", "json_depth"),
    ("5,001-digit number", dumps(FULL).replace("0.7", "7" * 5001, 1), "number_chars"),
    ("reply too long", dumps(FULL) + " " * 200_000, "reply_chars"),
]


@pytest.mark.parametrize(("label", "text", "expect"), GOOD, ids=[g[0] for g in GOOD])
def test_messy_but_unambiguous_replies_parse(label, text, expect):
    result = parse_assessment_reply(text, Phase.PREFLIGHT)
    for name, value in expect.items():
        assert result.vectors[name] == pytest.approx(value)
    assert result.complete


@pytest.mark.parametrize(("label", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_ambiguous_or_broken_replies_are_refused_with_the_raw_text(label, text, message):
    with pytest.raises(ParseError) as info:
        parse_assessment_reply(text, Phase.PREFLIGHT)
    assert message.lower() in info.value.message.lower()
    assert info.value.raw == text


def test_the_table_is_large_enough():
    assert len(GOOD) + len(BAD) >= 30


def test_check_may_be_partial():
    result = parse_assessment_reply('{"know": "90%"}', Phase.CHECK)
    assert result.vectors == {"know": 0.9}


def test_rationales_and_action_survive():
    text = dumps({"vectors": nested(0.8), "recommended_action": "proceed", "note": "ready"})
    result = parse_assessment_reply(text, "postflight")
    assert result.rationales["know"] == "about know"
    assert result.recommended_action is Action.PROCEED and result.note == "ready"


@pytest.mark.slow
@settings(max_examples=300)
@given(st.text())
def test_no_text_crashes_the_parser_with_anything_but_parse_error(text):
    with contextlib.suppress(ParseError):
        parse_assessment_reply(text, Phase.CHECK)


json_values = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)


@pytest.mark.slow
@settings(max_examples=300)
@given(st.dictionaries(st.sampled_from([*VECTOR_NAMES, "vectors", "note", "x"]), json_values))
def test_no_json_object_crashes_the_parser_either(data):
    with contextlib.suppress(ParseError):
        parse_assessment_reply(json.dumps(data), Phase.CHECK)


def test_one_repair_round_quotes_the_error_back():
    bad = dumps({**FULL, "know": 85})
    provider = ScriptedProvider([bad, dumps(FULL)])
    result = asyncio.run(assess_with_model(provider, "fix the bug", Phase.PREFLIGHT))
    assert result.vectors["know"] == 0.7
    assert len(provider.calls) == 2
    repair = provider.calls[1].messages
    assert repair[-2].content == bad
    assert "outside [0, 1]" in repair[-1].content and "'know'" in repair[-1].content
    assert "TASK: fix the bug" in provider.calls[0].messages[0].content


def test_two_bad_replies_end_in_a_clear_error_with_the_last_raw_text():
    provider = ScriptedProvider(["no idea", "still no json"])
    with pytest.raises(ParseError) as info:
        asyncio.run(assess_with_model(provider, "t", Phase.PREFLIGHT))
    assert info.value.raw == "still no json"
    assert "after one repair round" in info.value.message


@pytest.mark.parametrize(
    "written, expect", [(0.3, 0.3), ("0.3", 0.3), ("30%", 0.3), (None, None), ("1", 1.0)]
)
def test_the_model_states_p_success_in_any_unambiguous_spelling(written, expect):
    reply = {"vectors": FULL} | ({} if written is None else {"p_success": written})
    assert parse_assessment_reply(dumps(reply), Phase.PREFLIGHT).p_success == expect


@pytest.mark.parametrize("written", [85, "85", "130%", "likely", float("nan")])
def test_an_ambiguous_p_success_is_refused_for_repair(written):
    with pytest.raises(ParseError, match="p_success"):
        parse_assessment_reply(json.dumps({"vectors": FULL, "p_success": written}), Phase.CHECK)


def test_the_schema_and_prompt_ask_for_p_success_and_an_adversarial_review_says_so():
    provider = ScriptedProvider([dumps({"vectors": FULL, "p_success": 0.4})])
    result = asyncio.run(
        assess_with_model(provider, "fix the bug", Phase.POSTFLIGHT, review="adversarial")
    )
    assert result.p_success == 0.4 and result.review == "adversarial"
    request = provider.calls[0]
    assert "p_success" in request.json_schema["required"]
    prompt = request.messages[0].content
    assert "find bugs" in prompt and "p_success" in prompt
    standard = ScriptedProvider([dumps(FULL)])
    plain = asyncio.run(assess_with_model(standard, "fix the bug", Phase.POSTFLIGHT))
    assert plain.review == "standard" and plain.p_success is None
    assert "find bugs" not in standard.calls[0].messages[0].content
    with pytest.raises(Exception, match="adversarial review is a POSTFLIGHT"):
        asyncio.run(assess_with_model(standard, "t", Phase.PREFLIGHT, review="adversarial"))


@pytest.mark.parametrize("review", [None, "standard", "adversarial"])
def test_a_postflight_is_built_once_with_the_review_asked_for(review, monkeypatch):
    """The review the request asked for is recorded with the parsed assessment (the reply's
    own word on it is not taken), without building the assessment a second time."""
    from noetic.assessment import Assessment

    provider = ScriptedProvider([dumps({"vectors": FULL, "p_success": 0.4, "review": "x"})])

    def refused(self, **kw):
        raise AssertionError("built again")

    monkeypatch.setattr(Assessment, "model_copy", refused)
    result = asyncio.run(assess_with_model(provider, "t", Phase.POSTFLIGHT, review=review))
    assert result.review == (review or "standard") and result.p_success == 0.4
    assert result == parse_assessment_reply(
        dumps({"vectors": FULL, "p_success": 0.4}), Phase.POSTFLIGHT, review=result.review
    )
