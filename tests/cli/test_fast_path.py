"""The fast path (:mod:`noetic.cli.fast`) against typer: the same values for a command line.

Both read one declaration of each command (:mod:`noetic.cli.declared`), so what is left to
check is that they read it alike: typer's command takes exactly the declared parameters, and
the function both call takes them all; for any command line the fast path accepts, it produces
what typer would pass; anything else it leaves to typer, whose help and errors the user then
sees.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import import_module
from pathlib import Path
from typing import Any

import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from noetic.cli import declared, fast
from noetic.cli.application import COMMANDS, build

from ..conftest import uniform

NOETIC = str(Path(sys.executable).with_name("noetic"))


def click_command(name: str) -> Any:
    return typer.main.get_command(build(name)).commands[name]  # type: ignore[attr-defined]


def typer_params(name: str, args: list[str]) -> dict[str, Any]:
    """What typer passes to the command for ``args`` (after its own conversions)."""
    command = click_command(name)
    with command.make_context(name, list(args)) as ctx:
        return dict(ctx.params)


def function(name: str) -> Any:
    return getattr(import_module(declared.COMMANDS[name].module), name)


def fast_params(name: str, args: list[str]) -> dict[str, Any] | None:
    parsed = fast.parse([name, *args])
    if parsed is None:
        return None
    assert parsed[0] == name
    return {**declared.COMMANDS[name].defaults(), **parsed[1]}


@contextmanager
def environment(values: dict[str, str | None]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    try:
        for key, value in values.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@pytest.mark.parametrize("name", sorted(declared.COMMANDS))
def test_typer_builds_each_command_from_its_declaration(name: str) -> None:
    assert COMMANDS[name][:2] == ("noetic.cli.typer_commands", name)
    spec = declared.COMMANDS[name]
    params = click_command(name).params
    arguments = [p.name for p in params if p.param_type_name == "argument"]
    options = {
        p.name: (tuple(p.opts), tuple(p.secondary_opts), p.envvar, p.required, p.help)
        for p in params
        if p.param_type_name == "option"
    }
    assert tuple(arguments) == tuple(a.dest for a in spec.arguments)
    assert options == {
        o.dest: (o.flags, o.off_flags, o.envvar, o.required, o.help) for o in spec.options
    }
    # The function both parsers call takes exactly the declared parameters, none defaulted:
    # whichever parser ran, every value comes from the declaration.
    taken = taken_parameters(function(name))
    assert set(taken) == {*options, *arguments}
    if spec.module == "noetic.cli.workflow":
        assert all(default is inspect.Parameter.empty for default in taken.values())


def taken_parameters(fn: Callable[..., object]) -> dict[str, object]:
    """The parameters ``fn`` takes, each with its default: a ``**options: Unpack[Shared]``
    stands for the keys of the TypedDict ``Shared`` (none defaulted)."""
    taken: dict[str, object] = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            shared = getattr(sys.modules[fn.__module__], str(p.annotation)[len("Unpack[") : -1])
            taken |= dict.fromkeys(shared.__annotations__, inspect.Parameter.empty)
        else:
            taken[p.name] = p.default
    return taken


# What a command line can carry: no NUL (argv and the environment are C strings) and no lone
# surrogates (undecodable arguments are refused before parsing).
_VALUE = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs",), exclude_characters="\x00"),
    max_size=12,
)


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, list[str], dict[str, str | None]]:
    name = draw(st.sampled_from(sorted(declared.COMMANDS)))
    spec = declared.COMMANDS[name]
    tokens: list[list[str]] = []
    for opt in draw(st.lists(st.sampled_from(spec.options), max_size=6)):
        if opt.kind is bool:
            tokens.append([draw(st.sampled_from(opt.flags + opt.off_flags))])
            continue
        flag = draw(st.sampled_from(opt.flags))
        value = draw(_VALUE)
        if flag.startswith("--") and draw(st.booleans()):
            tokens.append([f"{flag}={value}"])
        else:
            tokens.append([flag, value])
    for _ in spec.arguments:
        tokens.append([draw(_VALUE)])
    order = draw(st.permutations(range(len(tokens))))
    args = [token for i in order for token in tokens[i]]
    env = {
        "NOETIC_AI_ID": draw(st.one_of(st.none(), st.just(""), _VALUE)),
        "NOETIC_SESSION": draw(st.one_of(st.none(), st.just(""), _VALUE)),
    }
    return name, args, env


@pytest.mark.slow
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(command_lines())
def test_what_the_fast_path_accepts_it_reads_as_typer_does(
    case: tuple[str, list[str], dict[str, str | None]],
) -> None:
    name, args, env = case
    with environment(env):
        ours = fast_params(name, args)
        if ours is None:
            return  # typer handles it
        assert ours == typer_params(name, args)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--vectors", '{"know": 0.8}', "--json"],
        ["check", "--vectors={}", "--store", "/tmp/x", "-s", "s_1"],
        ["preflight", "fix the parser", "--abandon-open", "--ai-id", "a"],
        ["preflight", "--no-abandon-open", "fix it", "--vectors-file", "scores.json"],
        ["investigate", "--note", "read the logs", "--tool", "grep", "--vector", "know"],
        ["bootstrap", "--profile", "balanced", "--project", "noetic", "--json"],
        ["postflight", "--vectors", "{}", "--provider", "default"],
        ["state"],
        ["hook", "post-tool-use"],
        ["hook", "session-start", "--store", ".noetic"],
        ["outcome", "--success", "--json"],
        ["outcome", "c_1", "--score", "0.25", "--evidence", "ci passed"],
        ["outcome", "--score=.5", "--from-junit", "report.xml", "--source", "test"],
        ["outcome", "--score", "+1e-1"],
    ],
)
def test_plain_workflow_invocations_take_the_fast_path(args: list[str]) -> None:
    ours = fast_params(args[0], args[1:])
    assert ours is not None
    assert ours == typer_params(args[0], args[1:])


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--help"],
        ["--version"],
        ["state", "--help"],
        ["check", "--bogus"],
        ["check", "--vectors"],  # no value
        ["check", "--json=yes"],  # a flag given a value
        ["check", "--vectors", "--json"],  # a value that looks like an option
        ["check", "--store", ""],
        ["check", "-s"],
        ["check", "-sabc"],  # click's clustered short option
        ["check", "--", "x"],
        ["preflight"],  # the task missing
        ["preflight", "a", "b"],  # one task too many
        ["investigate"],  # --note is required
        ["check", "stray"],
        ["stat"],  # typer suggests `state`
        ["hook"],  # the event missing
        ["sessions", "list"],
        ["calibration", "report"],
        ["outcome", "a", "b"],  # one target too many
        ["outcome", "--score", "inf"],  # a number only typer reads
        ["outcome", "--score", "1_000"],
        ["outcome", "--score", "½"],
    ],
)
def test_anything_unusual_is_left_to_typer(args: list[str]) -> None:
    assert fast.parse(args) is None


def test_the_lazily_built_application_has_every_command_and_only_the_one_run() -> None:
    full = typer.main.get_command(build())
    assert list(full.commands) == list(COMMANDS)  # type: ignore[attr-defined]
    only = typer.main.get_command(build("recall"))
    assert list(only.commands) == ["recall"]  # type: ignore[attr-defined]
    # A command's help is the same whichever way the application was built.
    for name in ("state", "recall", "sessions"):
        alone = typer.main.get_command(build(name)).commands[name]  # type: ignore[attr-defined]
        whole = full.commands[name]  # type: ignore[attr-defined]
        assert alone.get_help(typer.Context(alone)) == whole.get_help(typer.Context(whole))


def run(*args: str, cwd: Path, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [NOETIC, *args], cwd=cwd, capture_output=True, text=True, timeout=60, **kwargs
    )


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("NOETIC_HOME", str(tmp_path / "store"))
    monkeypatch.setenv("NOETIC_AI_ID", "fast")
    monkeypatch.delenv("NOETIC_SESSION", raising=False)
    return tmp_path


@pytest.mark.subprocess
def test_a_whole_task_through_the_installed_command(home: Path) -> None:
    vectors = json.dumps(uniform(0.8))
    boot = run("bootstrap", "--json", cwd=home)
    assert boot.returncode == 0, boot.stderr
    session = json.loads(boot.stdout)["session"]["id"]
    pre = run("preflight", "tidy the parser", "--vectors", vectors, "--json", cwd=home)
    assert pre.returncode == 0, pre.stderr
    assert json.loads(pre.stdout)["session_id"] == session
    check = run("check", f"--vectors={json.dumps({'know': 0.9})}", "--json", cwd=home)
    assert json.loads(check.stdout)["assessment"]["assessment"]["vectors"]["know"] == 0.9
    post = run("postflight", "--vectors", vectors, "--json", cwd=home)
    assert post.returncode == 0, post.stderr
    state = json.loads(run("state", "--json", cwd=home).stdout)
    assert state["session"]["id"] == session
    assert state["open_cascade"] is None  # the task was closed


@pytest.mark.subprocess
def test_errors_keep_their_exit_codes_and_messages(home: Path) -> None:
    # No store yet: Noetic's own error, exit 1, as JSON when asked.
    missing = run("check", "--vectors", "{}", "--json", cwd=home)
    assert missing.returncode == 1
    assert "no Noetic store here" in json.loads(missing.stdout)["error"]["message"]
    # A malformed command line: typer's message and exit 2.
    bogus = run("check", "--bogus", cwd=home)
    assert bogus.returncode == 2
    assert "No such option: --bogus" in bogus.stderr
    # Out-of-range scores: named, exit 1.
    assert run("bootstrap", cwd=home).returncode == 0
    bad = run("preflight", "t", "--vectors", '{"know": 7}', cwd=home)
    assert bad.returncode == 1
    assert "know" in bad.stderr


@pytest.mark.subprocess
def test_a_closed_pipe_ends_the_command_quietly(home: Path) -> None:
    assert run("bootstrap", cwd=home).returncode == 0
    proc = subprocess.Popen(
        [NOETIC, "state"], cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before anything is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) in (0, 1)
    assert "Traceback" not in err
