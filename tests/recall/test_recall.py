import json
import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from noetic.cli import app
from noetic.embeddings import recall_embedder
from noetic.llm.tokens import count_tokens
from noetic.recall.scoring import NO_CHANGE, RecallConfig, Strategy, need, strategy
from noetic.recall.selection import recall
from noetic.store import Store
from noetic.store.summaries import RecallSummary, save_summary
from noetic.vectors import VECTOR_NAMES, oriented

from ..conftest import uniform

NOW = datetime(2026, 11, 22, tzinfo=UTC)


# The documented formulas (noetic.recall.scoring), one task at a time: what the vectorised
# scoring in noetic.recall.selection must equal.
def state_similarity(a: dict[str, float], b: dict[str, float]) -> float:
    shared = [v for v in VECTOR_NAMES if v in a and v in b]
    if not shared:
        return 0.0
    distance = math.sqrt(sum((a[v] - b[v]) ** 2 for v in shared))
    return max(0.0, 1 - distance / math.sqrt(len(shared)))


def delta_similarity(current: dict[str, float], delta: dict[str, float]) -> float:
    lacks = [1 - oriented(v, current[v]) if v in current else 0.0 for v in VECTOR_NAMES]
    learned = [
        max(0.0, -delta[v] if v in ("density", "uncertainty") else delta[v]) if v in delta else 0.0
        for v in VECTOR_NAMES
    ]
    na = math.sqrt(sum(x * x for x in lacks))
    nb = math.sqrt(sum(x * x for x in learned))
    if na < NO_CHANGE or nb < NO_CHANGE:
        return 0.0
    return max(0.0, sum(x * y for x, y in zip(lacks, learned, strict=True)) / (na * nb))


def summary(task, *, cid=None, calibration="well_calibrated", project="p", days=1,
            pre=0.5, post=0.8, notes=""):  # fmt: skip
    pre_v, post_v = uniform(pre), uniform(post)
    return RecallSummary(
        cascade_id=cid or f"c_{abs(hash((task, days, calibration))) % 10**12}",
        session_id="s_x", ai_id="a", project=project, task=task,
        ended_at=(NOW - timedelta(days=days)).isoformat(), pre=pre_v, post=post_v,
        delta={k: round(post_v[k] - pre_v[k], 6) for k in VECTOR_NAMES},
        learning=abs(post - pre), calibration=calibration, confidence_pre=pre,
        confidence_post=post, notes=notes,
    )  # fmt: skip


@pytest.fixture
def seeded(store):
    store.conn.execute(
        "INSERT INTO sessions (id, ai_id, profile, created_at) VALUES ('s_x', 'a', 'balanced', ?)",
        (NOW.isoformat(),),
    )
    return store


def add(store, *summaries):
    for s in summaries:
        store.conn.execute(
            "INSERT OR IGNORE INTO cascades (id, session_id, task, status, profile, created_at) "
            "VALUES (?, 's_x', ?, 'completed', 'balanced', ?)",
            (s.cascade_id, s.task, s.ended_at),
        )
        save_summary(store, s)


NO_FLOOR = RecallConfig(semantic_floor=0.0, keep_floor=0.0)


def run(store, task, **kw):
    kw.setdefault("project", "p")
    kw.setdefault("explain", True)
    return recall(store, task, recall_embedder(), count_tokens, now=NOW, **kw)


def test_strategy_thresholds_are_the_seeds():
    c = RecallConfig()
    assert strategy(0.71, c) is Strategy.DEEP and strategy(0.7, c) is Strategy.MODERATE
    assert strategy(0.51, c) is Strategy.MODERATE and strategy(0.5, c) is Strategy.LIGHT
    assert strategy(0.31, c) is Strategy.LIGHT and strategy(0.3, c) is Strategy.SUMMARY
    assert strategy(None, c) is Strategy.MODERATE
    assert need(uniform(0.2)) == pytest.approx(0.8) and need(uniform(0.9)) == pytest.approx(0.1)


def test_scoring_parts():
    import numpy as np

    from noetic.recall.selection import _epistemic

    def terms(current, pre, delta):
        rows = [[pre[v] for v in VECTOR_NAMES]], [[delta[v] for v in VECTOR_NAMES]]
        state, dsim = _epistemic(current, *(np.array(r, dtype=np.float32) for r in rows))
        return float(state[0]), float(dsim[0])

    still = {v: 0.0 for v in VECTOR_NAMES}
    assert terms(uniform(0.5), uniform(0.5), still)[0] == pytest.approx(1.0)
    assert terms(uniform(0.0), uniform(1.0), still)[0] == pytest.approx(0.0, abs=1e-6)
    lacking_know = uniform(0.9, know=0.1)
    learned_know = still | {"know": 0.6}
    learned_other = still | {"impact": 0.6}
    assert (
        terms(lacking_know, uniform(0.5), learned_know)[1]
        > terms(lacking_know, uniform(0.5), learned_other)[1]
    )


def test_cold_start_loads_nothing_and_says_so(store):
    result = run(store, "anything")
    assert result.context == "" and result.candidates == [] and result.chosen == []
    assert "cold start" in result.warnings[0]


def test_semantic_match_where_keywords_fail(seeded):
    add(
        seeded,
        summary("resolve login failures for SSO users", days=20),
        summary("bake a sourdough loaf", days=1),
        summary("plan the quarterly marketing budget", days=1),
    )
    result = run(seeded, "fix the authentication bug", current=uniform(0.3), limit=1)
    ranked = [c.task for c in result.candidates]
    assert ranked[0] == "resolve login failures for SSO users"
    assert result.candidates[0].chosen and "chosen" in result.candidates[0].why
    assert result.candidates[0].semantic > 3 * max(c.semantic for c in result.candidates[1:])
    assert "resolve login failures" in result.context
    assert [c.task for c in result.chosen] == ["resolve login failures for SSO users"]
    assert "similarity" in result.chosen[0].why


def verify(store, cascade_id, predicted, outcome):
    """A recorded outcome of ``cascade_id``: ``predicted`` was the confidence before acting."""
    store.conn.execute(
        "INSERT INTO outcomes (at, session_id, cascade_id, ai_id, profile, source, score, "
        "predicted_preflight) VALUES (?, 's_x', ?, 'a', 'balanced', 'test', ?, ?)",
        (NOW.isoformat(), cascade_id, outcome, predicted),
    )


def test_tasks_whose_outcome_contradicted_the_prediction_never_get_through(seeded):
    add(seeded, summary("fix the auth bug", cid="c_over"),
        summary("fix the auth bug again", cid="c_under"))  # fmt: skip
    verify(seeded, "c_over", 0.9, 0.0)  # confident, and it failed
    verify(seeded, "c_under", 0.2, 1.0)  # sure it would fail, and it succeeded
    result = run(seeded, "fix the auth bug", current=uniform(0.2))
    assert not any(c.chosen for c in result.candidates)
    assert {c.verdict for c in result.candidates} == {"overconfident", "underconfident"}
    assert all("outcome contradicted the prediction" in c.why for c in result.candidates)
    assert result.left_out["calibration_filter"] == 2 and result.context == ""
    everything = RecallConfig(allowed_verdicts=("overconfident", "underconfident"))
    loose = run(seeded, "fix the auth bug", current=uniform(0.2), config=everything)
    assert all(c.chosen and c.multiplier == 0.3 for c in loose.candidates)


def test_learning_is_not_miscalibration_outcomes_decide(seeded):
    """POSTFLIGHT calls a task whose confidence rose 'underconfident'; that alone filters
    nothing. Without an outcome it is unverified and kept; an outcome on the side the
    prediction leaned to confirms it."""
    add(seeded, summary("fix the flaky timezone test", cid="c_learned",
                        calibration="underconfident", pre=0.5, post=0.9),
        summary("fix the flaky date test", cid="c_checked", calibration="underconfident",
                pre=0.5, post=0.9))  # fmt: skip
    verify(seeded, "c_checked", 0.67, 1.0)
    result = run(seeded, "fix another flaky timezone test", current=uniform(0.3))
    verdicts = {c.cascade_id: c.verdict for c in result.candidates}
    assert verdicts == {"c_learned": "unverified", "c_checked": "confirmed"}
    assert all(c.chosen and c.multiplier == 1.0 for c in result.candidates)
    assert result.unverified == 1 and result.left_out["calibration_filter"] == 0


def test_the_latest_outcome_counts(seeded):
    add(seeded, summary("ship it", cid="c_1"))
    verify(seeded, "c_1", 0.9, 0.0)
    verify(seeded, "c_1", 0.9, 1.0)  # re-checked: it did work
    (only,) = run(seeded, "ship it", current=uniform(0.3)).candidates
    assert only.verdict == "confirmed" and only.chosen


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(st.tuples(st.text(min_size=1, max_size=60), st.sampled_from(
        ["well_calibrated", "overconfident"]), st.integers(0, 60),
        st.none() | st.tuples(st.floats(0, 1), st.sampled_from([0.0, 1.0]))),
        min_size=1, max_size=12),
    st.integers(min_value=5, max_value=2000),
    st.floats(0, 1),
)  # fmt: skip
@pytest.mark.slow
def test_budgets_are_never_exceeded_and_the_filter_always_holds(
    tmp_path_factory, rows, budget, level
):
    with Store(tmp_path_factory.mktemp("r"), write_files=False) as store:
        store.conn.execute(
            "INSERT INTO sessions (id, ai_id, profile, created_at) VALUES ('s_x','a','b','x')"
        )
        add(store, *(summary(t, cid=f"c_{i}", calibration=c, days=d)
                     for i, (t, c, d, _) in enumerate(rows)))  # fmt: skip
        for i, (*_, checked) in enumerate(rows):
            if checked is not None:
                verify(store, f"c_{i}", *checked)
        result = run(store, "some task", current=uniform(level), budget=budget, config=NO_FLOOR)
        assert count_tokens(result.context) <= budget
        assert result.tokens <= budget
        for i, (*_, checked) in enumerate(rows):
            (c,) = [c for c in result.candidates if c.cascade_id == f"c_{i}"]
            if checked is None:
                assert c.verdict == "unverified"
                continue
            error = checked[0] - checked[1]
            expected = (
                "overconfident"
                if error > 0.5
                else "underconfident"
                if error < -0.5
                else "confirmed"
            )
            assert c.verdict == expected
            assert not (c.chosen and expected != "confirmed")
        # Every task considered is either loaded or counted with the reason it was left out.
        loaded = sum(c.chosen for c in result.candidates)
        assert loaded + sum(result.left_out.values()) == result.considered
        assert result.unverified == sum(checked is None for *_, checked in rows)


def test_detail_level_shrinks_to_fit(seeded):
    add(seeded, *(summary(f"task {i} about parsers", days=i, notes="n" * 200) for i in range(5)))
    roomy = run(seeded, "parsers", current=uniform(0.1))
    tight = run(seeded, "parsers", current=uniform(0.1), budget=120)
    assert roomy.level == "detailed" and roomy.strategy is Strategy.DEEP
    assert tight.level in ("compressed", "ultra_compressed") and tight.tokens <= 120
    assert any("budget" in c.why for c in tight.candidates) or tight.level == "ultra_compressed"


def test_summary_strategy_lists_task_titles_only(seeded):
    add(seeded, summary("write the changelog"), summary("tag the release"))
    result = run(seeded, "release", current=uniform(0.95), config=NO_FLOOR)
    assert result.strategy is Strategy.SUMMARY and result.level == "summary"
    assert "- write the changelog" in result.context and "calibration" not in result.context


def test_coherence_and_drift_warnings(seeded):
    add(seeded, *(summary(f"task {i}", project=f"proj{i}", days=i) for i in range(3)))
    result = run(seeded, "task", current=uniform(0.2), all_projects=True, config=NO_FLOOR)
    assert any("span 3 projects" in w for w in result.warnings)


def test_the_drift_alert_reads_outcomes_not_postflight_self_reports(seeded):
    # POSTFLIGHT calls the recent tasks overconfident, but no outcome says so: no alert.
    old = [summary(f"old {i}", cid=f"c_old{i}", days=30 + i) for i in range(8)]
    new = [summary(f"new {i}", cid=f"c_new{i}", calibration="overconfident", days=0)
           for i in range(5)]  # fmt: skip
    add(seeded, *old, *new)
    quiet = run(seeded, "task", current=uniform(0.2), config=NO_FLOOR)
    assert not any("drift" in w for w in quiet.warnings)
    # Outcomes: the 8 earlier predictions held, the 5 latest failed (0.8 predicted, 0.0 came).
    for s in old:
        verify(seeded, s.cascade_id, 0.8, 1.0)
    for s in new[:4]:
        verify(seeded, s.cascade_id, 0.8, 0.0)
    few = run(seeded, "task", current=uniform(0.2), config=NO_FLOOR)  # 12 with an outcome
    verify(seeded, new[4].cascade_id, 0.8, 0.0)
    drifted = run(seeded, "task", current=uniform(0.2), config=NO_FLOOR)
    assert (
        "calibration drift: the share of tasks whose outcome confirmed the prediction moved by "
        "1.00 (0.00 over the latest 5 with an outcome, 1.00 over the 8 before)"
    ) in drifted.warnings[0]
    assert any("drift" in w for w in few.warnings)  # 4 of the latest 5 failed: 0.80 > 0.15


def test_no_drift_is_said_with_fewer_than_ten_outcomes(seeded):
    tasks = [summary(f"t {i}", cid=f"c_t{i}", days=i) for i in range(12)]
    add(seeded, *tasks)
    for s in tasks[:9]:
        verify(seeded, s.cascade_id, 0.8, 0.0 if s.cascade_id < "c_t5" else 1.0)
    result = run(seeded, "task", current=uniform(0.2), config=NO_FLOOR)
    assert not any("drift" in w for w in result.warnings)


@pytest.mark.subprocess
def test_postflight_writes_the_summary_and_the_cli_recalls_it(tmp_path):
    runner = CliRunner()
    store = ["--store", str(tmp_path / "s")]
    gated = uniform(0.8, engagement=0.9, coherence=0.9)
    runner.invoke(app, ["bootstrap", *store])
    runner.invoke(
        app, ["preflight", "resolve login failures", "--vectors", json.dumps(gated), *store]
    )
    runner.invoke(app, ["postflight", "--vectors", json.dumps(gated), *store])
    result = runner.invoke(app, ["recall", "fix the authentication bug", "--json", *store])
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["candidates"] is None and body["chosen"][0]["task"] == "resolve login failures"
    explained = runner.invoke(app, ["recall", "fix the authentication bug", "--explain",
                                    "--json", *store])  # fmt: skip
    assert json.loads(explained.stdout)["candidates"][0]["task"] == "resolve login failures"
    boot = runner.invoke(app, ["bootstrap", "--recall", "fix the auth bug", "--json", *store])
    recalled = json.loads(boot.stdout)["recall"]
    # the upcoming task's need is neutral without a fresh assessment, not the finished task's
    assert recalled["need"] is None and recalled["strategy"] == "moderate"
    assert recalled["chosen"][0]["task"] == "resolve login failures"
    lacking = json.dumps(uniform(0.1))
    boot = runner.invoke(app, ["bootstrap", "--recall", "fix the auth bug", "--vectors", lacking,
                               "--json", *store])  # fmt: skip
    recalled = json.loads(boot.stdout)["recall"]
    assert recalled["need"] == pytest.approx(0.9) and recalled["strategy"] == "deep"


# Scores to four decimals: the index keeps float32, in which the square of a value below about
# 1e-19 is zero, so a delta made only of such values has no direction there (it does in float64).
_score = st.floats(0, 1).map(lambda x: round(x, 4))
_move = st.floats(-1, 1).map(lambda x: round(x, 4))


@settings(max_examples=50, deadline=None)
@given(
    st.lists(_score, min_size=13, max_size=13),
    st.lists(_score, min_size=13, max_size=13),
    st.lists(_move, min_size=13, max_size=13),
)
# a learning far below float32's range is no learning, in both
@example(now=[0.0] * 13, pre=[0.0] * 13, delta=[0.0] * 11 + [8e-139, 0.0])
def test_the_vectorised_scores_equal_the_documented_formulas(now, pre, delta):
    import numpy as np

    from noetic.recall.selection import _epistemic

    current = dict(zip(VECTOR_NAMES, now, strict=True))
    pre_d = dict(zip(VECTOR_NAMES, pre, strict=True))
    delta_d = dict(zip(VECTOR_NAMES, delta, strict=True))
    state, dsim = _epistemic(
        current, np.array([pre], dtype=np.float32), np.array([delta], dtype=np.float32)
    )
    assert state[0] == pytest.approx(state_similarity(current, pre_d), abs=1e-5)
    assert dsim[0] == pytest.approx(delta_similarity(current, delta_d), abs=1e-5)


def test_qdrant_and_numpy_backends_agree(seeded, tmp_path):
    from noetic.store.qdrant_index import QdrantIndex

    add(seeded, *(summary(t, days=i) for i, t in enumerate([
        "resolve login failures for SSO users", "bake a sourdough loaf",
        "speed up the invoice query", "fix the flaky timezone test", "write the release notes",
    ])))  # fmt: skip
    index = QdrantIndex(str(tmp_path / "qdrant"), recall_embedder().dimension)
    try:
        for task in ("fix the authentication bug", "database performance", "bread"):
            exact = run(seeded, task, current=uniform(0.3), config=NO_FLOOR)
            qdrant = run(seeded, task, current=uniform(0.3), index=index, config=NO_FLOOR)
            assert [c.cascade_id for c in qdrant.candidates] == [
                c.cascade_id for c in exact.candidates
            ]
            for a, b in zip(exact.candidates, qdrant.candidates, strict=True):
                assert a.semantic == pytest.approx(b.semantic, abs=1e-5)
                assert a.score == pytest.approx(b.score, abs=1e-5)
            assert qdrant.context == exact.context
        assert index.sync(["x"], recall_embedder().embed(["x"])) == 1
    finally:
        index.close()


@pytest.mark.subprocess
def test_the_cli_uses_qdrant_when_asked(tmp_path):
    runner = CliRunner()
    store = ["--store", str(tmp_path / "s")]
    gated = json.dumps(uniform(0.8, engagement=0.9, coherence=0.9))
    runner.invoke(app, ["bootstrap", *store])
    runner.invoke(app, ["preflight", "resolve login failures", "--vectors", gated, *store])
    runner.invoke(app, ["postflight", "--vectors", gated, *store])
    args = ["recall", "fix the auth bug", "--qdrant", str(tmp_path / "q"), "--json", *store]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["chosen"][0]["task"] == "resolve login failures"
    assert (tmp_path / "q").is_dir()


@given(st.floats(min_value=-1.0, max_value=1.0, allow_nan=False))
@example(0.125)  # a half-way value: rounds to 0.12, exactly 0.005 away (plus float error)
@example(-0.001)
def test_a_similarity_is_never_printed_as_negative_zero(value):
    from noetic.recall.selection import two

    text = two(value)
    assert text != "-0.00" and len(text.split(".")[1]) == 2
    # Two decimals are at most half a hundredth off; the 1e-9 is the binary float's own error.
    assert abs(float(text) - value) <= 0.005 + 1e-9


def test_a_task_where_nothing_changed_says_so_instead_of_listing_zeros():
    from noetic.recall.selection import render

    still = summary("read the docs", pre=0.7, post=0.7)
    for level in ("detailed", "compressed"):
        assert "biggest changes: no vector changed" in render(still, level)
    assert render(still, "ultra_compressed").endswith("no vector changed")
    tiny = still.model_copy(update={"delta": {**still.delta, "know": 0.004, "do": -0.2}})
    assert "biggest changes: do -0.20\n" in render(tiny, "compressed") + "\n"


def test_recall_with_nothing_loaded_does_not_print_level_none():
    assert CliRunner().invoke(app, ["bootstrap"]).exit_code == 0
    result = CliRunner().invoke(app, ["recall", "fix the parser"])
    assert result.exit_code == 0, result.output
    assert "level None" not in result.stdout and "nothing loaded" in result.stdout


def test_a_query_over_the_text_limit_is_refused_and_one_at_it_is_not(tmp_path):
    runner = CliRunner()
    store = ["--store", str(tmp_path / "s")]
    runner.invoke(app, ["bootstrap", *store])
    refused = runner.invoke(app, ["recall", "q" * 120_000, "--json", *store])
    assert refused.exit_code == 1
    message = json.loads(refused.stdout)["error"]["message"]
    assert message == (
        "the recall query is 120,000 characters, over the text_chars limit of 65,536 characters"
    )
    boot = runner.invoke(app, ["bootstrap", "--recall", "q" * 65_537, "--json", *store])
    assert boot.exit_code == 1 and "text_chars" in boot.stdout
    at_limit = runner.invoke(app, ["recall", "q" * 65_536, "--json", *store])
    assert at_limit.exit_code == 0, at_limit.output
