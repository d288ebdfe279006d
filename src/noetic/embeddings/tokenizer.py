"""The Llama-2 tokenizer shipped inside the ``wordllama`` package: WordLlama's vocabulary, and
Noetic's token counts (:mod:`noetic.llm.tokens` documents the choice). Found and parsed without
importing ``wordllama`` and without any download."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Any

from noetic.errors import UsageError

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256


def wordllama_dir() -> Path:
    """The installed ``wordllama`` package folder, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "offline embeddings and token counts need the 'wordllama' package, which Noetic "
            "installs with itself",
            fix="reinstall Noetic: pip install --force-reinstall noetic",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def tokenizer_file() -> Path:
    return wordllama_dir() / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"


@functools.cache
def llama_tokenizer() -> Any:
    """The Llama-2 tokenizer shipped with ``wordllama``, parsed once per process."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UsageError(
            "token counting and embeddings need the 'tokenizers' package, which Noetic "
            "installs with itself",
            fix="reinstall Noetic: pip install --force-reinstall noetic",
        ) from None
    tokenizer = Tokenizer.from_file(str(tokenizer_file()))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(text: str) -> int:
    """Tokens in ``text`` with the Llama-2 tokenizer (no special tokens added); re-exported by
    :mod:`noetic.llm.tokens`, which documents the choice."""
    if not text:
        return 0
    return len(llama_tokenizer().encode(text, add_special_tokens=False).ids)
