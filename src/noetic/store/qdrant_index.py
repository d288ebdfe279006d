"""A Qdrant collection of task embeddings, the optional backend for recall's semantic search.

Local mode (a folder, no server) or a server URL. Point ids are UUIDs derived from the cascade
id; the payload keeps the cascade id. Cosine distance, so scores equal the numpy backend's dot
products of L2-normalised vectors.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from noetic.errors import StoreError, UsageError

_NS = uuid.UUID("6f1f6c39-3f64-4a55-9a55-5e0f2a0b4d11")


def _point_id(cascade_id: str) -> str:
    return str(uuid.uuid5(_NS, cascade_id))


class QdrantIndex:
    def __init__(self, location: str, dimension: int, *, collection: str = "noetic_tasks") -> None:
        try:
            from qdrant_client import QdrantClient, models
        except ImportError:
            raise UsageError(
                "the Qdrant backend needs qdrant-client", fix="pip install 'noetic[qdrant]'"
            ) from None
        self._models = models
        self.location = location
        remote = location.startswith(("http://", "https://"))
        with self._reachable():
            # The client's own version probe runs in a thread and only warns when the server is
            # down; the first real request below reports that as an error instead.
            self.client = (
                QdrantClient(url=location, check_compatibility=False)
                if remote
                else QdrantClient(path=location)
            )
            self.collection = collection
            if not self.client.collection_exists(collection):
                self.client.create_collection(
                    collection,
                    vectors_config=models.VectorParams(
                        size=dimension, distance=models.Distance.COSINE
                    ),
                )

    @contextmanager
    def _reachable(self) -> Iterator[None]:
        """Qdrant's connection and HTTP errors become a :class:`StoreError` naming the server."""
        from qdrant_client.http.exceptions import ApiException

        try:
            yield
        except ApiException as exc:
            raise StoreError(
                f"Qdrant at {self.location} did not answer: {exc}",
                fix="start the server (e.g. docker run -p 6333:6333 qdrant/qdrant), or give a "
                "local folder instead: --qdrant ./qdrant-data",
            ) from None

    def close(self) -> None:
        self.client.close()

    def sync(self, cascade_ids: list[str], vectors: Any) -> int:
        """Upsert the vectors not yet in the collection; returns how many were added."""
        with self._reachable():
            have: set[str] = set()
            for start in range(0, len(cascade_ids), 1000):
                chunk = [_point_id(c) for c in cascade_ids[start : start + 1000]]
                have |= {str(p.id) for p in self.client.retrieve(self.collection, chunk)}
            new = [
                self._models.PointStruct(
                    id=_point_id(cid), vector=vectors[i].tolist(), payload={"cascade_id": cid}
                )
                for i, cid in enumerate(cascade_ids)
                if _point_id(cid) not in have
            ]
            for start in range(0, len(new), 1000):
                self.client.upsert(self.collection, new[start : start + 1000])
            return len(new)

    def similarities(self, query: Any, cascade_ids: list[str]) -> dict[str, float]:
        """Cosine similarity of ``query`` to each of the given tasks."""
        ids = [_point_id(c) for c in cascade_ids]
        with self._reachable():
            result = self.client.query_points(
                self.collection,
                query=query.tolist(),
                limit=max(1, len(cascade_ids)),
                query_filter=self._models.Filter(must=[self._models.HasIdCondition(has_id=ids)]),
                with_payload=True,
            )
        return {(p.payload or {})["cascade_id"]: float(p.score) for p in result.points}
