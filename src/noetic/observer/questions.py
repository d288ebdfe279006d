"""When two questions mean the same: the rule the pattern cache answers by.

Embeddings put "Should I deploy on Friday?" and "Should I not deploy on Friday?" almost on top
of each other (cosine 0.97), so similarity alone answers the wrong question. A cached answer is
reused only when the two questions also agree on every part that can flip the answer: numbers,
negation, named things, the question asked, content words, direction and order
(``docs/observer.md`` lists each with examples). A paraphrase that changes more than this is a
miss, not a wrong answer: silence is the safe failure of a cache.
"""

from __future__ import annotations

import re
from typing import Final

NEGATIONS: Final = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nobody",
        "nothing",
        "neither",
        "nor",
        "without",
        "cannot",
        "nowhere",
        "n't",
    ]
)
WH: Final = frozenset(["what", "which", "who", "whom", "whose", "when", "where", "why", "how"])
OBLIGATION: Final = {"should": "should", "ought": "should", "must": "must"}
DIRECTIONAL: Final = frozenset(
    [
        "to",
        "from",
        "than",
        "into",
        "onto",
        "over",
        "before",
        "after",
        "vs",
        "versus",
        "against",
        "toward",
        "towards",
    ]
)
INFINITIVE: Final = frozenset(
    [
        "way",
        "ways",
        "want",
        "need",
        "needs",
        "able",
        "have",
        "has",
        "going",
        "order",
        "try",
        "trying",
        "like",
    ]
)
LOCATIVE: Final = frozenset(
    ["in", "on", "at", "for", "with", "using", "within", "inside", "during", "via", "under"]
)
STOPWORDS: Final = (
    frozenset(
        [
            "a",
            "an",
            "the",
            "is",
            "are",
            "was",
            "were",
            "be",
            "been",
            "being",
            "am",
            "do",
            "does",
            "did",
            "doing",
            "done",
            "can",
            "could",
            "would",
            "will",
            "shall",
            "may",
            "might",
            "i",
            "me",
            "my",
            "mine",
            "we",
            "us",
            "our",
            "you",
            "your",
            "it",
            "its",
            "this",
            "that",
            "these",
            "those",
            "there",
            "here",
            "of",
            "and",
            "or",
            "so",
            "if",
            "then",
            "please",
            "just",
            "really",
            "actually",
            "also",
            "about",
            "any",
            "some",
            "one",
            "ones",
            "way",
            "ways",
            "best",
            "good",
            "exactly",
            "explain",
            "describe",
            "tell",
            "know",
            "go",
            "going",
            "get",
            "gets",
            "got",
            "'s",
            "s",
        ]
    )
    | WH
    | NEGATIONS
    | DIRECTIONAL
    | LOCATIVE
    | frozenset(OBLIGATION)
)
SYNONYMS: Final = {
    word: group[0]
    for group in (
        ("make", "create", "build", "generate", "construct"),
        ("big", "large"),
        ("biggest", "largest"),
        ("fastest", "quickest"),
        ("small", "little", "tiny"),
        ("fast", "quick", "rapid"),
        ("fix", "repair", "resolve"),
        ("start", "begin"),
        ("use", "utilize", "utilise", "employ"),
        ("remove", "delete", "erase"),
        ("error", "err"),
        ("car", "automobile"),
        ("buy", "purchase"),
        ("help", "assist"),
        ("need", "require"),
        ("picture", "image", "photo"),
        ("movie", "film"),
    )
    for word in group
}
NUMBER_WORDS: Final = {
    w: str(i)
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty",
        ]
    )
} | {
    "thirty": "30",
    "forty": "40",
    "fifty": "50",
    "hundred": "100",
    "thousand": "1000",
    "million": "1000000",
    "half": "0.5",
    "twice": "2x",
    "double": "2x",
    "triple": "3x",
}
_TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[A-Za-z][A-Za-z0-9_.+#-]*(?:'[A-Za-z]+)?")
_SENTENCE = re.compile(r"[.?!:;]\s+|\n")


def _stem(word: str) -> str:
    for suffix, keep in (
        ("ies", "y"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


class Signature:
    """The parts of a question that must agree (module docstring)."""

    __slots__ = (
        "content", "core", "direction", "entities", "negations", "numbers", "sequence", "wh"
    )  # fmt: skip

    def __init__(self, text: str) -> None:
        self.numbers: list[str] = []
        self.entities: list[str] = []
        self.sequence: list[str] = []
        self.negations = 0
        self.wh: set[str] = set()
        self.content: set[str] = set()
        self.core: list[str] = []
        self.direction: list[tuple[str, str]] = []
        for sentence in _SENTENCE.split(text):
            self._read(sentence)
        self.direction.sort()

    def _read(self, sentence: str) -> None:
        raw = [t.rstrip(".-") for t in _TOKEN.findall(sentence)]
        pending: str | None = None  # a preposition waiting for its word
        phrase = False  # the next content word sits in a prepositional phrase (it may move)
        previous = ""
        for i, token in enumerate(t for t in raw if t):
            lower, before, previous = token.lower(), previous, token.lower()
            self.sequence.append(lower)
            if lower.endswith("n't"):
                self.negations += 1
                lower = lower[:-3] or lower
            elif lower.endswith("'s") or lower.endswith("'re") or lower.endswith("'ll"):
                lower = lower.split("'")[0]
            if lower[0].isdigit():
                self.numbers.append(lower.replace(",", ""))
                continue
            if lower in NUMBER_WORDS:
                self.numbers.append(NUMBER_WORDS[lower])
                continue
            named = lower != "i" and (
                (i > 0 and token[0].isupper())
                or (len(token) > 1 and token.isupper())
                or any(c.isdigit() or c in "_.+#" for c in token)
            )
            if named:
                self.entities.append(lower)
            if lower in NEGATIONS:
                self.negations += 1
            if lower in WH:
                self.wh.add(lower)
            if lower in OBLIGATION:
                self.wh.add(OBLIGATION[lower])
            if lower == "to" and (before in WH or before in INFINITIVE):
                continue  # "how to", "the way to": an infinitive, not a direction
            if lower in DIRECTIONAL:
                pending, phrase = lower, False
                continue
            if lower in LOCATIVE:
                pending, phrase = None, True
                continue
            if lower in STOPWORDS:
                continue
            word = SYNONYMS.get(lower) or SYNONYMS.get(_stem(lower)) or _stem(lower)
            self.content.add(word)
            if pending is not None:
                self.direction.append((pending, word))
                pending = None
            if not phrase:
                self.core.append(word)
            phrase = False

    def differs(self, other: Signature) -> str | None:
        """The first part on which the two questions disagree, or ``None``."""
        for name in ("numbers", "negations", "wh", "content", "direction", "core"):
            if getattr(self, name) != getattr(other, name):
                return name
        named = set(self.entities) | set(other.entities)  # named in either: "friday" too
        if [w for w in self.sequence if w in named] != [w for w in other.sequence if w in named]:
            return "entities"
        return None


def same_question(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` ask the same thing by the rules in the module docstring."""
    return Signature(a).differs(Signature(b)) is None
