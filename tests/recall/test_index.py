import json
import logging
import subprocess
import sys
import threading

import numpy as np
import pytest
from typer.testing import CliRunner

from noetic.cli import app
from noetic.embeddings import llama_tokenizer, load_embedder, recall_embedder
from noetic.recall.index import RecallIndex, embed_pending, index_for, pending_count
from noetic.recall.scoring import RecallConfig
from noetic.store import Store
from noetic.store.summaries import save_summary
from noetic.vectors import VECTOR_NAMES

from ..conftest import uniform
from .test_recall import add, run, summary

WORK = [
    ("p", "resolve login failures for SSO users"),
    ("p", "speed up the slow invoice listing endpoint"),
    ("p", "the end-to-end tests fail randomly on CI"),
    ("q", "users signing in through Okta get bounced back to the sign-in page"),
    ("q", "write the release notes for version 2.0"),
]


@pytest.fixture
def work(seeded):
    add(seeded, *(summary(t, cid=f"c_{i}", project=p, days=i) for i, (p, t) in enumerate(WORK)))
    return seeded


@pytest.fixture
def seeded(store):
    store.conn.execute(
        "INSERT INTO sessions (id, ai_id, profile, created_at) VALUES ('s_x', 'a', 'b', 'x')"
    )
    return store


def test_an_unrelated_task_loads_nothing_and_says_so(work):
    result = run(work, "renew the office lease", all_projects=True)
    assert result.chosen == [] and result.context == "" and result.level is None
    assert any("nothing relevant" in w and "under the floor" in w for w in result.warnings)
    assert all("floor" in c.why for c in result.candidates)


def test_recall_is_scoped_to_the_project_unless_widened(work):
    scoped = run(work, "single sign-on users cannot log in", project="p")
    assert scoped.scope == "project p, every agent's tasks" and scoped.considered == 3
    assert [c.task for c in scoped.chosen][:1] == ["resolve login failures for SSO users"]
    assert {c.project for c in scoped.candidates} == {"p"}
    wide = run(work, "single sign-on users cannot log in", all_projects=True)
    assert wide.considered == 5
    assert {c.task for c in wide.chosen[:2]} == {WORK[0][1], WORK[3][1]}
    other = run(work, "single sign-on users cannot log in", project="elsewhere")
    assert other.chosen == [] and "--all-projects" in other.warnings[0]


@pytest.mark.subprocess
def test_the_cli_scopes_to_the_current_sessions_project(tmp_path):
    runner = CliRunner()
    store = ["--store", str(tmp_path / "s")]
    gated = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))
    for project, task in (("web", "resolve login failures"), ("ops", "fix SSO sign-in errors")):
        runner.invoke(app, ["bootstrap", "--project", project, *store])
        runner.invoke(app, ["preflight", task, "--vectors", gated, *store])
        runner.invoke(app, ["postflight", "--vectors", gated, *store])
    body = json.loads(
        runner.invoke(app, ["recall", "users cannot log in", "--json", *store]).stdout
    )
    assert body["scope"] == "project ops, every agent's tasks"
    assert [c["task"] for c in body["chosen"]] == ["fix SSO sign-in errors"]
    wide = runner.invoke(app, ["recall", "users cannot log in", "--all-projects", "--json", *store])
    assert len(json.loads(wide.stdout)["chosen"]) == 2


def test_a_long_lived_index_picks_up_new_tasks_and_other_processes_see_them(work):
    embedder = recall_embedder()
    first = run(work, "the checkout page is slow", project="p")
    index = index_for(work, embedder)
    assert index.rows == 5 and not index.in_memory
    add(work, summary("make the receipts page load faster", cid="c_new", project="p"))
    second = run(work, "receipts take ages to load", project="p")
    assert second.considered == first.considered + 1
    assert second.chosen[0].task == "make the receipts page load faster"
    assert index_for(work, embedder) is index and index.rows == 6
    other = RecallIndex(Store(work.home), embedder.name, embedder.dimension)
    other.refresh()
    assert other.rows == 6 and other.seq == index.seq
    assert np.array_equal(other.vectors, index.vectors)
    assert np.array_equal(other.meta, index.meta)


def test_a_rewritten_summary_is_embedded_again_and_the_index_rebuilt(work):
    run(work, "anything", project="p")
    generation = index_for(work, recall_embedder()).generation
    renamed = summary("bake a sourdough loaf", cid="c_0", project="p")
    work.conn.execute("UPDATE cascades SET task = ? WHERE id = 'c_0'", (renamed.task,))
    save_summary(work, renamed)
    result = run(work, "make bread with a starter", project="p")
    index = index_for(work, recall_embedder())
    assert index.generation != generation and index.rows == 5
    assert result.chosen[0].task == "bake a sourdough loaf"
    assert "SSO" not in result.context


@pytest.mark.parametrize("damage", ["state", "short", "missing"])
def test_damaged_index_files_are_rebuilt_from_sqlite(work, damage):
    embedder = recall_embedder()
    before = run(work, "flaky tests in the pipeline", project="p")
    folder = index_for(work, embedder).folder
    vectors = next(folder.glob("vectors.*.f32"))
    if damage == "state":
        (folder / "state.json").write_bytes(b"\xff{not json")
    elif damage == "short":
        vectors.write_bytes(vectors.read_bytes()[:100])
    else:
        vectors.unlink()
    fresh = RecallIndex(Store(work.home), embedder.name, embedder.dimension)
    fresh.refresh()
    assert fresh.rows == 5
    again = RecallIndex(Store(work.home), embedder.name, embedder.dimension)
    again.refresh()
    assert np.array_equal(again.vectors, fresh.vectors)
    assert before.chosen[0].task == "the end-to-end tests fail randomly on CI"


def test_an_unwritable_index_folder_keeps_the_index_in_memory(work):
    (work.home / "recall").write_text("not a folder")
    result = run(work, "flaky tests in the pipeline", project="p")
    index = index_for(work, recall_embedder())
    assert index.in_memory and index.rows == 5
    assert result.chosen[0].task == "the end-to-end tests fail randomly on CI"


@pytest.mark.slow
def test_concurrent_writers_leave_one_consistent_index(work):
    embedder = recall_embedder()
    add(work, *(summary(f"task number {i}", cid=f"c_t{i}", project="p") for i in range(40)))
    embed_pending(work, embedder)
    errors = []

    def catch_up():
        try:
            with Store(work.home) as mine:
                RecallIndex(mine, embedder.name, embedder.dimension).refresh()
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=catch_up) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    final = RecallIndex(Store(work.home), embedder.name, embedder.dimension)
    final.refresh()
    assert final.rows == 45 and len(set(final.meta["seq"].tolist())) == 45


def test_a_first_recall_never_embeds_everything_and_reindex_does_the_rest(seeded, tmp_path):
    add(seeded, *(summary(f"migrate service {i} to the new cluster", cid=f"c_{i}", project="p")
                  for i in range(20)))  # fmt: skip
    embedder = recall_embedder()
    assert pending_count(seeded, embedder.name) == 20
    result = run(seeded, "move a service to the cluster", config=RecallConfig(catch_up=5))
    assert result.considered == 5 and pending_count(seeded, embedder.name) == 15
    assert any("15 finished tasks are not embedded" in w for w in result.warnings)
    out = CliRunner().invoke(app, ["reindex", "--json", "--store", str(seeded.home)])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == {"embedder": embedder.name, "embedded": 15, "indexed": 20}
    assert pending_count(seeded, embedder.name) == 0


def test_the_reindex_command_shows_progress(seeded):
    add(seeded, *(summary(f"task {i}", cid=f"c_{i}", project="p") for i in range(3)))
    out = CliRunner().invoke(app, ["reindex", "--store", str(seeded.home)])
    assert out.exit_code == 0, out.output
    assert "embedding with" in out.output and "embedded 3; 3 tasks indexed" in out.output


@pytest.mark.slow
def test_minilm_embeddings_are_normalised_batch_independent_and_truncate_long_text():
    e = load_embedder("minilm")
    texts = ["fix the authentication bug", "", "ünïcödé \x00 ☃", "word " * 2000, "a"]
    batch = e.embed(texts)
    assert batch.shape == (5, 384) and batch.dtype == np.float32
    assert np.allclose(np.linalg.norm(batch, axis=1), 1, atol=1e-5)
    for i, t in enumerate(texts):
        assert np.allclose(e.embed([t])[0], batch[i], atol=1e-5)
    assert e.embed([]).shape == (0, 384)
    paraphrase, unrelated = e.embed(["resolve login failures for SSO users", "bake bread"])
    assert batch[0] @ paraphrase > 0.4 > batch[0] @ unrelated


def test_the_wordllama_embedder_matches_wordllamas_own_inference():
    from safetensors import safe_open
    from tokenizers import Tokenizer
    from wordllama.inference import WordLlamaInference

    from noetic.embeddings import tokenizer_file, wordllama_dir

    weights = wordllama_dir() / "weights" / "l2_supercat_256.safetensors"
    with safe_open(str(weights), framework="np") as fh:
        reference = WordLlamaInference(
            fh.get_tensor("embedding.weight"), Tokenizer.from_file(str(tokenizer_file()))
        )
    texts = ["fix the authentication bug", "résumé ☃ text", "x " * 500, "ok"]
    ours = load_embedder("wordllama").embed(texts)
    assert np.allclose(ours, reference.embed(texts, norm=True), atol=1e-6)
    assert np.allclose(load_embedder("wordllama").embed([""]), 0)


def test_one_tokenizer_per_process_shared_by_counting_and_embedding():
    from noetic.embeddings import tokenizer

    assert tokenizer.count_tokens("one tokenizer") == len(
        llama_tokenizer().encode("one tokenizer", add_special_tokens=False).ids
    )
    assert llama_tokenizer() is load_embedder("wordllama")._tokenizer  # type: ignore[attr-defined]


@pytest.mark.subprocess
def test_loading_the_embedders_imports_no_network_library_and_leaves_logging_alone():
    code = (
        "import logging, sys\n"
        "from noetic.embeddings import load_embedder\n"
        "for name in ('minilm', 'wordllama'):\n"
        "    load_embedder(name).embed(['x'])\n"
        "print(sorted(m for m in ('requests', 'urllib3', 'httpx', 'wordllama') "
        "if m in sys.modules), logging.getLogger().level, logging.getLogger().handlers)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == f"[] {logging.WARNING} []"


def test_an_unknown_embedder_is_a_usage_error(monkeypatch):
    from noetic.embeddings import embedder_name
    from noetic.errors import UsageError

    monkeypatch.setenv("NOETIC_RECALL_EMBEDDER", "bert-huge")
    with pytest.raises(UsageError, match="unknown embedder 'bert-huge'"):
        embedder_name()


def _finish(n, task):
    import asyncio

    from noetic.mcp import tools

    async def flow():
        await tools.submit_preflight_assessment(n, uniform(0.5), task=task)
        return await tools.submit_postflight_assessment(n, uniform(0.8))

    return asyncio.run(flow())


def _serving(tmp_path):
    """A server on a new store, its embedding thread through its first round; the embedder."""
    import asyncio

    from noetic.mcp import tools
    from noetic.mcp.state import ServerState

    n = ServerState(tmp_path / "store", workspace=tmp_path)
    asyncio.run(tools.bootstrap_session(n, ai_id="bg"))
    assert n.embedding.wait(60) and n.embedding.error is None
    return n, recall_embedder()


@pytest.mark.subprocess
def test_the_server_embeds_finished_tasks_on_a_thread_of_its_own(tmp_path):
    import asyncio

    from noetic.mcp import tools
    from noetic.recall.index import _INDEXES

    n, embedder = _serving(tmp_path)
    n.embedding.stop()  # with the thread stopped, a POSTFLIGHT leaves its task pending
    _finish(n, "resolve login failures for SSO users")
    assert pending_count(n.store, embedder.name) == 1
    n.embedding.wake()
    _finish(n, "speed up the slow invoice listing endpoint")
    assert n.embedding.wait(60) and n.embedding.error is None
    assert pending_count(n.store, embedder.name) == 0 and n.embedding.embedded == 2
    # the server's own index is already current: a recall pays for no new rows
    assert _INDEXES[n.store][embedder.name].rows == 2
    result = asyncio.run(tools.resume_previous_session(n, task="users cannot sign in via SSO"))
    assert [c.task for c in result.recall.chosen][:1] == ["resolve login failures for SSO users"]
    n.embedding.stop()


@pytest.mark.subprocess
def test_a_task_finished_inside_a_longer_write_is_embedded_once_that_write_commits(tmp_path):
    import time

    from noetic.assessment import Assessment

    n, embedder = _serving(tmp_path)
    tracker = n.tracker
    session, _ = tracker.bootstrap(ai_id="bg")
    with n.store.unit():  # the POSTFLIGHT's event wakes the thread before this write commits
        tracker.preflight(session.id, "rotate the signing keys", Assessment.from_input(
            "preflight", {v: 0.5 for v in VECTOR_NAMES}))  # fmt: skip
        tracker.postflight(session.id, Assessment.from_input(
            "postflight", {v: 0.8 for v in VECTOR_NAMES}))  # fmt: skip
        time.sleep(0.5)  # the round it asked for has every chance to run meanwhile
    assert n.embedding.wait(60) and n.embedding.error is None
    # the round read the tasks once the write was in: none is left for a later one
    assert pending_count(n.store, embedder.name) == 0
    n.embedding.stop()


def test_at_start_the_server_embeds_what_is_pending_and_shows_progress(seeded, capsys, monkeypatch):
    from noetic.mcp.state import ServerState

    add(seeded, *(summary(f"migrate service {i} to the new cluster", cid=f"c_{i}", project="p")
                  for i in range(150)))  # fmt: skip
    monkeypatch.setenv("NOETIC_RECALL_EMBEDDER", "wordllama")  # a changed embedder: all pending
    n = ServerState(seeded.home, workspace=seeded.home)
    assert n.embedding.wait(60) and n.embedding.error is None
    n.embedding.stop()
    assert pending_count(seeded, load_embedder("wordllama").name) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "embedding finished" in x]
    assert lines[-1].endswith("150/150") and len(lines) == 3, lines


@pytest.mark.subprocess
def test_without_an_embedder_the_server_works_and_the_tasks_stay_pending(tmp_path, monkeypatch):
    import asyncio

    from noetic.mcp import tools
    from noetic.mcp.state import ServerState

    monkeypatch.setenv("NOETIC_RECALL_EMBEDDER", "no-such-model")
    n = ServerState(tmp_path / "store", workspace=tmp_path)
    asyncio.run(tools.bootstrap_session(n, ai_id="bg"))
    done = _finish(n, "fix the parser")
    assert n.embedding.wait(60) and "unknown embedder 'no-such-model'" in n.embedding.error
    assert n.store.get_cascade(done.cascade_id).status == "completed"
    monkeypatch.delenv("NOETIC_RECALL_EMBEDDER")
    assert pending_count(n.store, recall_embedder().name) == 1
    n.embedding.stop()


def test_a_long_lived_index_keeps_a_bounded_number_of_scopes_each_current(work):
    from noetic.recall.index import SCOPES

    embed_pending(work, recall_embedder())
    idx = index_for(work, recall_embedder())
    for i in range(SCOPES + 4):
        scope = idx.scope(ai_id=None, project=f"x{i}", all_projects=False)
        assert scope.rows == 0 and len(scope.vectors) == 0
    assert len(idx._scopes) == SCOPES
    p = idx.scope(ai_id=None, project="p", all_projects=False)
    assert np.array_equal(p.vectors, idx.vectors[p.positions]) and p.rows == 3
    add(work, summary("rotate the signing keys", cid="c_new", project="p"))
    embed_pending(work, recall_embedder())
    idx.refresh()
    again = idx.scope(ai_id=None, project="p", all_projects=False)
    assert again.rows == 4 and np.array_equal(again.vectors, idx.vectors[again.positions])
    assert run(work, "rotate the keys used for signing").chosen[0].task == "rotate the signing keys"
