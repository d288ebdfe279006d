"""The shell policy as data: the built-in ``policy.yaml`` extended by the user's own file.

A user's file has the built-in file's keys. Its ``rules`` are added (a rule whose ``id`` is a
built-in rule's replaces it), its lists extend the built-in lists, its mappings add to or
override entries, ``network`` replaces the built-in value, and ``disable`` names rules —
structural or not — that the gate no longer applies. Every problem in a policy file is a
:class:`~noetic.errors.InvalidValueError` naming the file and the key: a policy that cannot be
read is never silently replaced by a weaker one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from pathlib import Path

from noetic.errors import InvalidValueError
from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Annotated, Any, Literal

    from pydantic import AfterValidator, BeforeValidator, Field


def regular_expressions(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """``patterns`` if each compiles; else the first that does not, named in the error."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
    return patterns


def mapping_of(name: str) -> Callable[[Any], Any]:
    """A check that an entry of the policy is a mapping of its keys (pydantic would take a list
    as a named tuple's fields in order), refused as pydantic words it for a dataclass."""

    def check(value: Any) -> Any:
        if isinstance(value, dict) or (isinstance(value, tuple) and hasattr(value, "_fields")):
            return value
        from pydantic_core import PydanticCustomError

        raise PydanticCustomError(
            "dataclass_type",
            "Input should be a valid dictionary or instance of {class_name}",
            {"class_name": name},
        )

    return check


def one_kind(m: Match) -> Match:
    """A match names exactly one kind of thing (checked when a policy is built)."""
    kinds = sum(bool(k) for k in (m.command, m.paths, m.variables))
    if kinds != 1:
        raise ValueError("a match names exactly one of command, paths or variables")
    return m


_match = mapping_of("Match")
_rule = mapping_of("Rule")
_writer = mapping_of("Writer")

# Named tuples, so a process that only applies the policy never imports pydantic and defines
# them in microseconds: their annotations are read (by pydantic, :func:`noetic.cached.validated`;
# an unknown key is refused, as for a dataclass with ``extra="forbid"``) only when a policy is
# built from its files, and what is built is cached (:mod:`noetic.cached`).


class Match(NamedTuple):
    """One way a rule can fit a command (see the comment above ``rules`` in policy.yaml)."""

    command: tuple[str, ...] = ()
    subcommand: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    arguments: Annotated[tuple[str, ...], AfterValidator(regular_expressions)] = ()
    paths: tuple[str, ...] = ()
    access: Literal["read", "write"] = "read"
    variables: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()


class Rule(NamedTuple):
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]*$")]
    reason: str
    match: Annotated[
        tuple[Annotated[Match, BeforeValidator(_match), AfterValidator(one_kind)], ...],
        Field(min_length=1),
    ]


class Writer(NamedTuple):
    paths: Literal["all", "last", "after-first", "none"] = "all"
    options: tuple[str, ...] = ()
    when: tuple[str, ...] = ()


class Policy(NamedTuple):
    """The whole policy the gate applies; build it with :func:`load_policy`."""

    version: int = 1
    network: bool = False
    shell: str | None = None
    environment: tuple[str, ...] = ()
    allow_interpreters: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    interpreters: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    interpreter_values: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    shells: tuple[str, ...] = ()
    sandbox_contains: tuple[str, ...] = ()
    runs: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    programs: dict[str, Literal["sed", "awk"]] = {}  # noqa: RUF012 (never changed)
    git_exec_keys: tuple[str, ...] = ()
    package_indexes: tuple[str, ...] = ()
    index_options: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    index_variables: tuple[str, ...] = ()
    network_clients: tuple[str, ...] = ()
    evaluators: tuple[str, ...] = ()
    inert: tuple[str, ...] = ()
    judged_alone: tuple[str, ...] = ()
    runner_subcommands: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    recursive_readers: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    opaque_runs: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    wrappers: dict[str, tuple[str, ...]] = {}  # noqa: RUF012 (never changed)
    downloaders: tuple[str, ...] = ()
    writers: dict[str, Annotated[Writer, BeforeValidator(_writer)]] = {}  # noqa: RUF012
    structural: dict[str, str] = {}  # noqa: RUF012 (never changed)
    rules: tuple[Annotated[Rule, BeforeValidator(_rule)], ...] = ()
    disable: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def enabled(self, rule: str) -> bool:
        return rule not in self.disable

    def reason(self, rule: str) -> str:
        if rule in self.structural:
            return self.structural[rule]
        found = next((r for r in self.rules if r.id == rule), None)
        return found.reason if found else rule


BUILT_IN = Path(__file__).with_name("policy.yaml")


def _raw(path: Path) -> bytes:
    source = str(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InvalidValueError(f"no policy file {source}", field="policy", value=source) from None
    except OSError as exc:
        raise InvalidValueError(f"cannot read policy {source}: {exc}", field="policy") from None


def _parse(raw: bytes, source: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InvalidValueError(
            f"policy {source} is not UTF-8 (byte {exc.start})", field="policy"
        ) from None
    except yaml.YAMLError as exc:
        raise InvalidValueError(
            f"policy {source} is not valid YAML: {exc}", field="policy"
        ) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise InvalidValueError(
            f"policy {source} must be a mapping of keys, not {type(data).__name__}",
            field="policy",
        )
    return data


def _merge(base: dict[str, Any], extra: dict[str, Any], source: str) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if key == "rules":
            if not isinstance(value, list):
                raise InvalidValueError(f"policy {source}: rules must be a list", field="rules")
            ids = {r.get("id") for r in value if isinstance(r, dict)}
            kept = [r for r in merged.get("rules", []) if r.get("id") not in ids]
            merged["rules"] = kept + value
        elif isinstance(merged.get(key), list) and isinstance(value, list):
            merged[key] = merged[key] + [v for v in value if v not in merged[key]]
        elif isinstance(merged.get(key), dict) and isinstance(value, dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _build(texts: list[tuple[bytes, str]]) -> Policy:
    parsed = [_parse(raw, source) for raw, source in texts]
    data = parsed[0]
    for extra, (_, source) in zip(parsed[1:], texts[1:], strict=True):
        data = _merge(data, extra, source)
    sources = [source for _, source in texts]
    data = {**data, "sources": sources}
    from pydantic import ValidationError

    from noetic import cached

    try:
        policy: Policy = cached.validated(Policy, data)
    except ValidationError as exc:
        where, message = cached.first_error(exc)
        where = where or "(policy)"
        raise InvalidValueError(
            f"policy {', '.join(sources[1:])}: {where}: {message}", field=where
        ) from None
    known = set(parsed[0].get("structural", {})) | {r.id for r in policy.rules}
    unknown = sorted(set(policy.disable) - known)
    if unknown:
        raise InvalidValueError(
            f"policy {', '.join(sources[1:])}: disable names unknown rules: {', '.join(unknown)}",
            field="disable",
            fix=f"known rules: {', '.join(sorted(known))}",
        )
    return policy


@cache
def _builtin() -> Policy:
    return _load([])


def load_policy(*paths: Path) -> Policy:
    """The built-in policy extended by each file in ``paths``, in order. Files are read every
    time; what is built from them is cached by their content (:mod:`noetic.cached`)."""
    if not paths:
        return _builtin()
    return _load([(_raw(path), str(path)) for path in paths])


def _load(extra: list[tuple[bytes, str]]) -> Policy:
    from noetic import cached

    texts = [(BUILT_IN.read_bytes(), "built-in policy"), *extra]
    inputs = [Path(__file__).read_bytes()]
    for raw, source in texts:
        inputs += [source.encode("utf-8", "surrogateescape"), raw]
    return cached.load("shell-policy", inputs, lambda: _build(texts), (Match, Rule, Writer, Policy))
