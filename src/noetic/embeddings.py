"""Text embeddings that run offline, from a model that ships inside its PyPI package.

The default is WordLlama's ``l2_supercat`` static embeddings (256 dimensions, a 16 MB table of
token vectors over the Llama-2 tokenizer, numpy only), loaded straight from the files inside
the ``wordllama`` package. WordLlama's own loader looks for its tokenizer in a folder that does
not exist in the wheel and then downloads it; Noetic never calls that loader, so nothing is
fetched at run time. A test checks this with the network switched off.

Static embeddings are not a transformer: they are fast (tens of thousands of short texts a
second on one core) and match paraphrases by shared and related words, which is what recall and
the pattern cache need; they are weaker on negation and word order.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from noetic.errors import UsageError

WORDLLAMA_CONFIG = "l2_supercat"
WORDLLAMA_DIM = 256


@runtime_checkable
class Embedder(Protocol):
    """``embed`` returns an ``(n, dimension)`` float32 array with L2-normalised rows."""

    name: str
    dimension: int

    def embed(self, texts: Sequence[str]) -> Any: ...


def wordllama_dir() -> Path:
    """The installed ``wordllama`` package folder, found without importing it."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise UsageError(
            "offline embeddings and token counts need the 'wordllama' package, which Noetic "
            "installs with itself",
            fix="reinstall Noetic: pip install --force-reinstall noetic",
        )
    return Path(next(iter(spec.submodule_search_locations)))


def tokenizer_file() -> Path:
    return wordllama_dir() / "tokenizers" / f"{WORDLLAMA_CONFIG}_tokenizer_config.json"


class WordLlamaEmbedder:
    name = f"wordllama-{WORDLLAMA_CONFIG}-{WORDLLAMA_DIM}"
    dimension = WORDLLAMA_DIM

    def __init__(self) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer
        from wordllama.inference import WordLlamaInference

        weights = wordllama_dir() / "weights" / f"{WORDLLAMA_CONFIG}_{WORDLLAMA_DIM}.safetensors"
        with safe_open(str(weights), framework="np", device="cpu") as fh:
            table = fh.get_tensor("embedding.weight")
        self._model = WordLlamaInference(table, Tokenizer.from_file(str(tokenizer_file())))

    def embed(self, texts: Sequence[str]) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = np.asarray(self._model.embed(list(texts), norm=True), dtype=np.float32)
        return vectors


@functools.cache
def default_embedder() -> Embedder:
    """The offline default, loaded once per process."""
    return WordLlamaEmbedder()


def cosine_top_k(query: Any, matrix: Any, k: int) -> list[tuple[int, float]]:
    """Exact top-k by cosine similarity over L2-normalised rows: ``[(row, similarity), …]``."""
    import numpy as np

    if len(matrix) == 0 or k <= 0:
        return []
    scores = matrix @ query
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    top = top[np.argsort(-scores[top], kind="stable")]
    return [(int(i), float(scores[i])) for i in top]
