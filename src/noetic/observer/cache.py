"""The pattern cache: crystallized answers, found again by meaning.

Queries are normalised (case, spacing) and embedded offline (:mod:`noetic.embeddings`). The
default threshold, 0.92 cosine, is deliberately strict: a cache that answers a different
question is worse than a miss. For the same reason a hit also needs the same numbers in both
questions: static embeddings put "question 12 about topic 5" close to "question 13 about
topic 9", but the answers differ. During a chain, an observation that matches a cached
*answer* feeds the PatternMatch reason: the chain has arrived somewhere already known.

Entries live in SQLite (``pattern_cache``), so the cache survives restarts. A lookup embeds the
query and takes the most similar live entry (exact cosine search over all entries held in
memory); similarity at or above the threshold is a hit. Entries older than ``ttl`` seconds are
dead and removed; above ``max_size`` entries, the least recently used are evicted. A hit
refreshes the entry's place in that order.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from noetic.embeddings import Embedder, cosine_top_k
from noetic.store import Store
from noetic.store.observations import (
    cache_add,
    cache_entry,
    cache_expire,
    cache_touch,
    cache_vectors,
)


def normalise(text: str) -> str:
    """Case, spacing and spacing around punctuation do not change a question."""
    text = re.sub(r"\s+", " ", text.strip().lower())
    return re.sub(r"\s*([^\w\s])\s*", r"\1", text)


def _numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


class CachedAnswer(BaseModel):
    model_config = ConfigDict(frozen=True)

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

        rows = cache_vectors(self.store, self.embedder.name, self.clock() - self.ttl)
        self._ids = [entry_id for entry_id, _, _ in rows]
        empty = np.zeros((0, self.embedder.dimension), dtype=np.float32)
        self._matrix = (
            np.vstack([np.frombuffer(q, dtype=np.float32) for _, q, _ in rows]) if rows else empty
        )
        self._answers = (
            np.vstack([np.frombuffer(a, dtype=np.float32) for _, _, a in rows]) if rows else empty
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
        ((row, similarity),) = cosine_top_k(query, self._matrix, 1)
        if similarity < self.threshold:
            return None
        entry_id = self._ids[row]
        if _numbers(cache_entry(self.store, entry_id)["query"]) != _numbers(text):
            return None  # same words, other numbers: another question
        found = (
            cache_touch(self.store, entry_id, self.clock())
            if touch
            else cache_entry(self.store, entry_id)
        )
        return CachedAnswer(
            id=entry_id,
            query=found["query"],
            answer=found["answer"],
            confidence=found["confidence"],
            layers=found["layers"],
            similarity=round(similarity, 6),
        )

    def knows_answer(self, content: str) -> bool:
        """Whether ``content`` is (at the threshold) an answer already crystallized."""
        if not self._ids:
            return False
        vector = self.embedder.embed([normalise(content)])[0]
        ((_, similarity),) = cosine_top_k(vector, self._answers, 1)
        return similarity >= self.threshold

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
