"""The irreversible class: commands whose effect cannot be undone from the workspace.

The shell gate refuses what must never run; this class is what may run, but only once the
agent's own CHECK says it knows enough (the epistemic gate of :mod:`noetic.hosts.pretool`):
pushes, publishes, deploys, migrations (rules as data in ``irreversible.yaml`` beside this
module, extended by the user's files) and deletions outside the workspace (found from the
paths, not listed). Commands are found in the shell gate's syntax tree, every simple command
the line could run, each reduced to what actually runs (:func:`noetic.hosts.testruns.reduce`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from noetic.errors import InvalidValueError
from noetic.hosts.testruns import operands, reduce
from noetic.tools.shellgate.policy import regular_expressions

_PYTHON = re.compile(r"^(python|python3|python3\.\d+|py)$")
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Match(_Strict):
    command: tuple[str, ...] = Field(min_length=1)
    subcommand: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()

    @field_validator("arguments")
    @classmethod
    def _regexes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return regular_expressions(value)


class Rule(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    reason: str
    match: tuple[Match, ...] = Field(min_length=1)
    always: bool = False  # held for the person whatever the task's CHECK says


class Effect(str):
    """One phrase :func:`irreversible` finds; ``always`` when its rule holds the command for
    the person whatever the task's CHECK says (planting what runs later)."""

    always: bool = False

    @classmethod
    def of(cls, text: str, always: bool = False) -> Effect:
        effect = cls(text)
        effect.always = always
        return effect


class Rules(_Strict):
    rules: tuple[Rule, ...] = ()


@cache
def _builtin() -> tuple[Rule, ...]:
    text = resources.files("noetic.hosts").joinpath("irreversible.yaml").read_text()
    return Rules.model_validate(yaml.safe_load(text)).rules


def load_rules(*paths: Path) -> tuple[Rule, ...]:
    """The built-in rules extended by each file in ``paths`` (a rule whose id is a built-in
    one's replaces it); every problem in a file is a :class:`InvalidValueError` naming it."""
    rules = {r.id: r for r in _builtin()}
    for path in paths:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise InvalidValueError(
                f"no irreversible rules file {path}", field="irreversible_rules"
            ) from None
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise InvalidValueError(
                f"irreversible rules {path} cannot be read: {exc}", field="irreversible_rules"
            ) from None
        try:
            extra = Rules.model_validate(data or {})
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"]) or "(file)"
            raise InvalidValueError(
                f"irreversible rules {path}: {where}: {err['msg']}", field="irreversible_rules"
            ) from None
        rules.update({r.id: r for r in extra.rules})
    return tuple(rules.values())


def irreversible(
    command: str, *, workspace: str, cwd: str, home: str, rules: tuple[Rule, ...] | None = None
) -> list[Effect]:
    """What ``command`` would do that cannot be undone, as short phrases naming the rule and
    the command (empty when nothing; a line that does not parse has none: the gate refuses
    it)."""
    from noetic.tools.shellgate.syntax import TooComplex, Unparseable, parse

    try:
        script = parse(command, home=home, workspace=workspace, cwd=cwd)
    except (Unparseable, TooComplex, RecursionError):
        return []
    rules = rules if rules is not None else _builtin()
    found: list[Effect] = []
    root = os.path.realpath(workspace)
    for cmd in script.commands:
        if cmd.name is None or cmd.keyword is not None or cmd.name.value is None:
            continue
        words = [cmd.name.value, *(a.value if a.value is not None else a.text for a in cmd.args)]
        reduced = list(reduce(words).words)
        if len(reduced) > 1 and _PYTHON.match(os.path.basename(reduced[0])):
            reduced = reduced[1:]  # `python manage.py migrate`: the script is the program
        if not reduced:
            continue
        text = " ".join(cmd.text.split())
        for rule in rules:
            if any(_fits(m, reduced) for m in rule.match):
                found.append(Effect.of(f"{rule.id}: {rule.reason} (`{text}`)", rule.always))
                break
        outside = _deletes_outside(reduced, cmd.cwds, root)
        if outside is not None:
            found.append(Effect.of(f"delete: removes {outside}, outside the workspace (`{text}`)"))
    return found


def _fits(m: Match, words: list[str]) -> bool:
    head = words[0]
    if not any(
        fnmatch.fnmatchcase(head, p) or fnmatch.fnmatchcase(os.path.basename(head), p)
        for p in m.command
    ):
        return False
    args = words[1:]
    if m.subcommand:
        found = operands([os.path.basename(head), *args])
        if not found or found[0][0] not in m.subcommand:
            return False
    return not m.arguments or any(re.search(p, a) for p in m.arguments for a in args)


def _deletes_outside(words: list[str], cwds: Any, root: str) -> str | None:
    base = os.path.basename(words[0])
    targets = [w for w in words[1:] if not w.startswith("-")]
    if base == "find" and "-delete" in words:
        targets = [w for w in words[1:] if not w.startswith(("-", "(", "!"))][:1] or ["."]
    elif base not in DELETERS:
        return None
    folders = sorted(cwds) if cwds else []
    for target in targets:
        places = (
            [os.path.realpath(target)]
            if target.startswith("/")
            else [os.path.realpath(os.path.join(f, target)) for f in folders]
        )
        for place in places:
            if place != root and not place.startswith(root.rstrip("/") + "/"):
                return place
    return None
