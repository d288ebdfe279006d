"""Groups whose bare form runs a command: ``noetic nova "question"``, ``noetic agent "query"``,
``noetic observe "query"``.

The command that runs is hidden from the group's command list, so click alone would show
``noetic nova --help`` without its options (``--provider``, ``--experts``…) and print
``Usage: noetic nova ask`` for its own help. :class:`DefaultCommandGroup` routes a first word
that names no command to the default command, accepts the spellings in ``aliases`` (the seed's
``nova process``), lists the default command's options in the group's help under a usage line
that shows both forms, and names the default command by the word it was invoked with.
"""

from __future__ import annotations

from typing import Any, ClassVar

from typer.core import TyperGroup


class DefaultCommandGroup(TyperGroup):
    default: ClassVar[str] = "run"
    """The hidden command a bare invocation runs."""
    argument: ClassVar[str] = "QUERY"
    """How the group's usage line names the default command's argument."""
    aliases: ClassVar[frozenset[str]] = frozenset()
    """Other words that run the default command (``noetic nova process "q"``)."""

    def route(self, args: list[str]) -> list[str]:
        """The arguments with the default command's name in front where none is named."""
        known = (*self.commands, *self.aliases, "--help", "-h")
        if args and args[0] not in known:
            return [self.default, *args]
        return args

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, self.route(args))

    def get_command(self, ctx: Any, name: str) -> Any:
        return super().get_command(ctx, self.default if name in self.aliases else name)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        name, command, rest = super().resolve_command(ctx, args)
        # ``noetic nova process --help`` says ``noetic nova process``, and a bare question's
        # errors the command a person can type
        return (args[0] if args and args[0] in self.aliases else name), command, rest

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return ["[OPTIONS]", f"{self.argument} | COMMAND [ARGS]..."]

    def format_help(self, ctx: Any, formatter: Any) -> None:
        """The group's help in click's plain layout, with the default command's options."""
        self.format_usage(ctx, formatter)
        self.format_help_text(ctx, formatter)
        default = self.commands[self.default]
        sub = type(ctx)(default, info_name=self.default, parent=ctx)
        sub.ensure_object(dict)
        options = [p for p in default.get_params(sub) if p.param_type_name == "option"]
        rows = [r for p in options if (r := p.get_help_record(sub)) is not None]
        if rows:
            with formatter.section(f"Options (for {ctx.command_path} {self.argument})"):
                formatter.write_dl(rows)
        self.format_commands(ctx, formatter)
