"""The workflow commands on a PostgreSQL store, chosen each of the three ways: ``--store URL``,
``$NOETIC_STORE_URL`` and ``[store] url`` in the store directory's config.toml. The commands run
as an agent's shell runs them (the installed ``noetic``, a fresh process each); the rows land in
the server and no SQLite file is made."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import uniform

pytest.importorskip("psycopg")
pytestmark = pytest.mark.postgres
NOETIC = str(Path(sys.executable).with_name("noetic"))


def noetic(*args: str, env: dict[str, str]) -> dict:
    done = subprocess.run(
        [NOETIC, *args, "--json"], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def transaction(env: dict[str, str], *store: str) -> str:
    vectors = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))
    boot = noetic("bootstrap", *store, env=env)
    noetic("preflight", "ship it", "--vectors", vectors, *store, env=env)
    noetic("check", "--vectors", vectors, *store, env=env)
    post = noetic("postflight", "--vectors", vectors, *store, env=env)
    assert post["cascade"]["status"] == "completed"
    state = noetic("state", *store, env=env)
    assert state["session"]["id"] == boot["session"]["id"]
    return boot["session"]["id"]


@pytest.mark.parametrize("how", ["--store", "NOETIC_STORE_URL", "config"])
def test_a_transaction_lands_in_postgresql_chosen_any_way(how, postgres_url, tmp_path):
    from noetic.store.postgres import PostgresStore

    home = tmp_path / "home"
    env = {**os.environ, "NOETIC_HOME": str(home), "NOETIC_AI_ID": "pg-agent"}
    store: tuple[str, ...] = ()
    if how == "--store":
        store = ("--store", postgres_url)
    elif how == "NOETIC_STORE_URL":
        env["NOETIC_STORE_URL"] = postgres_url
    else:
        home.mkdir()
        (home / "config.toml").write_text(f'[store]\nurl = "{postgres_url}"\n')
    sid = transaction(env, *store)
    assert not (home / "noetic.db").exists()
    with PostgresStore(postgres_url) as pg:
        assert [s.id for s in pg.list_sessions()] == [sid]
        assert [a.seq for a in pg.assessments(session_id=sid)] == [1, 2, 3]


def test_a_store_url_that_is_not_postgresql_is_refused_by_name(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('[store]\nurl = "mysql://x/y"\n')
    env = {**os.environ, "NOETIC_HOME": str(home)}
    done = subprocess.run([NOETIC, "state", "--json"], capture_output=True, text=True, env=env)
    assert done.returncode == 1
    assert "is not a PostgreSQL URL" in json.loads(done.stdout)["error"]["message"]


def test_every_command_names_the_postgresql_store_it_uses(postgres_url, tmp_path):
    """With $NOETIC_STORE_URL set, bootstrap, where, doctor and serve name the database (its
    password masked), not the local .noetic, and doctor checks that database."""
    from urllib.parse import urlsplit

    from noetic.store.location import safe_url

    parts = urlsplit(postgres_url)
    server = parts.netloc.split("@")[-1]
    secret = f"{parts.scheme}://{parts.username or 'postgres'}:hunter2@{server}{parts.path}"
    home = tmp_path / "home"
    env = {**os.environ, "NOETIC_HOME": str(home), "NOETIC_STORE_URL": postgres_url}
    shown = safe_url(postgres_url)

    def text(*args: str) -> str:
        done = subprocess.run([NOETIC, *args], capture_output=True, text=True, env=env, timeout=120)
        return done.stdout + done.stderr

    doctor = noetic("doctor", env=env)
    [store] = [c for c in doctor["checks"] if c["name"] == "store"]
    assert store["status"] == "warn" and "has no Noetic tables yet" in store["detail"]
    assert f"store {shown} (PostgreSQL)" in text("bootstrap")
    where = text("where")
    assert where.startswith(f"store {shown} (PostgreSQL)\n  because: $NOETIC_STORE_URL")
    assert f"local files (profiles, configuration, current sessions): {home}" in where
    doctor = noetic("doctor", env=env)
    checks = {c["name"]: c for c in doctor["checks"]}
    assert checks["store"]["status"] == "ok" and shown in checks["store"]["detail"]
    assert checks["schema"]["status"] == "ok"
    assert doctor["store"] == shown
    # a password never reaches the screen
    env["NOETIC_STORE_URL"] = secret
    for args in (("where",), ("where", "--json"), ("doctor",)):
        out = text(*args)
        assert "hunter2" not in out and ":***@" in out, out
