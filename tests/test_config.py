"""config.toml, read in one place: every section's bad value named with the file, the section
and the field; unknown sections and keys named with the nearest known one; read once per
process and again when the file changes."""

from __future__ import annotations

import itertools
import os
import string
from pathlib import Path
from typing import Any

import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic import config
from noetic.errors import InvalidValueError

KNOWN = {
    "provider": ("default",),
    "outcomes": ("test_commands",),
    "gate": (
        "irreversible",
        "policy",
        "irreversible_rules",
        "protected",
        "max_failure_rate",
        "confidence",
    ),
    "calibration": ("decide_on",),
    "hooks": ("context_tokens",),
    "store": ("url", "files", "hnsw"),
}
READ = {
    "provider": lambda c: c.provider_default,
    "outcomes": lambda c: c.test_commands,
    "gate": lambda c: c.gate,
    "calibration": lambda c: c.calibration,
    "hooks": lambda c: c.context_tokens,
    "store": lambda c: c.store,
    "agent": lambda c: c.agent,
    "mcp_servers": lambda c: c.mcp_servers,
    "prices": lambda c: c.prices,
}
# Any value TOML can hold (no dates: a wrong type is a wrong type).
SCALARS = (
    st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=8)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=2)
    ),
    max_leaves=6,
)
_TICKS = itertools.count(10**18, 10**9)
fresh = settings(suppress_health_check=[HealthCheck.function_scoped_fixture])


def write(home: Path, data: dict[str, Any] | str) -> Path:
    path = home / "config.toml"
    text = data if isinstance(data, str) else tomlkit.dumps(data)
    path.write_text(text, encoding="utf-8")
    tick = next(_TICKS)  # each write a new modification time, however coarse the clock
    os.utime(path, ns=(tick, tick))
    return path


def failure(home: Path, section: str) -> InvalidValueError:
    with pytest.raises(InvalidValueError) as caught:
        READ[section](config.load(home))
    return caught.value


def valid(section: str, key: str, value: Any) -> bool:
    """The rule each key keeps, written out independently of config.py."""
    if isinstance(value, str) and key in ("test_commands", "policy", "irreversible_rules"):
        value = [value]
    strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
    if key == "default" or key == "url":
        return isinstance(value, str) if key == "default" else True
    if key in ("test_commands", "policy", "irreversible_rules"):
        return strings
    if key == "protected":
        listed = [value] if isinstance(value, str) else value
        return isinstance(listed, list) and all(
            isinstance(v, str) and v.strip() and v.startswith(("/", "~", "{workspace}"))
            for v in listed
        )
    if key == "irreversible":
        return value in ("ask", "deny", "allow")
    if key == "decide_on":
        return value in ("calibrated", "stated")
    if key in ("max_failure_rate", "confidence"):
        number = isinstance(value, int | float) and not isinstance(value, bool)
        return number and 0 < value < 1
    if key == "context_tokens":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 100
    return isinstance(value, bool)  # files, hnsw


@fresh
@given(
    st.sampled_from([(s, k) for s, keys in KNOWN.items() for k in keys]),
    VALUES,
)
def test_a_value_is_accepted_exactly_when_it_keeps_its_rule_and_else_named(tmp_path, where, value):
    section, key = where
    path = write(tmp_path, {section: {key: value}})
    if valid(section, key, value):
        READ[section](config.load(tmp_path))
        return
    error = failure(tmp_path, section)
    assert str(path) in error.message and f"[{section}] {key}" in error.message
    assert error.field == f"{section}.{key}"


@fresh
@given(
    st.sampled_from(sorted(KNOWN)),
    st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12),
)
def test_a_key_no_section_knows_is_named_with_the_nearest(tmp_path, section, key):
    path = write(tmp_path, {section: {key: 1}})
    if key in KNOWN[section]:
        return
    error = failure(tmp_path, section)
    assert error.message == f"{path}: [{section}] has no setting {key!r}"
    assert error.field == f"{section}.{key}" and error.fix is not None
    assert all(k in error.fix for k in KNOWN[section])


@pytest.mark.parametrize(
    ("section", "typo", "meant"),
    [
        ("gate", "irreversable", "irreversible"),
        ("hooks", "context_token", "context_tokens"),
        ("store", "hnws", "hnsw"),
        ("outcomes", "test_command", "test_commands"),
        ("provider", "defualt", "default"),
    ],
)
def test_a_misspelt_key_gets_a_did_you_mean(tmp_path, section, typo, meant):
    write(tmp_path, {section: {typo: "x"}})
    assert failure(tmp_path, section).fix.startswith(f"did you mean {meant!r}?")


@fresh
@given(st.text(alphabet=string.ascii_lowercase + "_", min_size=1, max_size=12))
def test_a_section_nobody_reads_is_an_error_wherever_the_file_is_read(tmp_path, name):
    path = write(tmp_path, {name: {"x": 1}})
    if name in config.SECTIONS:
        return
    with pytest.raises(InvalidValueError) as caught:
        config.load(tmp_path)
    assert caught.value.message == f"{path}: no section [{name}] is known"


def test_a_misspelt_section_is_named_with_the_one_meant(tmp_path):
    write(tmp_path, '[stor]\nurl = "postgresql://db/noetic"\n')
    with pytest.raises(InvalidValueError, match=r"no section \[stor\]") as caught:
        config.load(tmp_path)
    assert caught.value.fix.startswith("did you mean [store]?")


BAD = {
    "provider": ("[provider]\ndefault = 3\n", "[provider] default", "provider.default"),
    "prices": (
        '[prices."openai:m"]\ninput = -1\noutput = 2\n',
        '[prices."openai:m"] input',
        'prices."openai:m".input',
    ),
    "outcomes": ("[outcomes]\ntest_commands = [1]\n", "[outcomes] test_commands", None),
    "gate": ('[gate]\nirreversible = "sometimes"\n', "[gate] irreversible", "gate.irreversible"),
    "hooks": ("[hooks]\ncontext_tokens = 50\n", "[hooks] context_tokens", None),
    "calibration": (
        '[calibration]\ndecide_on = "always"\n',
        "[calibration] decide_on",
        None,
    ),
    "store": ('[store]\nfiles = "yes"\n', "[store] files", "store.files"),
    "agent": ("[agent.scrape]\nmax_bytes = 0\n", "[agent.scrape] max_bytes", None),
    "mcp_servers": ('[mcp_servers.docs]\ncommand = "uvx"\n', "[mcp_servers.docs] command", None),
}


@pytest.mark.parametrize("section", sorted(BAD))
def test_each_sections_bad_value_names_file_section_field_and_value(tmp_path, section):
    text, named, field = BAD[section]
    path = write(tmp_path, text)
    error = failure(tmp_path, section)
    assert error.message.startswith(f"{path}: {named} ")
    assert error.field == (field or named.replace("[", "").replace("] ", "."))
    assert error.message.endswith(f", not {error.value!r}")


def test_a_missing_price_is_named(tmp_path):
    path = write(tmp_path, '[prices."openai:m"]\ninput = 1\n')
    assert failure(tmp_path, "prices").message == f'{path}: [prices."openai:m"] output is missing'


def test_a_bad_section_stops_only_its_readers(tmp_path):
    write(tmp_path, "[hooks]\ncontext_tokens = 50\n[gate]\nirreversible = 'deny'\n")
    loaded = config.load(tmp_path)
    assert loaded.gate.irreversible == "deny"
    assert [p.field for p in config.problems(tmp_path)] == ["hooks.context_tokens"]


def test_doctor_lists_every_problem_the_file_has(tmp_path):
    path = write(
        tmp_path,
        "[hooks]\ncontext_tokens = 50\n[gate]\nirreversable = 'deny'\n[stor]\nurl = 'x'\n",
    )
    found = config.problems(tmp_path)
    assert [p.message for p in found] == [
        f"{path}: no section [stor] is known",
        f"{path}: [gate] has no setting 'irreversable'",
        f"{path}: [hooks] context_tokens must be a whole number of at least 100, not 50",
    ]
    write(tmp_path, "[gate\n")
    assert [p.message.split(": not valid TOML")[0] for p in config.problems(tmp_path)] == [
        str(path)
    ]


def test_the_file_is_read_once_and_again_when_it_changes(tmp_path):
    assert config.load(tmp_path).data == {}  # no file: the defaults
    write(tmp_path, "[hooks]\ncontext_tokens = 200\n")
    first = config.load(tmp_path)
    assert config.load(tmp_path) is first and first.context_tokens == 200
    write(tmp_path, "[hooks]\ncontext_tokens = 300\n")
    assert config.load(tmp_path).context_tokens == 300


def test_relative_gate_files_are_beside_the_config(tmp_path):
    write(tmp_path, '[gate]\npolicy = "p.yaml"\nirreversible_rules = ["/etc/r.yaml"]\n')
    gate = config.load(tmp_path).gate
    assert gate.policy == (tmp_path / "p.yaml",)
    assert gate.irreversible_rules == (Path("/etc/r.yaml"),)


def test_search_backends_keep_their_own_settings(tmp_path):
    write(tmp_path, '[agent.search]\nbackend = "mine"\napi_key_env = "X"\n')
    search = config.load(tmp_path).agent.search
    assert search.backend == "mine" and search.settings["api_key_env"] == "X"


def test_a_store_url_that_is_not_postgresql_names_the_file_and_the_value(tmp_path, monkeypatch):
    from noetic.store.location import store_url

    monkeypatch.delenv("NOETIC_STORE_URL", raising=False)
    path = write(tmp_path, '[store]\nurl = "mysql://me:secret@x/y"\n')
    with pytest.raises(InvalidValueError) as caught:
        store_url(tmp_path)
    assert caught.value.message.startswith(
        f"{path}: [store] url 'mysql://me:***@x/y' is not a PostgreSQL URL"
    )


def test_the_release_gate_and_the_calibration_settings_are_read(tmp_path):
    assert config.load(tmp_path).gate.max_failure_rate is None
    assert config.load(tmp_path).calibration.decide_on == "calibrated"
    write(tmp_path, "[gate]\nmax_failure_rate = 0.1\n[calibration]\ndecide_on = 'stated'\n")
    loaded = config.load(tmp_path)
    assert (loaded.gate.max_failure_rate, loaded.gate.confidence) == (0.1, 0.95)
    assert loaded.calibration.decide_on == "stated"
    path = write(tmp_path, "[gate]\nconfidence = 1\n")
    assert failure(tmp_path, "gate").message == (
        f"{path}: [gate] confidence must be a number between 0 and 1, not 1"
    )


def test_a_change_within_one_tick_of_the_clock_is_seen(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[hooks]\ncontext_tokens = 200\n")
    stamp = os.stat(path).st_mtime_ns
    assert config.load(tmp_path).context_tokens == 200
    path.write_text("[hooks]\ncontext_tokens = 300\n")  # same size, and the same time:
    os.utime(path, ns=(stamp, stamp))
    assert config.load(tmp_path).context_tokens == 300


_READER = """
import json, sys
from noetic.config import load
try:
    out = {"commands": list(load(sys.argv[1]).test_commands)}
except Exception as exc:
    out = {"error": str(exc)}
out["parser"] = "tomllib" in sys.modules
print(json.dumps(out))
"""


def _read_in_a_new_process(home: Path) -> dict[str, Any]:
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _READER, str(home)], capture_output=True,
                          text=True, check=True, timeout=120)  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout)
    return result


@pytest.mark.subprocess
def test_a_config_is_parsed_once_per_content_then_read_without_the_toml_parser(
    tmp_path, monkeypatch
):
    # the hooks and commands read config.toml in every process: its parse is kept (by content)
    # in noetic.cached's cache, so the next process reads it back without loading tomllib
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(tmp_path / "cache"))  # nothing kept before
    path = tmp_path / "config.toml"
    path.write_text('[outcomes]\ntest_commands = ["pytest"]\n')
    assert _read_in_a_new_process(tmp_path) == {"commands": ["pytest"], "parser": True}
    assert _read_in_a_new_process(tmp_path) == {"commands": ["pytest"], "parser": False}
    path.write_text('[outcomes]\ntest_commands = ["make test"]\n')  # a new content: parsed
    assert _read_in_a_new_process(tmp_path) == {"commands": ["make test"], "parser": True}
    path.write_text("[outcomes\n")
    for _ in range(2):  # an error is raised every time: nothing invalid was kept
        broken = _read_in_a_new_process(tmp_path)
        assert broken["parser"] is True
        assert broken["error"].startswith(f"{path}: not valid TOML"), broken
