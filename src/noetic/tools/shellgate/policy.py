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
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from noetic.errors import InvalidValueError

STRUCTURAL = (
    "unparseable",
    "too-complex",
    "dynamic-command",
    "eval",
    "interpreter-code",
    "pipe-to-interpreter",
    "download-execute",
    "destructive-root",
    "destructive-home",
    "write-outside-workspace",
    "device-write",
    "dynamic-path",
    "fork-bomb",
    "program-exec",
    "package-index",
    "secret-to-network",
    "unknown-program",
)


def regular_expressions(patterns: tuple[str, ...]) -> tuple[str, ...]:
    """``patterns`` if each compiles; else the first that does not, named in the error."""
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"bad regular expression {pattern!r}: {exc}") from None
    return patterns


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Match(_Strict):
    """One way a rule can fit a command (see the comment above ``rules`` in policy.yaml)."""

    command: tuple[str, ...] = ()
    subcommand: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    arguments: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    access: Literal["read", "write"] = "read"
    variables: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()

    @field_validator("arguments")
    @classmethod
    def _regexes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return regular_expressions(value)

    def model_post_init(self, _: Any) -> None:
        kinds = sum(bool(k) for k in (self.command, self.paths, self.variables))
        if kinds != 1:
            raise ValueError("a match names exactly one of command, paths or variables")


class Rule(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    reason: str
    match: tuple[Match, ...] = Field(min_length=1)


class Writer(_Strict):
    paths: Literal["all", "last", "after-first", "none"] = "all"
    options: tuple[str, ...] = ()
    when: tuple[str, ...] = ()


class Policy(_Strict):
    """The whole policy the gate applies; build it with :func:`load_policy`."""

    version: int = 1
    network: bool = False
    shell: str | None = None
    environment: tuple[str, ...] = ()
    allow_interpreters: tuple[str, ...] = ()
    writable: tuple[str, ...] = ()
    interpreters: dict[str, tuple[str, ...]] = {}
    interpreter_values: dict[str, tuple[str, ...]] = {}
    shells: tuple[str, ...] = ()
    sandbox_contains: tuple[str, ...] = ()
    runs: dict[str, tuple[str, ...]] = {}
    programs: dict[str, Literal["sed", "awk"]] = {}
    git_exec_keys: tuple[str, ...] = ()
    package_indexes: tuple[str, ...] = ()
    index_options: dict[str, tuple[str, ...]] = {}
    index_variables: tuple[str, ...] = ()
    network_clients: tuple[str, ...] = ()
    evaluators: tuple[str, ...] = ()
    inert: tuple[str, ...] = ()
    judged_alone: tuple[str, ...] = ()
    runner_subcommands: dict[str, tuple[str, ...]] = {}
    recursive_readers: dict[str, tuple[str, ...]] = {}
    opaque_runs: dict[str, tuple[str, ...]] = {}
    wrappers: dict[str, tuple[str, ...]] = {}
    downloaders: tuple[str, ...] = ()
    writers: dict[str, Writer] = {}
    structural: dict[str, str] = {}
    rules: tuple[Rule, ...] = ()
    disable: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()

    def enabled(self, rule: str) -> bool:
        return rule not in self.disable

    def reason(self, rule: str) -> str:
        if rule in self.structural:
            return self.structural[rule]
        found = next((r for r in self.rules if r.id == rule), None)
        return found.reason if found else rule


def _read(path: Path | None) -> tuple[dict[str, Any], str]:
    if path is None:
        text = resources.files("noetic.tools.shellgate").joinpath("policy.yaml").read_text()
        return yaml.safe_load(text), "built-in policy"
    source = str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InvalidValueError(f"no policy file {source}", field="policy", value=source) from None
    except OSError as exc:
        raise InvalidValueError(f"cannot read policy {source}: {exc}", field="policy") from None
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
    return data, source


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


@cache
def _builtin() -> Policy:
    data, source = _read(None)
    return Policy.model_validate({**data, "sources": [source]})


def load_policy(*paths: Path) -> Policy:
    """The built-in policy extended by each file in ``paths``, in order."""
    if not paths:
        return _builtin()
    data, source = _read(None)
    sources = [source]
    for path in paths:
        extra, source = _read(path)
        data = _merge(data, extra, source)
        sources.append(source)
    data["sources"] = sources
    try:
        policy = Policy.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(str(p) for p in err["loc"]) or "(policy)"
        raise InvalidValueError(
            f"policy {', '.join(sources[1:])}: {where}: {err['msg']}", field=where
        ) from None
    known = set(STRUCTURAL) | {r.id for r in policy.rules}
    unknown = sorted(set(policy.disable) - known)
    if unknown:
        raise InvalidValueError(
            f"policy {', '.join(sources[1:])}: disable names unknown rules: {', '.join(unknown)}",
            field="disable",
            fix=f"known rules: {', '.join(sorted(known))}",
        )
    return policy
