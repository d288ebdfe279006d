"""The irreversible class: commands whose effect cannot be undone from the workspace.

The shell gate refuses what must never run; this class is what may run, but only once the
agent's own CHECK says it knows enough (the epistemic gate of :mod:`noetic.hosts.hooks.pretool`):
pushes, publishes, deploys, migrations (rules as data in ``irreversible.yaml`` beside this
module, extended by the user's files) and deletions outside the workspace (found from the
paths, not listed). Commands are found in the shell gate's syntax tree, every simple command
the line could run, each reduced to what actually runs
(:func:`noetic.tools.shellgate.reduction.reduce`).
"""

from __future__ import annotations

import fnmatch
import os
import re
from functools import cache
from pathlib import Path

from noetic.errors import InvalidValueError
from noetic.named import NamedTuple
from noetic.tools.shellgate.policy import mapping_of, regular_expressions
from noetic.tools.shellgate.reduction import operands, reduce

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Annotated, Any

    from pydantic import AfterValidator, BeforeValidator, Field

_PYTHON = re.compile(r"^(python|python3|python3\.\d+|py)$")
DELETERS = frozenset({"rm", "rmdir", "unlink", "shred"})


# Named tuples, defined in microseconds: pydantic reads their annotations only when rules are
# built from their files (:func:`noetic.cached.validated`; an unknown key is refused, an entry
# that is not a mapping too), and what is built is cached by content.
_match = mapping_of("Match")
_rule = mapping_of("Rule")


class Match(NamedTuple):
    command: Annotated[tuple[str, ...], Field(min_length=1)]
    subcommand: tuple[str, ...] = ()
    arguments: Annotated[tuple[str, ...], AfterValidator(regular_expressions)] = ()


class Rule(NamedTuple):
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    reason: str
    match: Annotated[tuple[Annotated[Match, BeforeValidator(_match)], ...], Field(min_length=1)]
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


class Rules(NamedTuple):
    rules: tuple[Annotated[Rule, BeforeValidator(_rule)], ...] = ()


BUILT_IN = Path(__file__).with_name("irreversible.yaml")


@cache
def _builtin() -> tuple[Rule, ...]:
    return _load(BUILT_IN.read_bytes(), None)


def _load(raw: bytes, path: Path | None) -> tuple[Rule, ...]:
    from noetic import cached

    inputs = [Path(__file__).read_bytes(), str(path).encode("utf-8", "surrogateescape"), raw]
    return cached.load("irreversible", inputs, lambda: _build(raw, path), (Match, Rule))


def _build(raw: bytes, path: Path | None) -> tuple[Rule, ...]:
    import yaml
    from pydantic import ValidationError

    from noetic import cached

    if path is None:
        return cached.validated(Rules, yaml.safe_load(raw.decode("utf-8"))).rules
    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except (UnicodeDecodeError, yaml.YAMLError) as exc:
        raise _refused(f"irreversible rules {path} cannot be read: {exc}") from None
    if not isinstance(data or {}, dict):  # a named tuple would take a list as its fields
        where = "(file): Input should be a valid dictionary or instance of Rules"
        raise _refused(f"irreversible rules {path}: {where}")
    try:
        return cached.validated(Rules, data or {}).rules
    except ValidationError as exc:
        where, message = cached.first_error(exc)
        raise _refused(f"irreversible rules {path}: {where or '(file)'}: {message}") from None


def _refused(message: str) -> InvalidValueError:
    return InvalidValueError(message, field="irreversible_rules")


def load_rules(*paths: Path) -> tuple[Rule, ...]:
    """The built-in rules extended by each file in ``paths`` (a rule whose id is a built-in
    one's replaces it); every problem in a file is a :class:`InvalidValueError` naming it."""
    rules = {r.id: r for r in _builtin()}
    for path in paths:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            raise _refused(f"no irreversible rules file {path}") from None
        except OSError as exc:
            raise _refused(f"irreversible rules {path} cannot be read: {exc}") from None
        rules.update({r.id: r for r in _load(raw, path)})
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
        rule = next((r for r in rules if any(_fits(m, reduced) for m in r.match)), None)
        if rule is not None:
            found.append(Effect.of(f"{rule.id}: {rule.reason} (`{text}`)", rule.always))
        outside = _deletes_outside(reduced, cmd.cwds, root)
        if outside is not None:
            found.append(Effect.of(f"delete: removes {outside}, outside the workspace (`{text}`)"))
    return found


def _fits(m: Match, words: list[str]) -> bool:
    head = words[0]
    if not any(_named(head, p) or _named(os.path.basename(head), p) for p in m.command):
        return False
    args = words[1:]
    if m.subcommand:
        found = operands([os.path.basename(head), *args])
        if not found or found[0][0] not in m.subcommand:
            return False
    return not m.arguments or any(re.search(p, a) for p in m.arguments for a in args)


def _named(name: str, pattern: str) -> bool:
    """``fnmatchcase(name, pattern)``, without compiling a pattern that has no wildcard (most
    are program names; a hook judges every command against them all, in a new process)."""
    if "*" in pattern or "?" in pattern or "[" in pattern:
        return fnmatch.fnmatchcase(name, pattern)
    return name == pattern


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
