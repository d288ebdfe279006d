"""The tool model: a name, a description, a JSON schema of the arguments, and a function.

``@tool`` turns a plain typed function into a :class:`Tool`: the schema comes from the type
hints, each argument's description from the docstring's ``Args:`` section, the tool's
description from the docstring's first paragraph. A function without type hints on every
argument, or with ``*args``/``**kwargs``, is refused when the tool is built, not when a model
first calls it.

Calls are checked before they run. :meth:`Tool.call` never raises for the model's mistakes or
the tool's failures: it returns a :class:`ToolResult` that names the bad argument, or the error
the tool raised, so an engine can hand it back to the model. :class:`Toolset` adds what a run
needs on top: unknown tools answered with the real names, and a cap on how many invalid calls
one tool may receive before the model is told to stop retrying it.
"""

from __future__ import annotations

import inspect
import re
import time
from collections.abc import Callable, Iterable
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from noetic.errors import InvalidValueError, PolicyRefusal, error_name
from noetic.frozen import Frozen

MAX_OUTPUT = 4000
NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")

Validator = Callable[[dict[str, Any]], dict[str, Any]]


class ToolArgumentError(Exception):
    """The arguments do not fit the tool's schema; ``argument`` names the first bad one."""

    def __init__(self, argument: str, problem: str) -> None:
        super().__init__(f"argument {argument!r}: {problem}")
        self.argument = argument
        self.problem = problem


class ToolResult(Frozen):
    """What a call produced, shaped for the model: output on success, an error otherwise.

    ``retry`` says the model may call again with corrected arguments; it is false once the
    tool's retry allowance is spent, and for failures inside the tool itself.
    """

    tool: str
    ok: bool
    output: str = ""
    error: str | None = None
    argument: str | None = None
    retry: bool = False
    ms: float = 0.0
    refused: str | None = None  # the policy rule that refused the call, when the gate did

    def for_model(self) -> str:
        """The text a model reads back."""
        if self.ok:
            return self.output
        hint = " Correct the arguments and call again." if self.retry else ""
        return f"error: {self.error}{hint}"


class Tool(Frozen, arbitrary_types_allowed=True):
    """A tool any engine may offer a model.

    ``improves_vectors`` and ``confidence_gain`` are optional hints for engines that reason
    about what a tool is likely to teach (CASCADE's guided tool mode); other engines ignore them.
    """

    name: str = Field(pattern=NAME.pattern)
    description: str
    parameters: dict[str, Any]
    function: Callable[..., Any]
    validate_arguments: Validator
    improves_vectors: tuple[str, ...] = ()
    confidence_gain: float = Field(0.1, ge=0, le=1)
    max_output: int = Field(MAX_OUTPUT, gt=0)

    def spec(self) -> dict[str, Any]:
        """Name, description and JSON schema, the shape model APIs take for tool definitions."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}

    async def call(self, arguments: Any) -> ToolResult:
        """Validate ``arguments``, run the tool, cap its output; failures become results."""
        start = time.perf_counter()

        def result(**fields: Any) -> ToolResult:
            ms = round((time.perf_counter() - start) * 1000, 3)
            return ToolResult(tool=self.name, ms=ms, **fields)

        if not isinstance(arguments, dict):
            return result(
                ok=False,
                error=f"arguments must be a JSON object, not {type(arguments).__name__}",
                retry=True,
            )
        try:
            checked = self.validate_arguments(arguments)
        except ToolArgumentError as exc:
            return result(ok=False, error=str(exc), argument=exc.argument, retry=True)
        try:
            value = self.function(**checked)
            if inspect.isawaitable(value):
                value = await value
        except InvalidValueError as exc:  # the tool refused what it was asked (a path outside…)
            refused = exc.rule if isinstance(exc, PolicyRefusal) else None
            return result(
                ok=False, error=exc.message, argument=exc.field, retry=True, refused=refused
            )
        except Exception as exc:  # a tool's failure is information for the model, not a crash
            return result(ok=False, error=f"{error_name(exc)}: {exc}")
        text = value if isinstance(value, str) else str(value)
        if len(text) > self.max_output:
            text = text[: self.max_output] + f"\n… (truncated at {self.max_output} characters)"
        return result(ok=True, output=text)


@overload
def tool(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    improves_vectors: Iterable[str] = (),
    confidence_gain: float = 0.1,
) -> Tool: ...


@overload
def tool(
    fn: None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    improves_vectors: Iterable[str] = (),
    confidence_gain: float = 0.1,
) -> Callable[[Callable[..., Any]], Tool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    improves_vectors: Iterable[str] = (),
    confidence_gain: float = 0.1,
) -> Tool | Callable[[Callable[..., Any]], Tool]:
    """Make a :class:`Tool` from a typed function (usable bare, ``@tool``, or with options)."""

    def build(function: Callable[..., Any]) -> Tool:
        summary, arg_docs = _parse_docstring(inspect.getdoc(function) or "")
        args_model = _arguments_model(function, arg_docs)
        schema = args_model.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        return Tool(
            name=name or function.__name__,
            description=description or summary or function.__name__,
            parameters=schema,
            function=function,
            validate_arguments=_pydantic_validator(args_model),
            improves_vectors=tuple(improves_vectors),
            confidence_gain=confidence_gain,
        )

    return build(fn) if fn is not None else build


def schema_validator(schema: dict[str, Any]) -> Validator:
    """A validator for a tool that only has a JSON schema (an MCP server's tool)."""
    import jsonschema

    checker = jsonschema.Draft202012Validator(schema)

    def validate(arguments: dict[str, Any]) -> dict[str, Any]:
        error = next(iter(sorted(checker.iter_errors(arguments), key=lambda e: e.path)), None)
        if error is not None:
            where = ".".join(str(p) for p in error.absolute_path)
            if not where and error.validator == "required":
                where = str(error.message).split("'")[1] if "'" in error.message else "(object)"
            raise ToolArgumentError(where or "(object)", error.message)
        return arguments

    return validate


class Toolset:
    """The tools of one run: lookup by name, and a cap on invalid calls per tool."""

    def __init__(self, tools: Iterable[Tool], *, max_retries: int = 2) -> None:
        self.tools: dict[str, Tool] = {}
        for t in tools:
            if t.name in self.tools:
                raise InvalidValueError(f"two tools are named {t.name!r}", field="tools")
            self.tools[t.name] = t
        self.max_retries = max_retries
        self._invalid: dict[str, int] = {}

    def __iter__(self) -> Any:
        return iter(self.tools.values())

    def __len__(self) -> int:
        return len(self.tools)

    def specs(self) -> list[dict[str, Any]]:
        return [t.spec() for t in self.tools.values()]

    async def call(self, name: str, arguments: Any) -> ToolResult:
        found = self.tools.get(name)
        if found is None:
            known = ", ".join(self.tools) or "none"
            return ToolResult(
                tool=name, ok=False, error=f"unknown tool {name!r}; available: {known}", retry=True
            )
        result = await found.call(arguments)
        if result.ok or not result.retry:
            return result
        self._invalid[name] = self._invalid.get(name, 0) + 1
        if self._invalid[name] > self.max_retries:
            return result.model_copy(
                update={
                    "retry": False,
                    "error": f"{result.error} (invalid {self._invalid[name]} times; stop "
                    f"calling {name!r} this run)",
                }
            )
        return result


# building ------------------------------------------------------------------------------------


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The first paragraph, and ``name: description`` lines under ``Args:``."""
    summary = doc.split("\n\n", 1)[0].replace("\n", " ").strip()
    args: dict[str, str] = {}
    section = re.search(r"^(?:Args|Arguments|Parameters):\s*\n(.*?)(?:\n\S|\Z)", doc, re.S | re.M)
    if section:
        current = None
        for line in section.group(1).splitlines():
            m = re.match(r"\s+(\w+)(?:\s*\([^)]*\))?:\s*(.*)", line)
            if m and (current is None or len(line) - len(line.lstrip()) <= 4):
                current = m.group(1)
                args[current] = m.group(2).strip()
            elif current and line.strip():
                args[current] += " " + line.strip()
    return summary, args


def _arguments_model(function: Callable[..., Any], docs: dict[str, str]) -> type[BaseModel]:
    signature = inspect.signature(function)
    hints = get_type_hints(function)
    fields: dict[str, Any] = {}
    for param in signature.parameters.values():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise InvalidValueError(
                f"tool {function.__name__!r}: *args and **kwargs cannot be described to a model",
                field=param.name,
            )
        if param.name not in hints:
            raise InvalidValueError(
                f"tool {function.__name__!r}: argument {param.name!r} has no type hint",
                field=param.name,
                fix="annotate every argument; the schema the model sees is built from them",
            )
        default = ... if param.default is param.empty else param.default
        fields[param.name] = (hints[param.name], Field(default, description=docs.get(param.name)))
    return create_model(
        f"{function.__name__}_arguments",
        __config__=ConfigDict(extra="forbid", strict=False),
        **fields,
    )


def _pydantic_validator(model: type[BaseModel]) -> Validator:
    def validate(arguments: dict[str, Any]) -> dict[str, Any]:
        try:
            parsed = model.model_validate(arguments)
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "(object)"
            problem = "unknown argument" if err["type"] == "extra_forbidden" else err["msg"]
            raise ToolArgumentError(where, problem) from None
        return {k: getattr(parsed, k) for k in type(parsed).model_fields}

    return validate
