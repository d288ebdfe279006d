"""Each turn's context: the question, the running synthesis and only the turns that persona
needs, under a token budget counted with the real tokenizer.

The seed's ``_build_context`` pastes the whole history into every turn, so the prompt grows with
the turns and the run's prompt tokens with their square. Here a node names the pieces it needs
(:func:`pieces_for`), each with a priority; :func:`assemble` keeps the most important pieces
whole, cuts the first one that no longer fits to the tokens left (marked as cut) and leaves out
the rest, listing what it left out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from noetic.llm.tokens import count_tokens
from noetic.nova.turns import Node, Turn

_BLOCK = re.compile(r"\n*```json\s*\{.*?\}\s*```\s*$", re.DOTALL)
CUT_MARK = "\n[… cut to fit the context budget]"
_MIN_USEFUL = 40  # tokens: below this a cut piece says nothing and is left out instead


@dataclass(frozen=True)
class Piece:
    title: str
    text: str
    priority: int  # 0 is kept first


@dataclass(frozen=True)
class Context:
    text: str
    tokens: int
    cut: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()


def _render(piece: Piece, text: str | None = None) -> str:
    return f"## {piece.title}\n{piece.text if text is None else text}"


def _shorten(piece: Piece, budget: int, count: Callable[[str], int]) -> str | None:
    """The piece cut to at most ``budget`` tokens (with the cut mark), or None if too small."""
    if budget < _MIN_USEFUL:
        return None
    text = piece.text
    while text:
        tokens = count(_render(piece, text + CUT_MARK))
        if tokens <= budget:
            return _render(piece, text.rstrip() + CUT_MARK)
        text = text[: max(0, int(len(text) * min(0.95, budget / tokens)))]
    return None


def assemble(
    pieces: list[Piece], budget: int, count: Callable[[str], int] = count_tokens
) -> Context:
    """The pieces that fit in ``budget`` tokens, most important first, in document order."""
    chosen: dict[int, str] = {}
    cut: list[str] = []
    left_out: list[str] = []
    remaining = budget
    for index in sorted(range(len(pieces)), key=lambda i: (pieces[i].priority, i)):
        piece = pieces[index]
        if not piece.text.strip():
            continue
        whole = _render(piece)
        tokens = count(whole) + 2  # and the blank line joining it to the next
        if tokens <= remaining:
            chosen[index] = whole
            remaining -= tokens
            continue
        short = _shorten(piece, remaining - 2, count)
        if short is None:
            left_out.append(piece.title)
            continue
        chosen[index] = short
        cut.append(piece.title)
        remaining -= count(short) + 2
    text = "\n\n".join(chosen[i] for i in sorted(chosen))
    tokens = count(text)
    while tokens > budget and chosen:  # joining can merge tokens differently: drop the least
        last = max(chosen, key=lambda i: (pieces[i].priority, i))
        left_out.append(pieces[last].title)
        del chosen[last]
        text = "\n\n".join(chosen[i] for i in sorted(chosen))
        tokens = count(text)
    return Context(text=text, tokens=tokens, cut=tuple(cut), left_out=tuple(left_out))


def prose(text: str) -> str:
    """A turn's Markdown without its closing JSON block (its fields are routing, not argument)."""
    return _BLOCK.sub("", text).rstrip()


def _latest(turns: list[Turn], *nodes: Node) -> Turn | None:
    return next((t for t in reversed(turns) if t.node in nodes and t.status != "failed"), None)


def pieces_for(
    node: Node,
    persona: str,
    round: int,
    question: str,
    turns: list[Turn],
    *,
    focus: str = "",
    catalogue: str = "",
    recall: str = "",
    guidance: str = "",
) -> list[Piece]:
    """What ``persona`` needs for its turn at ``node`` in ``round``, given the turns so far."""
    pieces = [Piece("Question", question, 0)]
    unpack = _latest(turns, Node.UNPACK)
    synthesis = _latest(turns, Node.SYNTHESIZE, Node.REVISE)
    critique = _latest(turns, Node.CRITIQUE)
    this_round = [
        t for t in turns if t.node == Node.EXPERTS and t.round == round and t.status != "failed"
    ]
    if guidance:
        pieces.append(Piece("A person's decision or guidance", guidance, 0))
    if node == Node.UNPACK:
        pieces += [
            Piece("Expert catalogue", catalogue, 1),
            Piece("What the project already knows", recall, 3),
        ]
    elif node == Node.EXPERTS:
        own = [t for t in turns if t.node == Node.EXPERTS and t.persona == persona]
        pieces += [
            Piece("Focus for this round", focus, 0),
            Piece("Current synthesis (DCE)", prose(synthesis.content) if synthesis else "", 1),
            Piece("The DCE's framing of the question", prose(unpack.content) if unpack else "", 2),
            Piece("Your previous turn", prose(own[-1].content) if own else "", 3),
        ]
    elif node == Node.SYNTHESIZE:
        silent = [
            f"- {t.role} ({t.persona}): {t.error}"
            for t in turns
            if t.node == Node.EXPERTS and t.round == round and t.status == "failed"
        ]
        pieces.append(Piece("Focus for this round", focus, 0))
        pieces.append(Piece("Experts who could not answer", "\n".join(silent), 0))
        pieces += [Piece(f"{t.role} ({t.persona})", prose(t.content), 1) for t in this_round]
        pieces += [
            Piece("Your previous synthesis", prose(synthesis.content) if synthesis else "", 2),
            Piece("Your framing of the question", prose(unpack.content) if unpack else "", 3),
        ]
    elif node == Node.CRITIQUE:
        pieces.append(
            Piece("Synthesis under review (DCE)", prose(synthesis.content) if synthesis else "", 0)
        )
        pieces += [Piece(f"{t.role} ({t.persona})", prose(t.content), 2) for t in this_round]
        earlier = prose(critique.content) if critique and critique.round < round else ""
        pieces.append(Piece("Your previous critique", earlier, 3))
    elif node in (Node.REVISE, Node.FINAL):
        pieces += [
            Piece("Current synthesis", prose(synthesis.content) if synthesis else "", 0),
            Piece("Critique (CAE)", prose(critique.content) if critique else "", 1),
        ]
        pieces += [Piece(f"{t.role} ({t.persona})", prose(t.content), 3) for t in this_round]
    return pieces
