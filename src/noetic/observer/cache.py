"""The pattern cache: crystallized answers, found again by meaning — right or silent.

Queries are normalised (case, spacing), embedded offline (:mod:`noetic.embeddings`) and kept in
SQLite (``pattern_cache``), so the cache survives restarts. A hit needs cosine similarity at or
above a deliberately strict threshold (0.92: a cache that answers a different question is worse
than a miss) and the two questions to mean the same by
:func:`noetic.observer.questions.same_question`; the most similar entry that passes is the hit.
During a chain, PatternMatch compares the question (never an observation) only with entries
another run crystallized since the chain began (:meth:`PatternCache.crystallized_meanwhile`).
Entries older than ``ttl`` seconds are removed; above ``max_size``, the least recently used are
evicted (``docs/observer.md``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from noetic.embeddings import Embedder, cosine_top_k
from noetic.frozen import Frozen
from noetic.observer.questions import same_question
from noetic.store.base import BaseStore as Store
from noetic.store.observations import (
    cache_add,
    cache_entry,
    cache_expire,
    cache_newest,
    cache_touch,
    cache_vectors,
)


def normalise(text: str) -> str:
    """Case, spacing and spacing around punctuation do not change a question."""
    text = re.sub(r"\s+", " ", text.strip().lower())
    return re.sub(r"\s*([^\w\s])\s*", r"\1", text)


CANDIDATES = 5  # the most similar entries looked at for one that means the same


class CachedAnswer(Frozen):
    id: int
    query: str
    answer: str
    confidence: float
    layers: tuple[str, ...]
    similarity: float


class PatternCache:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        *,
        threshold: float = 0.92,
        ttl: float = 7 * 24 * 3600,
        max_size: int = 10_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.threshold = threshold
        self.ttl = ttl
        self.max_size = max_size
        self.clock = clock
        self._ids: list[int] = []
        self._matrix: Any = None
        self._load()

    def _load(self) -> None:
        import numpy as np

        self._newest = cache_newest(self.store)
        rows = cache_vectors(self.store, self.embedder.name, self.clock() - self.ttl)
        self._ids = [entry_id for entry_id, _, _ in rows]
        empty = np.zeros((0, self.embedder.dimension), dtype=np.float32)
        self._matrix = (
            np.vstack([np.frombuffer(q, dtype=np.float32) for _, q, _ in rows]) if rows else empty
        )

    def __len__(self) -> int:
        return len(self._ids)

    def lookup(self, text: str, *, touch: bool = True) -> CachedAnswer | None:
        """The most similar live entry at or above the threshold, or ``None``."""
        if cache_expire(self.store, self.clock() - self.ttl):
            self._load()
        if not self._ids:
            return None
        query = self.embedder.embed([normalise(text)])[0]
        for row, similarity in cosine_top_k(query, self._matrix, CANDIDATES):
            if similarity < self.threshold:
                return None
            entry_id = self._ids[row]
            if same_question(cache_entry(self.store, entry_id)["query"], text):
                break
        else:
            return None
        found = (
            cache_touch(self.store, entry_id, self.clock())
            if touch
            else cache_entry(self.store, entry_id)
        )
        kept = {k: found[k] for k in ("query", "answer", "confidence", "layers")}
        return CachedAnswer(id=entry_id, similarity=round(similarity, 6), **kept)

    def knows_question(self, text: str) -> bool:
        """Whether a live entry asks the same question as ``text`` (the lookup's rule)."""
        return self.lookup(text, touch=False) is not None

    def crystallized_meanwhile(self, text: str) -> bool:
        """Whether another run (in this process or another) crystallized ``text``'s question
        since this cache last loaded. The lookup before stage 1 saw every older entry, so only
        a new one can make PatternMatch fire inside a chain; with none, nothing is embedded."""
        if cache_newest(self.store) == self._newest:
            return False
        self._load()
        return self.knows_question(text)

    def add(self, query: str, answer: str, confidence: float, layers: tuple[str, ...]) -> None:
        entry = {
            "query": query,
            "embedder": self.embedder.name,
            "embedding": self.embedder.embed([normalise(query)])[0].tobytes(),
            "answer": answer,
            "answer_embedding": self.embedder.embed([normalise(answer)])[0].tobytes(),
            "confidence": confidence,
            "layers": layers,
            "at": self.clock(),
        }
        cache_add(self.store, entry, self.max_size)
        self._load()
