"""Recall's quality on the relevance set (:mod:`.relevance`): held-out paraphrases are found,
off-topic queries load nothing. ``bench/recall_quality.py`` prints the figures.

The floors are the issue's targets (P@3 ≥ 0.70, R@5 ≥ 0.85, MRR ≥ 0.85 within the query's
project, recall's default scope). The default configuration measured 0.83, 0.91 and 0.96 on this
set, so a change that costs a few queries' worth of ranking fails here. Across all projects (six
times the distractors in reach) it measured 0.80, 0.85 and 0.94; the floors there are 0.70,
0.80 and 0.85.
"""

import pytest

from noetic.embeddings import count_tokens, load_embedder
from noetic.recall.scoring import RecallConfig
from noetic.recall.selection import recall
from noetic.store import Store

from . import relevance


@pytest.fixture(scope="module")
def rel(tmp_path_factory):
    with Store(tmp_path_factory.mktemp("relevance"), write_files=False) as store:
        built = relevance.build(store)
        relevance.embed_all(store, load_embedder("minilm"))
        yield built


@pytest.fixture(scope="module")
def minilm():
    return relevance.Cached(load_embedder("minilm"))


@pytest.mark.slow
def test_the_set_is_what_it_claims(rel):
    assert len(relevance.GROUPS) >= 15 and len(relevance.PROJECTS) >= 5
    assert sum(len(d) for d in relevance.DISTRACTORS.values()) >= 200
    texts = [t for _, past, queries in relevance.GROUPS for t in (*past, *queries)]
    texts += [t for d in relevance.DISTRACTORS.values() for t in d] + relevance.OFF_TOPIC
    assert len(texts) == len(set(texts))  # no query is one of the stored tasks
    assert {q.project for q in rel.queries} == set(relevance.PROJECTS)
    assert all(len(q.relevant) == 3 for q in rel.queries)


@pytest.mark.slow
def test_held_out_paraphrases_are_found_within_the_project(rel, minilm):
    q = relevance.evaluate(rel, minilm, count_tokens)
    assert q.queries == 36
    assert q.p_at_3 >= 0.70 and q.r_at_5 >= 0.85 and q.mrr >= 0.85, q


def test_held_out_paraphrases_are_found_across_projects(rel, minilm):
    q = relevance.evaluate(rel, minilm, count_tokens, all_projects=True)
    assert q.p_at_3 >= 0.70 and q.r_at_5 >= 0.80 and q.mrr >= 0.85, q


def test_off_topic_queries_load_nothing_in_any_scope_and_say_so(rel, minilm):
    for text in relevance.OFF_TOPIC:
        for project in [*relevance.PROJECTS, None]:
            result = recall(rel.store, text, minilm, count_tokens, project=project,
                            all_projects=project is None, limit=5, now=relevance.NOW)  # fmt: skip
            assert result.chosen == [] and result.context == "", (text, project)
            assert result.left_out["below_similarity"] == result.considered
            assert any("nothing relevant" in w for w in result.warnings)


def test_the_harness_scores_a_perfect_and_a_useless_ranking(rel, minilm):
    perfect = relevance.evaluate(rel, minilm, count_tokens, ranker=lambda q: sorted(q.relevant))
    assert (perfect.p_at_3, perfect.r_at_5, perfect.mrr) == (1.0, 1.0, 1.0)
    useless = relevance.evaluate(rel, minilm, count_tokens, ranker=lambda q: ["d_shop_00"])
    assert (useless.p_at_3, useless.r_at_5, useless.mrr) == (0.0, 0.0, 0.0)
    assert len(useless.misses) == useless.queries


@pytest.mark.slow
def test_the_state_term_is_kept_because_it_helps_only_where_states_say_something(
    rel, minilm, tmp_path_factory
):
    alone = RecallConfig(w_state=0, w_delta=0, w_learning=0, w_recency=0)
    random_states = [relevance.evaluate(rel, minilm, count_tokens, config=c, off_topic=False)
                     for c in (alone, None)]  # fmt: skip
    with Store(tmp_path_factory.mktemp("correlated"), write_files=False) as store:
        correlated = relevance.build(store, correlated=True)
        relevance.embed_all(store, minilm.inner)
        shared_states = [relevance.evaluate(correlated, minilm, count_tokens, config=c,
                                            off_topic=False) for c in (alone, None)]  # fmt: skip
    (a, d), (sa, sd) = random_states, shared_states
    assert abs(d.p_at_3 - a.p_at_3) <= 0.03 and abs(d.r_at_5 - a.r_at_5) <= 0.03, (a, d)
    assert d.mrr >= a.mrr - 0.03
    assert sd.p_at_3 > sa.p_at_3 and sd.r_at_5 >= sa.r_at_5 and sd.mrr >= sa.mrr, (sa, sd)
