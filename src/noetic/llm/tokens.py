"""Counting tokens offline with a real tokenizer.

The tokenizer is the Llama-2 SentencePiece BPE (32,000 tokens) that ships inside the
``wordllama`` package, loaded with the ``tokenizers`` library; nothing is downloaded. It is not
any hosted provider's own tokenizer (those are not published for offline use), and on English
prose and code it counts somewhat *more* tokens than OpenAI's cl100k/o200k encodings, so a
budget measured with it errs on the safe side. ``bench/token_counts.py`` prints the comparison.
"""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from noetic.errors import UsageError

TOKENIZER_NAME = "llama-2 (wordllama l2_supercat)"


@functools.cache
def _tokenizer() -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UsageError(
            "token counting needs the 'tokenizers' package", fix="pip install 'noetic[tokens]'"
        ) from None
    spec = importlib.util.find_spec("wordllama")  # locate the files without importing it
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "token counting needs the tokenizer file shipped in 'wordllama'",
            fix="pip install 'noetic[tokens]'",
        )
    folder = Path(next(iter(spec.submodule_search_locations)))
    return Tokenizer.from_file(str(folder / "tokenizers" / "l2_supercat_tokenizer_config.json"))


def count_tokens(text: str) -> int:
    """Tokens in ``text`` (no special tokens added)."""
    if not text:
        return 0
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
