"""Counting tokens offline with a real tokenizer.

The tokenizer is the Llama-2 SentencePiece BPE (32,000 tokens) that ships inside the
``wordllama`` package, loaded with the ``tokenizers`` library; nothing is downloaded. It is not
any hosted provider's own tokenizer (those are not published for offline use), and on English
prose and code it counts somewhat *more* tokens than OpenAI's cl100k/o200k encodings, so a
budget measured with it errs on the safe side. ``bench/token_counts.py`` prints the comparison.
"""

from __future__ import annotations

from noetic.embeddings import count_tokens

TOKENIZER_NAME = "llama-2 (wordllama l2_supercat)"


__all__ = ["TOKENIZER_NAME", "count_tokens"]
