"""`noetic profile list|show|export|import`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from noetic.cli.exits import handled
from noetic.cli.options import JsonOpt, StoreOpt, group
from noetic.cli.output import emit, esc, stdout
from noetic.cli.render import table
from noetic.errors import UsageError

if TYPE_CHECKING:
    from noetic.profiles import ProfileRegistry

app = group("Investigation profiles: list, show, export, import.")


def _registry(store: Path | None) -> ProfileRegistry:
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
        shown = table("name", "threshold", "max rounds", "tools", "source", "for")
        for p in profiles:
            shown.add_row(
                esc(p.name),
                str(p.investigation.confidence_threshold),
                str(p.investigation.max_rounds or "unlimited"),
                p.investigation.tool_mode.value,
                "built-in" if registry.is_builtin(p.name) else "user",
                esc(p.description),
            )
        stdout().print(shown)

    emit(profiles, json, render)


@app.command()
def show(
    name: Annotated[str, typer.Argument(help="Profile name.")],
    store: StoreOpt = None,
    json: JsonOpt = False,
) -> None:
    """One profile in full, as new sessions use it: the file plus the guardian's corrections in
    effect (each listed with the file's value and how to undo it)."""
    with handled(json):
        profile, corrections = _effective(store, name)

    def render() -> None:
        out = stdout()
        if corrections:
            out.print(
                f"# {profile.name} as sessions use it: the guardian's corrections are applied",
                markup=False,
            )
            for c in corrections:
                out.print(
                    f"#   {c['field']}: {c['file_value']} in the profile file → {c['value']} "
                    f"(adjustment {c['adjustment']}, {c['at'][:19]}; undo: noetic calibration "
                    f"guardian --profile {profile.name} --undo {c['adjustment']})",
                    markup=False,
                )
        out.print(profile.to_yaml(), markup=False)

    emit({**profile.model_dump(mode="json"), "corrections": corrections}, json, render)


def _effective(store: Path | None, name: str) -> tuple[Any, list[dict[str, Any]]]:
    """The profile with the store's active guardian adjustments, and those adjustments.

    A store that does not exist yet has none, and is not created just to look."""
    from functools import reduce
    from operator import getitem

    from noetic.calibration import adjustments
    from noetic.profiles import ProfileRegistry, with_overrides
    from noetic.store import locate_store, open_store

    location = locate_store(store)
    home = location.home
    base = ProfileRegistry(home / "profiles").get(name)
    if not location.exists:
        return base, []
    with open_store(home, create=True, url=location.url) as opened:
        active = [a for a in adjustments(opened, profile=base.name) if a.undone_at is None]
    newest = {a.field: a for a in active}  # later adjustments of a field replace earlier ones
    flat = base.model_dump()
    corrections = [
        {
            "field": a.field,
            "file_value": reduce(getitem, a.field.split("."), flat),
            "value": a.new,
            "adjustment": a.id,
            "at": a.at,
            "reason": a.reason,
        }
        for a in newest.values()
    ]
    return with_overrides(base, {a.field: a.new for a in newest.values()}), corrections


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
