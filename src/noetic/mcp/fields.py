"""The argument types the MCP tools share, each with the description an agent reads in the tool
list."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from noetic.vectors import VECTOR_NAMES

Scores = Annotated[
    dict[str, Any],
    Field(
        description='Scores by vector: {"know": 0.8, ...} or {"know": {"score": 0.8, '
        '"rationale": "...", "evidence": "..."}, ...}. Fractions in [0, 1]; for density and '
        "uncertainty high is worse. Vectors: " + ", ".join(VECTOR_NAMES) + "."
    ),
]
YourAction = Annotated[
    str | None,
    Field(
        description="What you would do: INVESTIGATE, PROCEED, CLARIFY, DELEGATE or RESET "
        "(recorded; Noetic's decision comes from the scores and the profile)."
    ),
]
SessionId = Annotated[
    str | None,
    Field(description="Session id from bootstrap_session (default: your current session)."),
]
TaskText = Annotated[
    str | None,
    Field(description="The task about to be attempted (the seed's name for it: prompt)."),
]
ProviderSpec = Annotated[
    str | None,
    Field(
        description="anthropic:MODEL, openai:MODEL, ollama:MODEL or "
        "openai-compatible:URL#MODEL (default: the configured one, else your own model "
        "through MCP sampling)."
    ),
]

# Short: every client's model reads these on every turn (tests/mcp/test_tool_list_size.py);
# the range is checked, with a clear error, when the assessment is built.
PSuccess = Annotated[float | None, Field(description="P(the task succeeds), 0 to 1.")]
ReviewKind = Annotated[
    Literal["standard", "adversarial"] | None, Field(description="adversarial: bug-hunt first.")
]
