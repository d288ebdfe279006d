"""Where a recall query's embedding spends its time: all-MiniLM-L6-v2 in numpy
(``noetic.embeddings.minilm``), beside the previous implementation
(``tests/recall/minilm_reference.py``) in the same run.

* the steps of one short query (11 tokens, one BLAS thread as recall runs it), each timed in a
  copy of the forward pass that the bench checks against the embedder's own output; with each
  step's arithmetic and the bytes of weights it reads;
* the floor of this design: the 36 matrix products alone on the same rows, and the time to
  read the 42 MB of dense weights once (memory bandwidth);
* by text length (tokens), ours against the previous implementation;
* one BLAS thread against all the cores' threads.

    python bench/query_embedding.py
"""

import collections
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.recall.minilm_reference import ReferenceMiniLM

from noetic.embeddings import load_embedder, one_blas_thread
from noetic.embeddings import minilm as M

TEXT = "fix the auth bug in the api code"  # 11 tokens with [CLS] and [SEP]


def p50(f, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def timed_forward(e: M.MiniLMEmbedder, ids: list[int], clock: dict[str, float]) -> np.ndarray:
    """``e._forward([ids])`` step by step, adding each step's seconds to ``clock``."""
    tic = time.perf_counter
    t = tic()
    length = len(ids)
    x = e._tokens[np.array(ids)] + e._positions[:length]
    x = M._layer_norm(x, *e._norm)
    scale = np.float32(1 / math.sqrt(32))
    clock["token and position embeddings, LayerNorm"] += tic() - t
    for layer in e._layers:
        t = tic()
        qkv = M._dense(x, layer.qkv, layer.qkv_bias)
        clock["query, key, value: rows @ (384x1152)"] += tic() - t
        t = tic()
        qkv = qkv.reshape(1, length, 3, 12, 32)
        q = qkv[:, :, 0].transpose(0, 2, 1, 3)
        k = qkv[:, :, 1].transpose(0, 2, 3, 1)
        v = qkv[:, :, 2].transpose(0, 2, 1, 3)
        scores = q @ k
        scores *= scale
        scores -= scores.max(-1, keepdims=True)
        np.exp(scores, out=scores)
        scores /= scores.sum(-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(length, -1)
        clock["attention, 12 heads (softmax)"] += tic() - t
        t = tic()
        h = M._dense(context, layer.out, layer.out_bias)
        h += x
        clock["attention output: rows @ (384x384)"] += tic() - t
        t = tic()
        x = M._layer_norm(h, *layer.norm1)
        clock["LayerNorm (2 per layer)"] += tic() - t
        t = tic()
        h = M._dense(x, layer.up, layer.up_bias)
        clock["intermediate: rows @ (384x1536)"] += tic() - t
        t = tic()
        h = M._gelu(h)
        clock["GELU (erf)"] += tic() - t
        t = tic()
        h = M._dense(h, layer.down, layer.down_bias)
        h += x
        clock["output: rows @ (1536x384)"] += tic() - t
        t = tic()
        x = M._layer_norm(h, *layer.norm2)
        clock["LayerNorm (2 per layer)"] += tic() - t
    t = tic()
    pooled = x.mean(0, keepdims=True)
    pooled /= np.linalg.norm(pooled, axis=1, keepdims=True)
    clock["mean pooling, L2 norm"] += tic() - t
    return pooled


def profile(e: M.MiniLMEmbedder, reference: ReferenceMiniLM, runs: int = 200) -> None:
    ids = e._tokenizer.encode(TEXT).ids
    rows = len(ids)
    with one_blas_thread():
        if not np.allclose(timed_forward(e, ids, collections.defaultdict(float)),
                           e._forward([ids]), atol=1e-6):  # fmt: skip
            raise SystemExit("the bench's timed copy of the forward pass no longer matches")
        steps: dict[str, list[float]] = collections.defaultdict(list)
        whole, before = [], []
        for _ in range(runs):
            clock: dict[str, float] = collections.defaultdict(float)
            timed_forward(e, ids, clock)
            for k, v in clock.items():
                steps[k].append(v * 1000)
            whole.append(p50(lambda: e.embed([TEXT]), 1))
            before.append(p50(lambda: reference.embed([TEXT]), 1))
        tokenizer = p50(lambda: e._tokenizer.encode_batch([TEXT]), runs)
    flops = {
        "query, key, value: rows @ (384x1152)": (384 * 1152, 1152),
        "attention output: rows @ (384x384)": (384 * 384, 384),
        "intermediate: rows @ (384x1536)": (384 * 1536, 1536),
        "output: rows @ (1536x384)": (1536 * 384, 384),
    }
    print(f"one query, {rows} tokens, one BLAS thread; p50 of {runs}, ms:")
    print(f"  {'tokenizer':<44} {tokenizer:6.3f}")
    total = products = 0.0
    for k, v in steps.items():
        m = statistics.median(v)
        total += m
        extra = ""
        if k in flops:
            products += m
            weights, _ = flops[k]
            gflop = 2 * rows * weights * e.layers / 1e9
            extra = (f"  {gflop * 1000:5.0f} MFLOP, {weights * 4 * e.layers / 1e6:4.1f} MB of "
                     f"weights: {gflop / m * 1000:4.0f} GFLOP/s")  # fmt: skip
        print(f"  {k:<44} {m:6.3f}{extra}")
    print(f"  {'sum of the steps':<44} {total:6.3f} (matrix products {products:.3f}, "
          f"{100 * products / total:.0f}%)")  # fmt: skip
    print(f"  embed([text]) as recall calls it: p50 {statistics.median(whole):.3f}; previous "
          f"implementation p50 {statistics.median(before):.3f} "
          f"({statistics.median(before) / statistics.median(whole):.2f}x)")  # fmt: skip


def floor(e: M.MiniLMEmbedder, runs: int = 100) -> None:
    rows = len(e._tokenizer.encode(TEXT).ids)
    x, h = np.ones((rows, 384), np.float32), np.ones((rows, 1536), np.float32)
    blocks = [(layer.qkv, layer.out, layer.up, layer.down) for layer in e._layers]
    whole = [tuple(b.transpose(1, 0, 2).reshape(b.shape[1], -1) for b in layer)
             for layer in blocks]  # fmt: skip
    stored = [tuple(np.ascontiguousarray(w.T) for w in layer) for layer in whole]  # (out, in)
    everything = np.concatenate([w.reshape(-1) for layer in whole for w in layer])

    def by_blocks(layers: list) -> None:
        for qkv, out, up, down in layers:
            for rows_, w in ((x, qkv), (x, out), (x, up), (h, down)):
                M._dense(rows_, w, 0)

    def at_once(layers: list) -> None:
        for qkv, out, up, down in layers:
            x @ qkv, x @ out, x @ up, h @ down

    def as_stored(layers: list) -> None:  # the first implementation's products
        for qkv, out, up, down in layers:
            x @ qkv.T, x @ out.T, x @ up.T, h @ down.T

    with one_blas_thread():
        cold = p50(lambda: by_blocks(blocks), runs)
        plain = p50(lambda: at_once(whole), runs)
        first = p50(lambda: as_stored(stored), runs)
        hot = p50(lambda: by_blocks(blocks[:1] * len(blocks)), runs)
    read = p50(everything.sum, runs)
    flop = 2 * rows * everything.size / 1e9
    print(f"the products alone ({rows} rows, {flop * 1000:.0f} MFLOP, 42 MB of weights, one "
          f"thread), ms: by blocks of 32 columns (as the embedder does) {cold:.2f} "
          f"({flop / cold * 1000:.0f} GFLOP/s); each weight whole, transposed once, {plain:.2f}; "
          f"by the transpose of the weight as stored (the first implementation) {first:.2f}; by "
          f"blocks on one layer's weights six times (in cache) {hot:.2f}; reading the 42 MB once "
          f"{read:.2f} ({everything.nbytes / read / 1e6:.0f} GB/s)")  # fmt: skip


def by_length(e: M.MiniLMEmbedder, reference: ReferenceMiniLM, runs: int = 30) -> None:
    print("by length, one text, p50 ms, ours / previous implementation (interleaved):")
    cells = []
    for n in (8, 11, 16, 24, 32, 64, 128, 256):
        text = " ".join(["x"] * (n - 2))
        assert len(e._tokenizer.encode(text).ids) == n
        ours, theirs = [], []
        for _ in range(runs):
            ours.append(p50(lambda text=text: e.embed([text]), 1))
            theirs.append(p50(lambda text=text: reference.embed([text]), 1))
        o, t = statistics.median(ours), statistics.median(theirs)
        cells.append(f"{n} tokens {o:.2f} / {t:.2f} ({t / o:.1f}x)")
    print("  " + "; ".join(cells[:4]) + "\n  " + "; ".join(cells[4:]))


def threads(e: M.MiniLMEmbedder, runs: int = 60) -> None:
    ids = e._tokenizer.encode(TEXT).ids
    long = e._tokenizer.encode(" ".join(["x"] * 62)).ids
    out = []
    for label, batch in (("11 tokens", [ids]), ("64 tokens", [long])):
        with threadpool_limits(1, user_api="blas"):
            one = p50(lambda batch=batch: e._forward(batch), runs)
        with threadpool_limits(None, user_api="blas"):
            many = p50(lambda batch=batch: e._forward(batch), runs)
        out.append(f"{label}: one thread {one:.2f}, all threads {many:.2f}")
    print("BLAS threads, p50 ms: " + "; ".join(out))


if __name__ == "__main__":
    embedder = load_embedder("minilm")
    reference = ReferenceMiniLM()
    embedder.embed(["warm"]), reference.embed(["warm"])
    profile(embedder, reference)  # type: ignore[arg-type]
    floor(embedder)  # type: ignore[arg-type]
    by_length(embedder, reference)  # type: ignore[arg-type]
    threads(embedder)  # type: ignore[arg-type]
