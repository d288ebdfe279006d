"""The options every command shares (declared once, in :mod:`noetic.cli.declared`), in typer's
spelling, and command groups: kept apart from the typer-free modules so that the fast path
(:mod:`noetic.cli.fast`) never imports typer.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from noetic.cli.declared import AI_ID, JSON, SESSION, STORE
from noetic.cli.typer_commands import typer_option

JsonOpt = Annotated[bool, typer_option(JSON)]
StoreOpt = Annotated[Path | None, typer_option(STORE)]
SessionOpt = Annotated[str | None, typer_option(SESSION)]
AiIdOpt = Annotated[str | None, typer_option(AI_ID)]
ProviderOpt = Annotated[
    str | None,
    typer.Option(
        help="The model: anthropic:M, openai:M, ollama:M or openai-compatible:URL#M (default: "
        "$NOETIC_PROVIDER, else [provider] default in config.toml).",
        show_default=False,
    ),
]


def help_when_bare(ctx: typer.Context) -> None:
    """A command group run without a subcommand prints its help and succeeds."""
    if ctx.invoked_subcommand is None:
        typer.echo(ctx.get_help())
        raise typer.Exit()


def group(help: str, **options: Any) -> typer.Typer:
    """A command group (``noetic sessions``…): without a subcommand it prints its help."""
    return typer.Typer(help=help, callback=help_when_bare, invoke_without_command=True, **options)


def with_options(
    shared: Callable[..., None],
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Commands that take the same options declare them once, as the parameters of ``shared``
    (a function that does nothing else): the decorated command's parameter ``options`` stands
    for all of them, in that place, on the command line, and receives their values as one
    dict."""
    import functools
    import inspect

    declared = list(inspect.signature(shared, eval_str=True).parameters.values())

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        own = inspect.signature(command, eval_str=True)
        parameters = [
            q for p in own.parameters.values() for q in (declared if p.name == "options" else [p])
        ]

        @functools.wraps(command)
        def run(**given: Any) -> None:
            options = {p.name: given.pop(p.name) for p in declared}
            command(options=options, **given)

        run.__signature__ = own.replace(parameters=parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate
