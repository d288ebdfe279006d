"""The reply parser on arbitrary text and on mutations of valid replies.

Whatever the text: an :class:`Assessment` whose every score is in [0, 1], or a
:class:`ParseError` carrying the text — never another exception — and linear work (the text the
JSON decoder is handed never exceeds the reply). Budget: the Hypothesis profile (``make fuzz``
runs the ``fuzz`` profile)."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.assessment import Phase
from noetic.errors import ParseError
from noetic.llm import structured
from noetic.llm.assessment_reply import parse_assessment_reply
from noetic.vectors import VECTOR_NAMES

FUZZ = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse(text: str, phase: Phase) -> None:
    decoded: list[int] = []
    real = structured.parse_json  # type: ignore[attr-defined]

    def counting(span: str, source: str):
        decoded.append(len(span))
        return real(span, source)

    structured.parse_json = counting  # type: ignore[attr-defined]
    try:
        result = parse_assessment_reply(text, phase)
    except ParseError as exc:
        assert exc.raw == text
        return
    finally:
        structured.parse_json = real  # type: ignore[attr-defined]
        assert sum(decoded) <= len(text)
    for name, score in result.vectors.items():
        assert 0.0 <= score <= 1.0, (name, score)


score = st.one_of(
    st.floats(min_value=0, max_value=1),
    st.integers(min_value=0, max_value=1),
    st.integers(min_value=0, max_value=100).map(lambda n: f"{n}%"),
    st.floats(min_value=0, max_value=1).map(str),
)


@st.composite
def valid_reply(draw) -> str:
    names = draw(st.lists(st.sampled_from(VECTOR_NAMES), min_size=1, unique=True))
    style = draw(st.sampled_from(["flat", "envelope", "nested", "list"]))
    scores = {n: draw(score) for n in names}
    if style == "flat":
        doc: object = scores
    elif style == "envelope":
        doc = {"vectors": scores, "recommended_action": "proceed", "note": "n"}
    elif style == "nested":
        doc = {"vectors": {n: {"score": s, "rationale": "r"} for n, s in scores.items()}}
    else:
        doc = {"vectors": [{"vector": n, "score": s} for n, s in scores.items()]}
    text = json.dumps(doc, indent=draw(st.sampled_from([None, 2])))
    return draw(st.sampled_from(["{}", "```json\n{}\n```", "Here:\n{}\nDone."])).format(text)


noise = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["{", "}", "[", "]", '"', ",", ":", "\\", '{"', '",', "0.5", "1e999", "-"]),
    st.integers(1, 400).map(lambda n: "[" * n),
    st.integers(1, 400).map(lambda n: '{"a":' * n),
    st.integers(60, 5000).map(lambda n: "9" * n),
)


@st.composite
def mutated_reply(draw) -> str:
    text = draw(valid_reply())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["insert", "delete", "replace", "truncate", "repeat"]))
        if kind == "insert":
            text = text[:at] + draw(noise) + text[at:]
        elif kind == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 6)) :]
        elif kind == "replace":
            text = text[:at] + draw(noise) + text[at + 1 :]
        elif kind == "truncate":
            text = text[:at]
        else:
            text = text[:at] + text[at : at + 12] * draw(st.integers(2, 50)) + text[at:]
    return text


@FUZZ
@given(st.text(), st.sampled_from(list(Phase)))
def test_arbitrary_text(text, phase):
    _parse(text, phase)


@pytest.mark.slow
@FUZZ
@given(mutated_reply(), st.sampled_from(list(Phase)))
def test_mutations_of_valid_replies(text, phase):
    _parse(text, phase)


@pytest.mark.slow
@FUZZ
@given(valid_reply())
def test_valid_replies_parse_as_a_check(text):
    result = parse_assessment_reply(text, Phase.CHECK)
    assert result.vectors and all(0 <= s <= 1 for s in result.vectors.values())


@FUZZ
@given(st.lists(noise, max_size=30).map("".join))
def test_bracket_and_number_soup(text):
    _parse(text, Phase.CHECK)
