"""The optimised MiniLM forward pass against the reference implementation
(:mod:`.minilm_reference`), and the per-process cache of query vectors (:func:`embed_query`).
"""

import threading
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.embeddings import (
    QUERY_CACHE_SIZE,
    _QueryCache,
    clear_query_cache,
    count_tokens,
    embed_query,
    load_embedder,
    query_cache_info,
)
from noetic.store import Store

from . import relevance
from .minilm_reference import ReferenceMiniLM
from .test_recall import NOW

TOLERANCE = 1e-5  # float32 round-off over six layers; the two agree to ~2e-7 in practice
# fmt: off
WORDS = ["fix", "the", "flaky", "login", "test", "on", "CI", "résumé", "☃", "invoice", "2.0",
         "user's", "end-to-end", "API", "timezone", "a", "deploy", "rollback", "for", "SSO"]
# fmt: on


@pytest.fixture(scope="module")
def reference():
    return ReferenceMiniLM()


@pytest.fixture(scope="module")
def minilm():
    return load_embedder("minilm")


def assert_same(ours, theirs):
    assert ours.shape == theirs.shape and ours.dtype == np.float32
    assert float(np.abs(ours - theirs).max(initial=0.0)) <= TOLERANCE


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    text=st.one_of(
        st.text(max_size=200),
        st.lists(st.sampled_from(WORDS), max_size=60).map(" ".join),
    )
)
@pytest.mark.slow
def test_one_text_equals_the_reference(reference, minilm, text):
    assert_same(minilm.embed([text]), reference.embed([text]))


@pytest.mark.slow
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=st.lists(st.lists(st.sampled_from(WORDS), max_size=30).map(" ".join), max_size=40))
def test_a_batch_equals_the_reference_in_the_callers_order(reference, minilm, texts):
    # more than 32 texts span two of the embedder's batches; sorted by length inside
    assert_same(minilm.embed(texts), reference.embed(texts))


@pytest.mark.slow
def test_short_and_long_texts_alone_and_in_one_batch(reference, minilm):
    # 0 to 12 words, 21, 30 and 140 (over 128 rows: the weights multiplied whole, not by
    # blocks) and a text truncated at 256 tokens, alone and in one batch
    texts = [" ".join(WORDS[:n] + ["x"] * (n - len(WORDS))) for n in [*range(13), 21, 30, 140]]
    texts += ["word " * 2000, "", "\x00\n\t"]
    assert_same(minilm.embed(texts), reference.embed(texts))
    for text in texts:
        assert_same(minilm.embed([text]), reference.embed([text]))


@pytest.mark.slow
def test_the_relevance_figures_are_the_references(minilm, reference, tmp_path):
    """Recall on the relevance set (``bench/recall_quality.py``) ranks the same with the
    optimised embedder as with the reference: the same P@3, R@5, MRR, misses and off-topic
    loads, within a project and across all."""
    figures = []
    for n, embedder in enumerate((minilm, reference)):
        with Store(tmp_path / str(n), write_files=False) as store:
            rel = relevance.build(store)
            relevance.embed_all(store, embedder)
            cached = relevance.Cached(embedder)
            figures.append([relevance.evaluate(rel, cached, count_tokens, all_projects=scope)
                            for scope in (False, True)])  # fmt: skip
    assert figures[0] == figures[1]
    assert figures[0][0].p_at_3 >= 0.7 and figures[0][0].off_topic_loaded == 0


class Counting:
    """An embedder that counts the texts it embeds: a hash of the text as its vector."""

    def __init__(self, name="counting"):
        self.name = name
        self.dimension = 4
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts.extend(texts)
        return np.array([[len(t), hash(t) % 97, 1.0, 0.5] for t in texts], dtype=np.float32)


def test_a_repeated_query_is_embedded_once_and_its_vector_cannot_be_changed():
    clear_query_cache()
    e = Counting()
    first = embed_query(e, "fix the login bug")
    again = embed_query(e, "fix the login bug")
    assert e.texts == ["fix the login bug"] and again is first
    assert np.array_equal(first, e.embed(["fix the login bug"])[0])
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 0
    embed_query(e, "fix the login bug ")  # the exact text: a trailing space is another query
    assert query_cache_info()[:3] == (1, 2, 2) and query_cache_info().maxsize == QUERY_CACHE_SIZE
    clear_query_cache()
    assert query_cache_info()[:3] == (0, 0, 0)


def test_embedders_never_share_vectors_even_under_the_same_name():
    a, b = Counting("same"), Counting("same")
    va, vb = embed_query(a, "task"), embed_query(b, "task")
    assert a.texts == ["task"] and b.texts == ["task"] and va is not vb


def test_an_embedder_that_cannot_be_weakly_referenced_is_simply_not_cached():
    class Slotted:
        __slots__ = ("dimension", "name", "texts")

        def __init__(self):
            self.name, self.dimension, self.texts = "slotted", 4, []

        def embed(self, texts):
            self.texts.extend(texts)
            return np.ones((len(texts), 4), dtype=np.float32)

    e = Slotted()
    assert np.array_equal(embed_query(e, "x"), embed_query(e, "x"))
    assert e.texts == ["x", "x"]


@settings(max_examples=200, deadline=None)
@given(
    size=st.integers(0, 5),
    texts=st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g"]), max_size=40),
)
def test_the_cache_is_a_least_recently_used_cache_of_its_size(size, texts):
    cache, e = _QueryCache(size), Counting()
    model: OrderedDict[str, None] = OrderedDict()
    expected_misses = []
    for text in texts:
        vector = cache.embed(e, text)
        assert vector[0] == len(text) and vector[1] == hash(text) % 97
        if text in model:
            model.move_to_end(text)
        else:
            expected_misses.append(text)
            model[text] = None
            while len(model) > size:
                model.popitem(last=False)
    assert e.texts == expected_misses
    info = cache.info()
    assert (info.hits, info.misses, info.size) == (
        len(texts) - len(expected_misses), len(expected_misses), len(model))  # fmt: skip


def test_threads_asking_at_once_each_get_their_texts_vector():
    cache, e = _QueryCache(8), Counting()
    texts = [f"task {i % 12}" for i in range(600)]
    got: dict[int, np.ndarray] = {}

    def work(start):
        for i in range(start, len(texts), 4):
            got[i] = cache.embed(e, texts[i])

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(got[i][0] == len(texts[i]) and got[i][1] == hash(texts[i]) % 97 for i in got)
    assert len(got) == len(texts) and cache.info().size == 8


def test_recall_embeds_a_task_text_it_has_seen_once(store):
    from .test_recall import add, summary

    store.conn.execute(
        "INSERT INTO sessions (id, ai_id, profile, created_at) VALUES ('s_x', 'a', 'b', 'x')"
    )
    add(store, summary("resolve login failures for SSO users", cid="c_1"))

    class Spy:
        def __init__(self, inner):
            self.inner, self.name, self.dimension = inner, inner.name, inner.dimension
            self.texts = []

        def embed(self, texts):
            self.texts.extend(texts)
            return self.inner.embed(texts)

    from noetic.recall.selection import recall

    spy = Spy(load_embedder("minilm"))
    results = [recall(store, "users cannot sign in with SSO", spy, count_tokens, project="p",
                      now=NOW) for _ in range(3)]  # fmt: skip
    # the stored task is embedded once when the index catches up; the query once for 3 recalls
    assert spy.texts.count("users cannot sign in with SSO") == 1
    assert [c.cascade_id for r in results for c in r.chosen] == ["c_1"] * 3
