"""The parsers a model's or a user's text goes through: never anything but a named error."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError as PydanticValidationError

from noetic.errors import ParseError, ValidationError
from noetic.nova.personas import parse_persona
from noetic.nova.turn_context import prose
from noetic.nova.turns import Node, SynthesisBlock, parse_block, picks_in

from .panel import said

ALLOWED = (ParseError, ValidationError, PydanticValidationError)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=600))
def test_any_persona_text_parses_or_names_its_field(text):
    try:
        persona = parse_persona(text, "x.md")
    except ValidationError as exc:
        assert exc.message.startswith("x.md: ") and exc.field
    else:
        assert persona.body and persona.short_name


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(
        [n for n in Node if n.value in ("unpack", "experts", "synthesize", "critique", "final")]
    ),
    st.one_of(
        st.text(max_size=400),
        st.dictionaries(
            st.sampled_from(
                [
                    "know",
                    "uncertainty",
                    "severity",
                    "proposal",
                    "experts",
                    "confidence",
                    "recommendation",
                ]
            ),
            st.one_of(
                st.floats(),
                st.text(max_size=20),
                st.integers(),
                st.none(),
                st.lists(st.text(max_size=5), max_size=3),
            ),
        ).map(lambda d: "Text.\n```json\n" + json.dumps(d) + "\n```"),
    ),
)
def test_any_reply_gives_a_block_or_a_named_problem(node, text):
    try:
        block = parse_block(node, text, picks_in({"security"}) if node == Node.UNPACK else None)
    except ALLOWED:
        return
    assert 0.0 <= block.know <= 1.0 and 0.0 <= block.uncertainty <= 1.0


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ({"know": 1.5, "uncertainty": 0.2, "proposal": "p"}, "less than or equal to 1"),
        ({"know": float("nan"), "uncertainty": 0.2, "proposal": "p"}, "finite number"),
        ({"know": 0.5, "proposal": "p"}, "uncertainty"),
        ({"know": 0.5, "uncertainty": 0.5}, "proposal"),
    ],
)
def test_out_of_range_or_missing_state_is_refused_by_name(block, problem):
    text = "x\n```json\n" + json.dumps(block) + "\n```"
    with pytest.raises(PydanticValidationError, match=problem):
        parse_block(Node.SYNTHESIZE, text)


def test_a_deeply_nested_or_duplicated_block_is_a_parse_error():
    nested = "[" * 5000 + "]" * 5000
    with pytest.raises(ParseError, match="nest"):
        parse_block(Node.EXPERTS, '{"know": ' + nested + "}")
    with pytest.raises(ParseError, match="duplicate"):
        parse_block(Node.EXPERTS, '{"know": 0.5, "know": 0.6, "uncertainty": 0.1}')


def test_picks_must_be_in_the_catalogue_and_not_repeated():
    check = picks_in({"security", "legal"})
    with pytest.raises(ValidationError, match="no experts picked"):
        parse_block(Node.UNPACK, said("x", know=0.5, uncertainty=0.5), check)
    with pytest.raises(PydanticValidationError, match="picked twice"):
        parse_block(
            Node.UNPACK,
            said(
                "x",
                know=0.5,
                uncertainty=0.5,
                experts=[{"name": "legal", "reason": "r"}, {"name": "legal", "reason": "r"}],
            ),
            check,
        )


def test_prose_drops_only_the_closing_block():
    text = said("## Proposal\nUse `{json}` tokens.", know=0.5, uncertainty=0.5, proposal="p")
    assert prose(text) == "## Proposal\nUse `{json}` tokens."
    assert SynthesisBlock.model_validate(json.loads(text.split("```json\n")[1].split("```")[0]))
