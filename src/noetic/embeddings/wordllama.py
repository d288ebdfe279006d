"""WordLlama ``l2_supercat`` static embeddings: the average of the texts' token vectors.

The 16 MB table of token vectors and the Llama-2 tokenizer are read from the files inside the
``wordllama`` package. The package itself is never imported: its loader downloads a tokenizer
that the wheel lacks, and importing it pulls in ``requests`` and sets the root logger to INFO.
The arithmetic is WordLlama's own ``embed(norm=True)``: token ids without special tokens, the
mean of their rows, L2-normalised.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from noetic.embeddings.tokenizer import (
    WORDLLAMA_CONFIG,
    WORDLLAMA_DIM,
    llama_tokenizer,
    wordllama_dir,
)


class WordLlamaEmbedder:
    name = f"wordllama-{WORDLLAMA_CONFIG}-{WORDLLAMA_DIM}"
    dimension = WORDLLAMA_DIM

    def __init__(self) -> None:
        import numpy as np
        from safetensors import safe_open

        weights = wordllama_dir() / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors"
        with safe_open(str(weights), framework="np", device="cpu") as fh:
            self._table = np.ascontiguousarray(fh.get_tensor("embedding.weight"), np.float32)
        self._tokenizer = llama_tokenizer()

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=False)
        lengths = np.array([len(e.ids) for e in encoded])
        ids = np.clip(np.fromiter((i for e in encoded for i in e.ids), dtype=np.int64),
                      0, len(self._table) - 1)  # fmt: skip
        filled = lengths > 0
        if filled.any():
            starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))[filled]
            out[filled] = np.add.reduceat(self._table[ids], starts, axis=0)
        out /= np.maximum(lengths, 1)[:, None]
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
