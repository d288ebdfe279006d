"""What the tool list costs a client's model: input schemas without what repeats the names.

A client sends every tool's name, description and input schema to its model on every turn, so
their size is a cost paid all session. ``tests/mcp/test_tool_list_size.py`` holds the listing
to its budget.
"""

from __future__ import annotations

from typing import Any

_MAPS = ("properties", "$defs", "patternProperties")
_VALUES = ("default", "const", "enum", "examples")


def lean_schema(schema: Any) -> Any:
    """``schema`` without the ``title`` pydantic gives every object and property (``"title":
    "Session Id"`` beside ``session_id``): a client sends the input schemas to its model on
    every turn, and those titles only repeat the names. Property names, defaults and
    descriptions stay; argument validation does not read the listed schema. An ``anyOf`` of
    bare types (``str | None``: ``{"anyOf": [{"type": "string"}, {"type": "null"}]}``) is
    written as the one ``type`` list JSON Schema defines for it (``["string", "null"]``)."""
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
