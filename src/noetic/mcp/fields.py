"""The argument types the MCP tools share, each with the description an agent reads in the tool
list."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from noetic.vectors import VECTOR_NAMES

# Short: every client's model reads these on every turn (tests/mcp/test_tool_list_size.py).
Scores = Annotated[
    dict[str, Any],
    Field(
        description="Scores in [0, 1] by vector (" + ", ".join(VECTOR_NAMES) + "; high density "
        'and uncertainty are worse): 0.8, or {"score": 0.8, "rationale": "…", "evidence": "…"}.'
    ),
]
YourAction = Annotated[
    str | None,
    Field(
        description="INVESTIGATE, PROCEED, CLARIFY, DELEGATE or RESET: what you would do "
        "(recorded; Noetic decides from the scores and the profile)."
    ),
]
SessionId = Annotated[str | None, Field(description="Default: your current session.")]
TaskText = Annotated[
    str | None,
    Field(description="The task about to be attempted (the seed's name: prompt)."),
]
ProviderSpec = Annotated[
    str | None,
    Field(
        description="anthropic:M, openai:M, ollama:M or openai-compatible:URL#M (default: the "
        "configured one, else your model by MCP sampling)."
    ),
]

# The range is checked, with a clear error, when the assessment is built.
PSuccess = Annotated[float | None, Field(description="P(the task succeeds), 0 to 1.")]
ReviewKind = Annotated[
    Literal["standard", "adversarial"] | None, Field(description="adversarial: bug-hunt first.")
]
RequestId = Annotated[str | None, Field(description="Idempotency key: a retry is applied once.")]
