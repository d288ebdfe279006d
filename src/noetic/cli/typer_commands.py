"""Typer's commands for the fast-path commands, built from their one declaration
(:mod:`noetic.cli.declared`), so the two parsers cannot disagree on an option's spelling,
environment variable or default: each is a function whose signature typer reads and which calls
the command's own function with the parsed values.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from importlib import import_module
from typing import Annotated, Any

import typer

from noetic.cli.declared import COMMANDS, Arg, Opt


def typer_option(opt: Opt) -> Any:
    """``typer.Option(…)`` for ``opt``, as a hand-written declaration says it."""
    decls = list(opt.flags)
    if opt.off_flags:
        decls = [f"{opt.flags[0]}/{opt.off_flags[0]}", *opt.flags[1:]]
    extra: dict[str, Any] = {} if opt.show_default is None else {"show_default": opt.show_default}
    return typer.Option(*decls, help=opt.help, envvar=opt.envvar, **extra)


def _option_annotation(opt: Opt) -> Any:
    kind: Any = opt.kind
    if opt.default is None and not opt.required and opt.kind is not bool:
        kind = kind | None
    return Annotated[kind, typer_option(opt)]


def _argument_annotation(arg: Arg) -> Any:
    extra: dict[str, Any] = {} if arg.show_default is None else {"show_default": arg.show_default}
    return Annotated[str if arg.required else str | None, typer.Argument(help=arg.help, **extra)]


def command(name: str) -> Callable[..., None]:
    """The typer command for ``name``: typer reads its ``__signature__`` and ``__doc__``."""
    spec = COMMANDS[name]
    params = [
        inspect.Parameter(a.dest, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                          annotation=_argument_annotation(a),
                          default=inspect.Parameter.empty if a.required else None)
        for a in spec.arguments
    ]  # fmt: skip
    for opt in spec.options:
        params.append(
            inspect.Parameter(
                opt.dest,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=_option_annotation(opt),
                default=inspect.Parameter.empty if opt.required else opt.default,
            )
        )

    def run(**values: Any) -> None:
        getattr(import_module(spec.module), name)(**values)

    run.__name__ = run.__qualname__ = name
    run.__doc__ = spec.help
    run.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return run


def __getattr__(name: str) -> Callable[..., None]:
    """``noetic.cli.typer_commands.check`` and the like, for the application's table."""
    if name in COMMANDS:
        return command(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["command", "typer_option"]
