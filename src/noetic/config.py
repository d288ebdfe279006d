"""``<store>/config.toml``: one typed model of every section, read once per process (every
section and setting: the table in ``docs/configuration.md``; :data:`SECTIONS` in the code).

:func:`load` reads the file once per process and again only when its modification time, size
or inode changed (or its text, while it is young enough to have changed within one tick of the
file system's clock). Its shape is checked on every read: a file that is not TOML, or a section
Noetic does not know, is an error wherever the file is read (a misspelt ``[stor]`` would
otherwise leave a team writing to the wrong store). A section's values are checked when that
section is used, so a bad ``[prices]`` entry does not stop a hook, and ``noetic doctor``
checks them all (:meth:`Config.problems`). Every error is an :class:`InvalidValueError` naming
the file, the section and the field, the value given, and a key Noetic does not know is
named with the nearest one it does ("did you mean").

Standard library only: the hooks and the workflow commands read this file on their hot path.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cached_property
from pathlib import Path

from noetic.errors import InvalidValueError
from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Final


FILE_NAME: Final = "config.toml"
GATE_MODES: Final = ("ask", "deny", "allow")
DECIDE_ON: Final = ("calibrated", "stated")
DEFAULT_CONFIDENCE: Final = 0.95
DEFAULT_CONTEXT_TOKENS: Final = 1500
MIN_CONTEXT_TOKENS: Final = 100
DEFAULT_SCRAPE_BYTES: Final = 500_000
PRICE_KEYS: Final = ("input", "output", "cached_input", "cache_write")


class PriceEntry(NamedTuple):
    """USD per million tokens (``None``: the input price)."""

    input: float
    output: float
    cached_input: float | None = None
    cache_write: float | None = None


class GateConfig(NamedTuple):
    irreversible: str = "ask"
    policy: tuple[Path, ...] = ()
    irreversible_rules: tuple[Path, ...] = ()
    protected: tuple[str, ...] = ()
    max_failure_rate: float | None = None  # the release gate: off unless set
    confidence: float = DEFAULT_CONFIDENCE


class CalibrationConfig(NamedTuple):
    decide_on: str = "calibrated"


class StoreConfig(NamedTuple):
    url: str | None = None  # as written: noetic.store.location checks it is PostgreSQL's
    files: bool = False
    hnsw: bool = False


class SearchConfig(NamedTuple):
    backend: str | None = None
    settings: dict[str, Any] = {}  # noqa: RUF012 - the whole table, for the backend; never mutated


class ScrapeConfig(NamedTuple):
    enabled: bool = False
    max_bytes: int = DEFAULT_SCRAPE_BYTES


class AgentConfig(NamedTuple):
    search: SearchConfig = SearchConfig()
    scrape: ScrapeConfig = ScrapeConfig()


class _Section:
    """One table of the file, read key by key: each error names file, section and field."""

    def __init__(
        self, config: Config, parts: tuple[str, ...], keys: tuple[str, ...] | None
    ) -> None:
        self.path = config.path
        self.name = name = ".".join(p if p.isidentifier() else f'"{p}"' for p in parts)
        value: Any = config.data
        for part in parts:
            value = value.get(part, {}) if isinstance(value, dict) else value
        if not isinstance(value, dict):
            raise InvalidValueError(
                f"{self.path}: [{name}] must be a table",
                field=name,
                value=value,
                fix=f"write it as a [{name}] header with its keys below",
            )
        self.table: dict[str, Any] = value
        if keys is not None:
            for key in value:
                if key not in keys:
                    raise self.unknown(key, keys)

    def unknown(self, key: str, keys: tuple[str, ...]) -> InvalidValueError:
        return InvalidValueError(
            f"{self.path}: [{self.name}] has no setting {key!r}",
            field=f"{self.name}.{key}",
            value=key,
            fix=_known(key, keys, "{!r}"),
        )

    def error(self, key: str, problem: str, value: object, fix: str | None = None) -> Exception:
        return InvalidValueError(
            f"{self.path}: [{self.name}] {key} {problem}, not {value!r}",
            field=f"{self.name}.{key}",
            value=value,
            fix=fix,
        )

    def text(self, key: str) -> str | None:
        value = self.table.get(key)
        if value is not None and not isinstance(value, str):
            raise self.error(key, "must be a string", value)
        return value

    def flag(self, key: str) -> bool:
        value = self.table.get(key, False)
        if not isinstance(value, bool):
            raise self.error(key, "must be true or false", value)
        return value

    def strings(self, key: str, *, nonblank: bool = False) -> tuple[str, ...]:
        """A list of strings (one string counts as a list of one)."""
        value = self.table.get(key, [])
        listed = [value] if isinstance(value, str) else value
        if not isinstance(listed, list) or not all(
            isinstance(v, str) and (v.strip() or not nonblank) for v in listed
        ):
            raise self.error(key, "must be a list of strings", value, f'{key} = ["…", "…"]')
        return tuple(listed)

    def whole(self, key: str, default: int, minimum: int) -> int:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.error(key, f"must be a whole number of at least {minimum}", value)
        return value

    def fraction(self, key: str, default: float | None) -> float | None:
        """A number strictly between 0 and 1."""
        value = self.table.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
            raise self.error(key, "must be a number between 0 and 1", value, f"e.g. {key} = 0.1")
        return float(value)

    def choice(self, key: str, choices: tuple[str, ...], default: str) -> str:
        value = self.table.get(key, default)
        if value not in choices:
            raise self.error(key, f"must be {' or '.join(choices)}", value)
        return str(value)

    def amount(self, key: str, *, required: bool) -> float | None:
        if key not in self.table:
            if required:
                raise InvalidValueError(
                    f"{self.path}: [{self.name}] {key} is missing",
                    field=f"{self.name}.{key}",
                    fix=f"add {key} = … (USD per million tokens)",
                )
            return None
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 0:
            raise self.error(key, "must be a number of at least 0", value)
        return float(value)


def _known(given: str, known: tuple[str, ...], form: str) -> str:
    """The names Noetic knows, the nearest to ``given`` first when one is near
    (``form`` shows it)."""
    import difflib

    near = difflib.get_close_matches(given, known, n=1)
    hint = f"did you mean {form.format(near[0])}? " if near else ""
    return f"{hint}known: {', '.join(known) or 'none'}"


class Config:
    """One ``config.toml`` (``data`` is its TOML, empty when there is no file). Each section's
    model is built, and checked, the first time it is asked for."""

    def __init__(self, path: Path, data: dict[str, Any]) -> None:
        self.path = path
        self.data = data

    @property
    def home(self) -> Path:
        return self.path.parent

    def section(self, *parts: str, keys: tuple[str, ...] | None = None) -> _Section:
        """The table at ``parts`` (``"agent", "search"`` is ``[agent.search]``); with ``keys``,
        a key not among them is an error."""
        return _Section(self, parts, keys)

    @cached_property
    def provider_default(self) -> str | None:
        found = self.section("provider", keys=("default",)).text("default")
        return found.strip() if found is not None and found.strip() else None

    @cached_property
    def prices(self) -> dict[str, PriceEntry]:
        out: dict[str, PriceEntry] = {}
        for key in self.section("prices").table:
            provider, colon, model = key.partition(":")
            if not colon or not provider or not model:
                raise InvalidValueError(
                    f"{self.path}: [prices] key {key!r} is not provider:model",
                    field="prices",
                    value=key,
                    fix='e.g. [prices."anthropic:claude-sonnet-4-5"]',
                )
            entry = self.section("prices", key, keys=PRICE_KEYS)
            out[key] = PriceEntry(
                input=entry.amount("input", required=True) or 0.0,
                output=entry.amount("output", required=True) or 0.0,
                cached_input=entry.amount("cached_input", required=False),
                cache_write=entry.amount("cache_write", required=False),
            )
        return out

    @cached_property
    def outcomes_mentioned(self) -> bool:
        """Whether ``[outcomes] test_commands`` is there at all (an empty list is an answer)."""
        return "test_commands" in self.section("outcomes", keys=("test_commands",)).table

    @cached_property
    def test_commands(self) -> tuple[str, ...]:
        found = self.section("outcomes", keys=("test_commands",)).strings("test_commands")
        return tuple(c for c in found if c.strip())

    @cached_property
    def gate(self) -> GateConfig:
        keys = ("irreversible", "policy", "irreversible_rules", "protected", "max_failure_rate",
                "confidence")  # fmt: skip
        table = self.section("gate", keys=keys)
        mode = table.table.get("irreversible", "ask")
        if mode not in GATE_MODES:
            raise table.error("irreversible", "must be ask, deny or allow", mode)
        confidence = table.fraction("confidence", DEFAULT_CONFIDENCE)
        protected = table.strings("protected", nonblank=True)
        for pattern in protected:
            if not pattern.startswith(("/", "~", "{workspace}")):
                raise table.error(
                    "protected",
                    "holds path patterns that are absolute or start with ~ or {workspace}",
                    pattern,
                )
        return GateConfig(
            irreversible=mode,
            policy=self._files(table, "policy"),
            irreversible_rules=self._files(table, "irreversible_rules"),
            protected=protected,
            max_failure_rate=table.fraction("max_failure_rate", None),
            confidence=DEFAULT_CONFIDENCE if confidence is None else confidence,
        )

    @cached_property
    def calibration(self) -> CalibrationConfig:
        table = self.section("calibration", keys=("decide_on",))
        return CalibrationConfig(decide_on=table.choice("decide_on", DECIDE_ON, "calibrated"))

    def _files(self, table: _Section, key: str) -> tuple[Path, ...]:
        return tuple(
            Path(v) if os.path.isabs(v) else (self.home / v).expanduser()
            for v in table.strings(key)
        )

    @cached_property
    def context_tokens(self) -> int:
        table = self.section("hooks", keys=("context_tokens",))
        return table.whole("context_tokens", DEFAULT_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS)

    @cached_property
    def store(self) -> StoreConfig:
        table = self.section("store", keys=("url", "files", "hnsw"))
        url = table.table.get("url")
        return StoreConfig(url=url, files=table.flag("files"), hnsw=table.flag("hnsw"))

    @cached_property
    def agent(self) -> AgentConfig:
        self.section("agent", keys=("search", "scrape"))
        search = self.section("agent", "search")  # a backend's own settings are its to check
        scrape = self.section("agent", "scrape", keys=("enabled", "max_bytes"))
        return AgentConfig(
            search=SearchConfig(backend=search.text("backend"), settings=dict(search.table)),
            scrape=ScrapeConfig(
                enabled=scrape.flag("enabled"),
                max_bytes=scrape.whole("max_bytes", DEFAULT_SCRAPE_BYTES, 1),
            ),
        )

    @cached_property
    def mcp_servers(self) -> dict[str, tuple[str, ...]]:
        servers = {}
        for name in self.section("mcp_servers").table:
            entry = self.section("mcp_servers", name, keys=("command",))
            command = entry.table.get("command")
            if not (
                isinstance(command, list) and command and all(isinstance(c, str) for c in command)
            ):
                raise entry.error("command", "must be a non-empty list of strings", command)
            servers[name] = tuple(command)
        return servers

    def unknown_sections(self) -> list[InvalidValueError]:
        return [
            InvalidValueError(
                f"{self.path}: no section [{name}] is known",
                field=name,
                value=name,
                fix=_known(name, tuple(SECTIONS), "[{}]"),
            )
            for name in self.data
            if name not in SECTIONS
        ]

    def problems(self) -> list[InvalidValueError]:
        """Every problem in the file: each unknown section, then the first problem of each
        section (what ``noetic doctor`` shows)."""
        found = self.unknown_sections()
        for check in SECTIONS.values():
            try:
                check(self)
            except InvalidValueError as exc:
                found.append(exc)
        return found


#: Each section and what reads it in full.
SECTIONS: Final[dict[str, Callable[[Config], object]]] = {
    "provider": lambda c: c.provider_default,
    "prices": lambda c: c.prices,
    "outcomes": lambda c: c.test_commands,
    "gate": lambda c: c.gate,
    "calibration": lambda c: c.calibration,
    "hooks": lambda c: c.context_tokens,
    "store": lambda c: c.store,
    "agent": lambda c: c.agent,
    "mcp_servers": lambda c: c.mcp_servers,
}

_cache: dict[Path, tuple[tuple[int, int, int], str, Config]] = {}
#: A file modified this recently may change again within its clock's tick, keeping its time
#: and size: its text is compared too (git's "racily clean" entries).
RACY_NS: Final = 2_000_000_000


def config_path(home: Path | str) -> Path:
    return Path(home) / FILE_NAME


def load(home: Path | str) -> Config:
    """The configuration of the store directory ``home`` (empty when it has no config.toml),
    parsed once per process and again when the file changes; a file that cannot be read, is not
    TOML or has a section Noetic does not know is an :class:`InvalidValueError` naming it."""
    config = _read(config_path(home))
    unknown = config.unknown_sections()
    if unknown:
        raise unknown[0]
    return config


def problems(home: Path | str) -> list[InvalidValueError]:
    """Every problem in ``home``'s config.toml: that it cannot be read or parsed, else each
    unknown section and each section's first problem."""
    try:
        config = _read(config_path(home))
    except InvalidValueError as exc:
        return [exc]
    return config.problems()


def _read(path: Path) -> Config:
    import time

    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # no file there: nothing configured
        return Config(path, {})
    except OSError as exc:
        raise InvalidValueError(
            f"cannot read {path}: {exc.strerror or exc}", field="config", value=str(path)
        ) from None
    key = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = _cache.get(path)
    racy = cached is not None and time.time_ns() - st.st_mtime_ns <= RACY_NS
    if cached is not None and cached[0] == key and (not racy or _text(path) == cached[1]):
        return cached[2]
    _cache.pop(path, None)
    text = _text(path)
    config = Config(path, _parse(path, text))
    _cache[path] = (key, text, config)
    return config


def _text(path: Path) -> str:
    from noetic.untrusted import read_optional_text

    return read_optional_text(path) or ""


def _parse(path: Path, text: str) -> dict[str, Any]:
    """The file's TOML, parsed once per content (and Python) and kept in :mod:`noetic.cached`'s
    cache, so a command reads its configuration without loading the TOML parser; an error is
    raised every time, nothing invalid is kept."""
    import sys

    from noetic import cached

    inputs = [sys.version.encode(), text.encode("utf-8", "surrogatepass")]
    parsed: dict[str, Any] = cached.load("config-toml", inputs, lambda: _toml(path, text))
    return parsed


def _toml(path: Path, text: str) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InvalidValueError(
            f"{path}: not valid TOML: {exc}", field="config", value=str(path)
        ) from None
