"""The per-turn context: within its budget whatever the pieces, most important kept first."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from noetic.nova.turn_context import CUT_MARK, Piece, assemble


def words(text: str) -> int:
    return len(text.split())


def test_pieces_that_fit_are_kept_whole_in_document_order():
    ctx = assemble([Piece("A", "one two", 2), Piece("B", "three", 0)], 100, count=words)
    assert ctx.text == "## A\none two\n\n## B\nthree" and not ctx.cut and not ctx.left_out


def test_the_least_important_piece_is_cut_then_left_out():
    pieces = [Piece("Q", "q " * 10, 0), Piece("Big", "w " * 500, 1), Piece("Tail", "t " * 50, 2)]
    ctx = assemble(pieces, 200, count=words)
    assert ctx.tokens <= 200 and ctx.cut == ("Big",) and ctx.left_out == ("Tail",)
    assert CUT_MARK.strip() in ctx.text and ctx.text.startswith("## Q")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.text(min_size=0, max_size=400), st.integers(0, 3)), min_size=0, max_size=8
    ),
    st.integers(1, 400),
)
def test_never_over_budget_with_the_real_tokenizer(raw, budget):
    pieces = [Piece(f"p{i}", text, prio) for i, (text, prio) in enumerate(raw)]
    ctx = assemble(pieces, budget)
    assert ctx.tokens <= budget
    kept = {p.title for p in pieces if f"## {p.title}\n" in ctx.text}
    assert not kept & set(ctx.left_out)
