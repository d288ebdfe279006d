"""Counting tokens offline with a real tokenizer.

The tokenizer is the Llama-2 SentencePiece BPE (32,000 tokens) that ships inside the
``wordllama`` package, loaded with the ``tokenizers`` library; nothing is downloaded. It is not
any hosted provider's own tokenizer (those are not published for offline use), and on English
prose and code it counts somewhat *more* tokens than OpenAI's cl100k/o200k encodings, so a
budget measured with it errs on the safe side. ``bench/token_counts.py`` prints the comparison.
"""

from __future__ import annotations

import functools
from typing import Any

from noetic.embeddings import tokenizer_file
from noetic.errors import UsageError

TOKENIZER_NAME = "llama-2 (wordllama l2_supercat)"


@functools.cache
def _tokenizer() -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UsageError(
            "token counting needs the 'tokenizers' package, which Noetic installs with itself",
            fix="reinstall Noetic: pip install --force-reinstall noetic",
        ) from None
    return Tokenizer.from_file(str(tokenizer_file()))


def count_tokens(text: str) -> int:
    """Tokens in ``text`` (no special tokens added)."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
