"""The reference all-MiniLM-L6-v2 forward pass: Noetic's first numpy implementation, kept
unoptimised (each product on the weights as stored, the query, key and value projections
apart, every batch padded to its longest text) so that tests and ``bench/recall_latency.py``
can check the optimised :class:`noetic.embeddings.minilm.MiniLMEmbedder` against it. Its own
output equals sentence-transformers' on the same texts to 2e-7 (``docs/recall.md``)."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from noetic.embeddings import one_blas_thread
from noetic.embeddings.minilm import load_safetensors, model_dir

_MAX_TOKENS = 256
_BATCH = 32
_SMALL_TOKENS = 256


def _erf(x: Any) -> Any:
    """Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7)."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                + t * 1.061405429))))  # fmt: skip
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * weight + bias


class ReferenceMiniLM:
    name = "all-minilm-l6-v2"  # the same model: recall gives it the same floors
    dimension = 384
    heads = 12

    def __init__(self, folder: Path | None = None) -> None:
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        tensors = load_safetensors(folder / "model.safetensors")
        table = "embeddings.word_embeddings.weight"
        self._w = {k: v if k == table else np.array(v) for k, v in tensors.items()}
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self.layers = 1 + max(
            int(k.split(".")[2]) for k in self._w if k.startswith("encoder.layer.")
        )

    def embed(self, texts: Sequence[str]) -> Any:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encoded = self._tokenizer.encode_batch(list(texts))
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        small = sum(len(e.ids) for e in encoded) <= _SMALL_TOKENS
        with one_blas_thread() if small else contextlib.nullcontext():
            for start in range(0, len(order), _BATCH):
                rows = order[start : start + _BATCH]
                out[rows] = self._forward([encoded[i].ids for i in rows])
        return out

    def _forward(self, batch: list[list[int]]) -> Any:
        w = self._w
        length = max(len(ids) for ids in batch)
        ids = np.zeros((len(batch), length), dtype=np.int64)
        mask = np.zeros((len(batch), length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        size = self.dimension // self.heads
        for n in range(self.layers):
            p = f"encoder.layer.{n}."

            def dense(v: Any, name: str, p: str = p) -> Any:
                flat = v.reshape(-1, v.shape[-1]) @ w[p + name + ".weight"].T
                return (flat + w[p + name + ".bias"]).reshape(*v.shape[:-1], -1)

            def split(v: Any) -> Any:
                return v.reshape(len(batch), length, self.heads, size).transpose(0, 2, 1, 3)

            q = split(dense(x, "attention.self.query"))
            k = split(dense(x, "attention.self.key"))
            v = split(dense(x, "attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(size)) + blocked
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(len(batch), length, -1)
            x = _layer_norm(
                dense(context, "attention.output.dense") + x,
                w[p + "attention.output.LayerNorm.weight"],
                w[p + "attention.output.LayerNorm.bias"],
            )
            h = dense(x, "intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.float32(math.sqrt(2.0))))
            x = _layer_norm(
                dense(h, "output.dense") + x,
                w[p + "output.LayerNorm.weight"],
                w[p + "output.LayerNorm.bias"],
            )
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
