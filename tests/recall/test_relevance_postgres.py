"""Recall on a PostgreSQL store ranks the relevance set exactly as on SQLite: the same tasks, in
the same order, with the same scores, for every held-out query and in both scopes.

PostgreSQL holds the summaries and their embeddings (``recall_vectors``); on a server without
pgvector (Debian's, here) recall searches them exactly, through the same index it keeps for a
SQLite store. ``test_pgvector.py`` compares the HNSW path on a server that has it."""

import pytest

from noetic.embeddings import count_tokens, load_embedder
from noetic.recall.selection import recall
from noetic.store import Store

from . import relevance

pytestmark = pytest.mark.postgres


def rankings(store, embedder) -> list[list[tuple[str, float]]]:
    built = relevance.build(store)
    relevance.embed_all(store, load_embedder("minilm"))
    out = []
    for q in built.queries:
        for project in (q.project, None):
            result = recall(
                store, q.text, embedder, count_tokens, current=q.current, project=project,
                all_projects=project is None, limit=5, now=relevance.NOW,
            )  # fmt: skip
            out.append([(c.cascade_id, round(c.score, 9)) for c in result.chosen])
    return out


def test_the_relevance_set_ranks_the_same_on_postgresql(tmp_path, postgres_url):
    from noetic.store.postgres import PostgresStore

    embedder = relevance.Cached(load_embedder("minilm"))
    with Store(tmp_path / "sqlite", write_files=False) as sqlite_store:
        on_sqlite = rankings(sqlite_store, embedder)
    with PostgresStore(postgres_url, home=tmp_path / "pg") as pg_store:
        on_postgres = rankings(pg_store, embedder)
    assert sum(len(r) for r in on_sqlite) >= 36 * 3  # the set loads tasks: a real comparison
    assert on_postgres == on_sqlite
