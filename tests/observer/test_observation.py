import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.errors import ParseError
from noetic.observer.observation import parse_observation

GOOD = [
    ("canonical", "CONFIDENCE: 0.85\nLAYERS: C01,C02,C07\nCONTENT:\nAnalysis.", 0.85,
     ("C01", "C02", "C07"), "Analysis."),
    ("lower case", "confidence: 0.7\nlayers: c01, c02\ncontent:\nok", 0.7, ("C01", "C02"), "ok"),
    ("extra spaces", "  CONFIDENCE :   0.6 \n LAYERS :  C03 ,  C04 \n CONTENT :  text", 0.6,
     ("C03", "C04"), "text"),
    ("names in brackets", "CONFIDENCE: 0.8\nLAYERS: C01 (Emotion), C13 (Balance)\nCONTENT:\nx",
     0.8, ("C01", "C13"), "x"),
    ("no zero padding", "CONFIDENCE: 0.8\nLAYERS: C1, C7\nCONTENT: y", 0.8, ("C01", "C07"), "y"),
    ("layer names only", "CONFIDENCE: 0.8\nLAYERS: Emotion, Technical\nCONTENT: z", 0.8,
     ("C01", "C07"), "z"),
    ("space separated", "CONFIDENCE: 0.5\nLAYERS: C02 C05 C09\nCONTENT: w", 0.5,
     ("C02", "C05", "C09"), "w"),
    ("semicolons", "CONFIDENCE: 0.5\nLAYERS: C02; C05\nCONTENT: w", 0.5, ("C02", "C05"), "w"),
    ("percent", "CONFIDENCE: 85%\nLAYERS: C02\nCONTENT: v", 0.85, ("C02",), "v"),
    ("markdown bold", "**CONFIDENCE:** 0.9\n**LAYERS:** C02\n**CONTENT:**\nbold", 0.9, ("C02",),
     "bold"),
    ("missing content marker", "CONFIDENCE: 0.9\nLAYERS: C02\n2+2 is 4.", 0.9, ("C02",),
     "2+2 is 4."),
    ("preamble", "Here is my observation.\nCONFIDENCE: 0.4\nLAYERS: C06\nCONTENT:\ndeep", 0.4,
     ("C06",), "deep"),
    ("equals sign", "CONFIDENCE = 0.66\nLAYERS = C08\nCONTENT = art", 0.66, ("C08",), "art"),
    ("duplicate layers", "CONFIDENCE: 0.7\nLAYERS: C02, C02, c2\nCONTENT: d", 0.7, ("C02",), "d"),
    ("none layers", "CONFIDENCE: 0.7\nLAYERS: none\nCONTENT: nothing", 0.7, (), "nothing"),
    ("bracketed list", "CONFIDENCE: 0.7\nLAYERS: [C10, C15]\nCONTENT: meta", 0.7,
     ("C10", "C15"), "meta"),
    ("multiline content", "CONFIDENCE: 1\nLAYERS: C07\nCONTENT:\nline one\nline two", 1.0,
     ("C07",), "line one\nline two"),
    ("integer zero", "CONFIDENCE: 0\nLAYERS: C07\nCONTENT: unsure", 0.0, ("C07",), "unsure"),
]  # fmt: skip

BAD = [
    ("no confidence", "LAYERS: C01\nCONTENT: x", "no CONFIDENCE"),
    ("confidence above 1", "CONFIDENCE: 1.5\nLAYERS: C01\nCONTENT: x", "outside [0, 1]"),
    ("negative", "CONFIDENCE: -0.2\nLAYERS: C01\nCONTENT: x", "outside [0, 1]"),
    ("percent above 100", "CONFIDENCE: 150%\nLAYERS: C01\nCONTENT: x", "outside [0, 1]"),
    ("word confidence", "CONFIDENCE: high\nLAYERS: C01\nCONTENT: x", "not a number"),
    ("unknown layer", "CONFIDENCE: 0.5\nLAYERS: C16\nCONTENT: x", "unknown cognitive layer"),
    ("unknown layer name", "CONFIDENCE: 0.5\nLAYERS: Astrology\nCONTENT: x", "unknown cognitive"),
    ("no layers line", "CONFIDENCE: 0.5\nCONTENT: x", "no LAYERS"),
    ("empty content", "CONFIDENCE: 0.5\nLAYERS: C01\nCONTENT:   ", "no content"),
    ("prose only", "I think this is about emotions, fairly sure.", "no CONFIDENCE"),
]


@pytest.mark.parametrize(("label", "text", "conf", "layers", "content"), GOOD,
                         ids=[g[0] for g in GOOD])  # fmt: skip
def test_realistic_replies_parse(label, text, conf, layers, content):
    o = parse_observation(text, 2)
    assert o.confidence == pytest.approx(conf)
    assert o.layers == layers
    assert o.content == content
    assert o.stage == 2


@pytest.mark.parametrize(("label", "text", "message"), BAD, ids=[b[0] for b in BAD])
def test_unclear_replies_are_errors_not_a_silent_half(label, text, message):
    with pytest.raises(ParseError) as info:
        parse_observation(text, 1)
    assert message in info.value.message
    assert info.value.raw == text


def test_table_size():
    assert len(GOOD) + len(BAD) >= 20


def test_predicted_confidence_is_read_when_present():
    o = parse_observation("CONFIDENCE: 0.6\nPREDICTED_CONFIDENCE: 0.97\nLAYERS: C02\nCONTENT: x", 1)
    assert o.predicted_confidence == 0.97 and o.confidence == 0.6


@given(st.text())
def test_no_text_crashes_the_parser_with_anything_but_parse_error(text):
    try:
        o = parse_observation(text, 1)
    except ParseError:
        return
    assert 0 <= o.confidence <= 1 and o.content
