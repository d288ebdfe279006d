"""What the tool list costs a client's model: the argument types the tools share, each with the
description an agent reads, and input schemas without what repeats the names.

A client sends every tool's name, description and input schema to its model on every turn, so
their size is a cost paid all session. ``tests/mcp/test_tool_list_size.py`` holds the listing
to its budget.
"""

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

_MAPS = ("properties", "$defs", "patternProperties")
_VALUES = ("default", "const", "enum", "examples")


def lean_schema(schema: Any) -> Any:
    """``schema`` without the ``title`` pydantic gives every object and property, and with an
    ``anyOf`` of bare types written as the one ``type`` list JSON Schema defines for it
    (docs/mcp.md, "The tool list's size"); argument validation does not read the listed schema."""
    if isinstance(schema, list):
        return [lean_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    lean: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "anyOf" and "type" not in schema and _bare_types(value):
            lean["type"] = [member["type"] for member in value]
            continue
        if key in _MAPS and isinstance(value, dict):
            lean[key] = {name: lean_schema(s) for name, s in value.items()}
        elif key in _VALUES:
            lean[key] = value
        else:
            lean[key] = lean_schema(value)
    return lean


def _bare_types(members: Any) -> bool:
    """Whether ``members`` are two or more schemas that each say only their type."""
    return (
        isinstance(members, list)
        and len(members) > 1
        and all(
            isinstance(m, dict) and set(m) == {"type"} and isinstance(m["type"], str)
            for m in members
        )
    )
