"""Personas: Markdown files with YAML front matter, as seed 002 defines them (``docs/nova.md``
shows the format): the front matter's fields (:data:`FRONT_MATTER_FIELDS`), then the body, the
persona's instructions.

The built-ins live beside this module (``core/`` holds the DCE and the CAE, ``experts/`` the
domain experts). A catalogue stacks directories: the built-ins, then ``<store>/personas/``, then
any ``--personas DIR``; a later file with the same ``short_name`` replaces an earlier one. A file
that cannot be used is an error naming the file and the field, never skipped quietly.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from enum import StrEnum
from importlib import resources
from pathlib import Path

import yaml
from pydantic import Field, ValidationError, field_validator

from noetic.errors import InvalidValueError, NotFoundError
from noetic.frozen import Frozen
from noetic.limits import FILE_BYTES
from noetic.untrusted import decode_utf8, read_file_bytes

_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)
_NAME = r"^[a-z0-9][a-z0-9_-]{0,39}$"


class Pattern(StrEnum):
    COORDINATOR = "coordinator"
    CRITIC = "critic"
    DOMAIN_EXPERT = "domain_expert"


class Persona(Frozen, extra="forbid"):
    """One persona: the seed's front matter, its Markdown body, and where it came from."""

    role: str = Field(min_length=1, max_length=100)
    short_name: str = Field(pattern=_NAME)
    expertise: tuple[str, ...] = Field(min_length=1)
    tools: tuple[str, ...] = ()
    responsibility: str = Field(min_length=1, max_length=500)
    pattern: Pattern
    model: str | None = Field(None, min_length=1, description="A provider string of its own.")
    body: str = ""
    source: str = "<builtin>"

    @field_validator("expertise", "tools", mode="before")
    @classmethod
    def _list_of_text(cls, value: object) -> object:
        if isinstance(value, list | tuple) and not all(
            isinstance(v, str) and v.strip() for v in value
        ):
            raise ValueError("must be a list of non-empty strings")
        return value

    def card(self) -> str:
        """One line for the DCE's catalogue: name, role, what it covers."""
        return (
            f"- {self.short_name}: {self.role} ({'; '.join(self.expertise)}). {self.responsibility}"
        )


FRONT_MATTER_FIELDS = tuple(name for name in Persona.model_fields if name not in ("body", "source"))


def parse_persona(text: str, source: str) -> Persona:
    """A persona from a file's text; :class:`InvalidValueError` names ``source`` and the field."""
    match = _FRONT.match(text)
    if match is None:
        raise InvalidValueError(
            f"{source}: no YAML front matter (the file must start with a '---' line, the "
            "fields, and a closing '---' line)",
            field="front matter",
        )
    try:
        data = yaml.safe_load(match.group(1))
    except yaml.YAMLError as exc:
        raise InvalidValueError(
            f"{source}: the front matter is not valid YAML: {exc}", field="front matter"
        ) from None
    if not isinstance(data, dict):
        raise InvalidValueError(
            f"{source}: the front matter must be a mapping of fields, got {type(data).__name__}",
            field="front matter",
        )
    unknown = sorted(str(k) for k in data if k not in FRONT_MATTER_FIELDS)
    if unknown:
        raise InvalidValueError(
            f"{source}: field {unknown[0]!r} is not a persona field",
            field=unknown[0],
            fix=f"persona fields: {', '.join(FRONT_MATTER_FIELDS)}",
        )
    body = text[match.end() :].strip()
    if not body:
        raise InvalidValueError(
            f"{source}: field 'body': the persona has no instructions (the Markdown after the "
            "front matter is empty)",
            field="body",
        )
    try:
        return Persona.model_validate({**data, "body": body, "source": source})
    except ValidationError as exc:
        raise InvalidValueError.first_of(exc, source, "front matter") from None


def load_persona(path: Path, source: str | None = None) -> Persona:
    """Read one persona file under the one decoding policy; ``source`` names it in errors."""
    source = source or str(path)
    data = read_file_bytes(path, f"the persona file {source}")
    return parse_persona(decode_utf8(data, source, FILE_BYTES), source)


def builtin_dir() -> Path:
    return Path(str(resources.files("noetic.nova.personas")))


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*.md") if p.is_file())


class Catalogue:
    """The personas a run may use: built-ins overridden by the user's directories, in order."""

    def __init__(self, directories: Iterable[Path] = ()) -> None:
        self.personas: dict[str, Persona] = {}
        self.overridden: dict[str, str] = {}
        builtin = builtin_dir()
        for directory in (builtin, *directories):
            if not directory.exists():
                continue
            if not directory.is_dir():
                raise InvalidValueError(
                    f"{directory}: not a directory of personas", field="personas"
                )
            for path in _files(directory):
                source = f"built-in {path.relative_to(builtin)}" if directory == builtin else None
                persona = load_persona(path, source)
                if persona.short_name in self.personas:
                    self.overridden[persona.short_name] = self.personas[persona.short_name].source
                self.personas[persona.short_name] = persona

    def names(self) -> list[str]:
        return sorted(self.personas)

    def get(self, name: str) -> Persona:
        if name not in self.personas:
            raise NotFoundError(
                f"unknown persona {name!r}", fix=f"known personas: {', '.join(self.names())}"
            )
        return self.personas[name]

    def one_of(self, pattern: Pattern) -> Persona:
        """The persona playing a single-seat part (the coordinator, the critic)."""
        found = [p for p in self.personas.values() if p.pattern == pattern]
        if len(found) != 1:
            raise InvalidValueError(
                f"the panel needs exactly one {pattern.value} persona, found "
                f"{len(found)}: {', '.join(sorted(p.short_name for p in found)) or 'none'}",
                field="pattern",
                fix="override the built-in by giving your file its short_name",
            )
        return found[0]

    @property
    def coordinator(self) -> Persona:
        return self.one_of(Pattern.COORDINATOR)

    @property
    def critic(self) -> Persona:
        return self.one_of(Pattern.CRITIC)

    def experts(self) -> list[Persona]:
        return [p for _, p in sorted(self.personas.items()) if p.pattern == Pattern.DOMAIN_EXPERT]


def template(short_name: str) -> str:
    """A new domain-expert persona file to edit (``noetic nova personas new NAME``)."""
    if not re.match(_NAME, short_name):
        raise InvalidValueError(
            f"persona name {short_name!r} must be lowercase letters, digits, '-' or '_' "
            "(at most 40)",
            field="short_name",
            value=short_name,
        )
    title = short_name.replace("_", " ").replace("-", " ").title()
    return f"""---
role: {title} Expert
short_name: {short_name}
expertise:
  - (what this expert knows)
tools:
  - (how this expert checks a claim)
responsibility: Evaluate {title.lower()} implications
pattern: domain_expert
---

# {title} Expert

You are the {title} Expert. Your role is to evaluate proposals for their {title.lower()}
implications.

## When You Analyze

Look for:
1. ...

## Output Format

A short analysis in Markdown: your position, the evidence for it, the risks you see.
"""
