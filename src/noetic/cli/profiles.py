"""`noetic profile list|show|export|import`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from noetic.cli._common import JsonOpt, StoreOpt, emit, esc, handled, stdout

app = typer.Typer(help="Investigation profiles: list, show, export, import.", no_args_is_help=True)


def _registry(store: Path | None):
    from noetic.profiles import ProfileRegistry
    from noetic.store import resolve_home

    return ProfileRegistry(resolve_home(store) / "profiles")


@app.command("list")
def list_(store: StoreOpt = None, json: JsonOpt = False) -> None:
    """Every profile, built-in and the user's."""
    with handled(json):
        registry = _registry(store)
        profiles = [registry.get(n) for n in registry.names()]

    def render() -> None:
        from noetic.cli.render import table as new_table

        table = new_table("name", "threshold", "max rounds", "tools", "source", "for")
        for p in profiles:
            table.add_row(
                esc(p.name),
                str(p.investigation.confidence_threshold),
                str(p.investigation.max_rounds or "unlimited"),
                p.investigation.tool_mode.value,
                "built-in" if registry.is_builtin(p.name) else "user",
                esc(p.description),
            )
        stdout().print(table)

    emit(profiles, json, render)


@app.command()
def show(
    name: Annotated[str, typer.Argument(help="Profile name.")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """One profile in full."""
    with handled(json):
        profile = _registry(store).get(name)
    emit(profile, json, lambda: stdout().print(profile.to_yaml(), markup=False))


@app.command()
def export(
    name: Annotated[str, typer.Argument(help="Profile name.")],
    file: Annotated[Path | None, typer.Argument(help="Write here (default: stdout).")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Export a profile as YAML, to edit and import under a new name.

    With --json: ``{"name", "yaml"}``, or ``{"name", "path"}`` when written to a file."""
    with handled(json):
        text = _registry(store).get(name).to_yaml()
        if file is not None:
            try:
                file.write_text(text, encoding="utf-8")
            except OSError as exc:
                from noetic.errors import UsageError

                raise UsageError(
                    f"cannot write {file}: {exc.strerror or exc}", fix="choose another path"
                ) from None
    if file is None:
        emit({"name": name, "yaml": text}, json, lambda: typer.echo(text, nl=False))
    else:
        written = {"name": name, "path": str(file)}
        emit(written, json, lambda: stdout().print(f"exported {esc(name)} to {esc(file)}"))


@app.command("import")
def import_(
    file: Annotated[Path, typer.Argument(help="A profile YAML file.")],
    name: Annotated[str | None, typer.Option(help="Save under this name.")] = None,
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """Validate a profile YAML (safe loader) and add it to the user's profiles."""
    with handled(json):
        profile = _registry(store).import_file(file, name)
    emit(profile, json, lambda: stdout().print(f"imported profile {esc(profile.name)}"))
