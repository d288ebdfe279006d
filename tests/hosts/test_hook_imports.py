"""What the hooks a host runs on every tool call load: only what they use.

Claude Code starts ``noetic hook pre-tool-use`` before, and ``noetic hook post-tool-use`` after,
every Bash, Write and Edit call, each a fresh process, so what they import is most of what they
cost. Each runs here in a fresh interpreter with the JSON Claude Code sends, gives its answer,
and must leave none of the heavy packages in ``sys.modules``: the shell gate's policy and the
irreversible rules come from the cache (:mod:`noetic.cached`), the store's location is plain
data, and the store itself is opened only when a command needs it. SessionStart and a test
run's PostToolUse open the store without the tracker, building it only to open a new session
or to record an outcome. No timing is asserted.
"""

from __future__ import annotations

import fnmatch
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from noetic.hosts.hooks import irreversible

from .._modules import modules_loaded

HEAVY = (
    "pydantic",
    "pydantic_core",
    "yaml",
    "rich",
    "httpx",
    "psycopg",
    "mcp",
    "opentelemetry",
    "typer",
    "click",
    "jinja2",
    "numpy",
)
# nor typing, in any hook (≈2 ms of every start): Noetic imports its names for the type checker
# only, and tree-sitter's compiled module is loaded without the package's __init__, which does
LIGHT = (*HEAVY, "typing")
# what the two hooks on every tool call leave out besides: the standard library's dataclasses
# (and the inspect it brings) cost about 6 ms of a start that is 50 ms in all
PER_CALL = (*LIGHT, "dataclasses", "inspect", "threading")
SESSION = "0b7a2f4e-0000-4000-8000-0000000e1a01"


def hook(
    event: str, project: Path, watched: tuple[str, ...] = LIGHT, **extra: Any
) -> dict[str, Any]:
    """Run ``noetic hook EVENT`` in ``project`` the way Claude Code does; its exit code, its
    reply (None when it printed nothing) and the heavy modules it loaded."""
    body = {"session_id": SESSION, "cwd": str(project), **extra}
    report = modules_loaded(["hook", event], watched, project, stdin=json.dumps(body))
    stdout, stderr = report["output"]
    assert report["code"] == 0 and "noetic hook" not in stderr, report["output"]
    report["reply"] = json.loads(stdout) if stdout.strip() else None
    return report


def decision(report: dict[str, Any]) -> str | None:
    reply = report["reply"]
    return None if reply is None else reply["hookSpecificOutput"]["permissionDecision"]


@pytest.fixture
def gated(project: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("NOETIC_HOME", raising=False)  # the project's own store, as in a host
    monkeypatch.setenv("NOETIC_CACHE_DIR", str(home / "cache"))
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)  # traces are asked for: OpenTelemetry loads
    return project


@pytest.mark.subprocess
def test_the_hooks_on_every_tool_call_load_no_heavy_module(gated: Path) -> None:
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash"}
    hook("pre-tool-use", gated, **bash, tool_input={"command": "true"})  # builds the caches
    cases = [
        ({"command": "ls -la"}, None),
        ({"command": "rm -rf ~"}, "deny"),  # the shell gate
        ({"command": "git push origin main"}, "ask"),  # irreversible, no CHECK
    ]
    for tool_input, expected in cases:
        report = hook("pre-tool-use", gated, PER_CALL, **bash, tool_input=tool_input)
        assert decision(report) == expected, (tool_input, report["reply"])
        assert report["loaded"] == [], tool_input
    writes = [(str(gated / "notes.md"), None), (str(gated / ".git/hooks/pre-commit"), "deny")]
    for path, expected in writes:
        report = hook(
            "pre-tool-use", gated, PER_CALL, hook_event_name="PreToolUse", tool_name="Write",
            tool_input={"file_path": path, "content": "x"},
        )  # fmt: skip
        assert decision(report) == expected, (path, report["reply"])
        assert report["loaded"] == [], path
    after = hook(
        "post-tool-use", gated, PER_CALL, hook_event_name="PostToolUse", tool_name="Bash",
        tool_input={"command": "ls -la"}, tool_response={"stdout": "", "interrupted": False},
    )  # fmt: skip
    assert after["reply"] is None and after["loaded"] == []


@pytest.mark.subprocess
def test_a_users_policy_is_validated_once_then_read_from_the_cache(gated: Path) -> None:
    store = gated / ".noetic"
    store.mkdir()
    (store / "config.toml").write_text('[gate]\npolicy = ["mine.yaml"]\n')
    (store / "mine.yaml").write_text(
        "rules:\n  - id: no-make\n    reason: make is not run here\n"
        "    match:\n      - command: [make]\n"
    )
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash"}
    first = hook("pre-tool-use", gated, **bash, tool_input={"command": "make all"})
    assert "pydantic" in first["loaded"] and "yaml" in first["loaded"]  # built: validated
    again = hook("pre-tool-use", gated, **bash, tool_input={"command": "make all"})
    assert again["loaded"] == []
    assert again["reply"] == first["reply"]
    assert (
        "no-make: make is not run here"
        in again["reply"]["hookSpecificOutput"]["permissionDecisionReason"]
    )
    # an edited file is a new entry: validated again, and its error is the same every time
    (store / "mine.yaml").write_text("rules:\n  - id: Bad Id\n    reason: r\n    match: []\n")
    for _ in range(2):  # the gate cannot decide: it refuses, saying why, every time
        body = {"session_id": SESSION, "cwd": str(gated), **bash, "tool_input": {"command": "make"}}
        broken = modules_loaded(["hook", "pre-tool-use"], HEAVY, gated, stdin=json.dumps(body))
        reply = json.loads(broken["output"][0])["hookSpecificOutput"]
        assert reply["permissionDecision"] == "deny", reply
        reason = reply["permissionDecisionReason"]
        assert ".id: String should match pattern '^[a-z0-9][a-z0-9-]*$'" in reason, reason
        assert "yaml" in broken["loaded"]  # read again: nothing invalid was kept


_GLOB = st.text(alphabet="ab.-*?[]!^\\", max_size=6)


@given(_GLOB, _GLOB)
def test_the_irreversible_rules_match_program_names_as_fnmatch_does(
    name: str, pattern: str
) -> None:
    # a plain name is compared, not compiled: the same answer, without a regular expression
    assert irreversible._named(name, pattern) == fnmatch.fnmatchcase(name, pattern)


@pytest.mark.subprocess
def test_pre_tool_use_starts_no_git_and_loads_no_archive_module_once_kept(gated: Path) -> None:
    # what git says of the repository is kept while nothing it read changed: no `subprocess`
    # (so no git process); tree-sitter-bash's grammar without importlib.resources (tempfile,
    # shutil, zipfile)
    idle = ("subprocess", "importlib.resources", "tempfile", "shutil", "zipfile")
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash"}
    hook("pre-tool-use", gated, **bash, tool_input={"command": "true"})  # keeps git's answers
    for tool, tool_input in [
        ("Bash", {"command": "ls -la"}),
        ("Bash", {"command": "cp payload .git/hooks/pre-commit"}),
        ("Write", {"file_path": str(gated / "notes.md"), "content": "x"}),
    ]:
        body = {"session_id": SESSION, "cwd": str(gated), "hook_event_name": "PreToolUse",
                "tool_name": tool, "tool_input": tool_input}  # fmt: skip
        report = modules_loaded(["hook", "pre-tool-use"], idle, gated, stdin=json.dumps(body))
        assert report["code"] == 0, report["output"]
        assert report["loaded"] == [], (tool_input, report["output"])


_NAMES = st.text(alphabet="ab.-*?[]!^\\", max_size=5)


@given(_NAMES, st.lists(_NAMES, max_size=4))
def test_the_gate_matches_command_names_to_its_globs_as_fnmatch_does(
    name: str, patterns: list[str]
) -> None:
    from noetic.tools.shellgate import policy_lookups

    expected = any(fnmatch.fnmatchcase(name, p) for p in patterns)
    assert policy_lookups.names_fit(name, tuple(patterns)) == expected


@pytest.mark.subprocess
def test_a_write_is_judged_without_the_shell_parser(gated: Path) -> None:
    # a Write or Edit needs the policy's write rules and the protected set, not the parser, the
    # judge or the irreversible rules a Bash command needs
    unused = ("tree_sitter", "noetic.tools.shellgate.judge", "noetic.hosts.hooks.irreversible")
    for path, expected in [("notes.md", None), (".git/hooks/pre-commit", "deny"),
                           (".claude/settings.json", "ask")]:  # fmt: skip
        tool_input = {"file_path": str(gated / path), "content": "x"}
        body = {"session_id": SESSION, "cwd": str(gated), "hook_event_name": "PreToolUse",
                "tool_name": "Write", "tool_input": tool_input}  # fmt: skip
        report = modules_loaded(["hook", "pre-tool-use"], unused, gated, stdin=json.dumps(body))
        reply = json.loads(report["output"][0]) if report["output"][0].strip() else None
        got = None if reply is None else reply["hookSpecificOutput"]["permissionDecision"]
        assert got == expected, (path, reply)
        assert report["loaded"] == [], path


@pytest.mark.subprocess
def test_a_command_loads_only_the_checks_its_programs_need(gated: Path) -> None:
    # sed and awk programs, git aliases, code handed to an interpreter, one-line Python and the
    # agent's irreversible effects are loaded for a line that names them, not for `ls -la`
    checks = {
        "sed_awk": "noetic.tools.shellgate.sed_awk",
        "git_aliases": "noetic.tools.shellgate.git_aliases",
        "interpreters": "noetic.tools.shellgate.interpreters",
        "pycode": "noetic.tools.shellgate.pycode",
        "effects": "noetic.tools.shellgate.irreversible_effects",
    }
    bash = {"hook_event_name": "PreToolUse", "tool_name": "Bash"}
    hook("pre-tool-use", gated, **bash, tool_input={"command": "true"})  # builds the caches
    for command, needed in [
        ("ls -la", set()),
        ("sed -n 1p notes.md", {"sed_awk"}),
        ("git frobnicate", {"git_aliases"}),
        ("python3 -c 'print(1)'", {"interpreters", "pycode"}),
    ]:
        body = {
            "session_id": SESSION,
            "cwd": str(gated),
            **bash,
            "tool_input": {"command": command},
        }
        report = modules_loaded(
            ["hook", "pre-tool-use"], tuple(checks.values()), gated, stdin=json.dumps(body)
        )
        assert report["code"] == 0, report["output"]
        assert set(report["loaded"]) == {checks[n] for n in needed}, (command, report["loaded"])


VECTORS = {"engagement": 0.8, "know": 0.6, "do": 0.7, "context": 0.6, "clarity": 0.7,
           "coherence": 0.7, "signal": 0.6, "density": 0.4, "state": 0.6, "change": 0.6,
           "completion": 0.5, "impact": 0.6, "uncertainty": 0.3}  # fmt: skip


@pytest.mark.subprocess
def test_stop_and_session_end_open_the_store_without_pydantic(gated: Path) -> None:
    # Stop runs at the end of every turn: it reads the session and its open task from the store
    # (records are plain dataclasses) and loads no model, profile or tracker; so does SessionEnd,
    # which writes the session's end before it answers
    start = hook("session-start", gated, hook_event_name="SessionStart", source="startup")
    context = start["reply"]["hookSpecificOutput"]["additionalContext"]
    sid = context.split("Noetic session ", 1)[1].split(" ", 1)[0]
    opened = modules_loaded(
        ["preflight", "fix the bug", "--session", sid, "--vectors", json.dumps(VECTORS),
         "--json"], HEAVY, gated,
    )  # fmt: skip
    assert opened["code"] == 0, opened["output"]
    stop = hook("stop", gated, hook_event_name="Stop", stop_hook_active=False)
    assert stop["reply"]["decision"] == "block", stop["reply"]
    assert "'fix the bug'" in stop["reply"]["reason"] and sid in stop["reply"]["reason"]
    assert stop["loaded"] == []
    again = hook("stop", gated, hook_event_name="Stop", stop_hook_active=False)
    assert again["reply"] is None and again["loaded"] == []  # asked once per task
    end = hook("session-end", gated, hook_event_name="SessionEnd", reason="exit")
    assert end["loaded"] == []
    shown = modules_loaded(["sessions", "show", sid, "--json"], (), gated)
    assert shown["code"] == 0, shown["output"]
    assert json.loads(shown["output"][0])["session"]["status"] == "ended"


def _checkpoints_written(project: Path) -> list[tuple[str, str]]:
    """Where each compaction checkpoint is kept (git, sqlite) and its line with its time left
    out (it is the second it was written), in that order."""
    from noetic.store import Store
    from noetic.store.checkpoints import git_root, list_checkpoints

    with Store(project / ".noetic") as store:
        found = list_checkpoints(store, git_root(store.home))
    return sorted(
        (where.split(":")[0], cp.model_copy(update={"at": ""}).line())
        for where, cp in found
        if cp.phase == "compact"
    )


def _as_models_give_it(project: Path, sid: str, trigger: str) -> str:
    """The checkpoint the task's newest assessment makes when it is read back as models (the
    assessment and the decision, as :meth:`BaseStore.assessments` gives them)."""
    from noetic.store import Store
    from noetic.store.checkpoints import make_checkpoint

    with Store(project / ".noetic") as store:
        cascade = store.open_cascade_of(sid)
        assert cascade is not None
        last = store.assessments(cascade_id=cascade.id)[-1]
        made = make_checkpoint(
            sid, cascade.id, "compact", last.assessment.vectors, last.decision.action.value,
            None, f"before {trigger} compaction: {cascade.task}",
        )  # fmt: skip
    return made.model_copy(update={"at": ""}).line()


@pytest.mark.subprocess
def test_pre_compact_checkpoints_the_open_task_without_pydantic(gated: Path) -> None:
    # PreCompact reads the task's newest assessment as plain values and writes the checkpoint
    # as a plain record: the same line the assessment and decision models give, to SQLite
    # before the project's first commit and to the git notes after it
    start = hook("session-start", gated, hook_event_name="SessionStart", source="startup")
    context = start["reply"]["hookSpecificOutput"]["additionalContext"]
    sid = context.split("Noetic session ", 1)[1].split(" ", 1)[0]
    for args in (
        ["preflight", "fix the bug", "--vectors", json.dumps(VECTORS)],
        ["check", "--vectors", json.dumps({"know": 1, "context": 0.83, "uncertainty": 0.125})],
    ):
        done = modules_loaded([*args, "--session", sid, "--json"], (), gated)
        assert done["code"] == 0, done["output"]
    expected = _as_models_give_it(gated, sid, "auto")
    assert '"v":[0.8,1.0,0.7,0.83,' in expected and ",0.12]" in expected  # the CHECK carried
    # the checkpoint's git is spawned without subprocess (nor the threading it loads)
    spawned = (*LIGHT, "subprocess", "threading")
    compacted = hook("pre-compact", gated, spawned, hook_event_name="PreCompact", trigger="auto")
    assert compacted["reply"] is None and compacted["loaded"] == []
    assert _checkpoints_written(gated) == [("sqlite", expected)]
    assert (gated / ".noetic" / "hooks.log").exists() is False
    for git in (["config", "user.name", "t"], ["config", "user.email", "t@t"],
                ["commit", "-q", "--allow-empty", "-m", "first"]):  # fmt: skip
        subprocess.run(["git", *git], cwd=gated, check=True, capture_output=True)
    manual = hook("pre-compact", gated, spawned, hook_event_name="PreCompact", trigger="manual")
    assert manual["reply"] is None and manual["loaded"] == []
    from noetic.store.checkpoints import NOTES_REF

    notes = subprocess.run(
        ["git", "notes", "--ref", NOTES_REF, "show", "HEAD"],
        cwd=gated, check=True, capture_output=True, text=True,
    ).stdout.splitlines()  # fmt: skip
    assert len(notes) == 1
    assert _checkpoints_written(gated) == [
        ("git", _as_models_give_it(gated, sid, "manual")),
        ("sqlite", expected),
    ]


def _with_test_commands(project: Path) -> None:
    store = project / ".noetic"
    store.mkdir()
    (store / "config.toml").write_text('[outcomes]\ntest_commands = ["pytest"]\n')


@pytest.mark.subprocess
def test_session_start_builds_the_tracker_only_to_open_a_session(gated: Path) -> None:
    # a configuration that names its test commands is not looked for again; a resumed or
    # compacted Claude session keeps its Noetic session, read from the store alone; a new
    # session is opened by the tracker, which loads nothing heavy: its models are plain data
    _with_test_commands(gated)
    watched = (*LIGHT, "noetic.hosts.testing.detect", "noetic.runtime.tracker")
    start = {"hook_event_name": "SessionStart"}
    hook("session-start", gated, watched, **start, source="startup")  # builds the caches
    hook("session-end", gated, hook_event_name="SessionEnd", reason="exit")
    opened = hook("session-start", gated, watched, **start, source="startup")
    assert set(opened["loaded"]) <= {"noetic.runtime.tracker"}
    context = opened["reply"]["hookSpecificOutput"]["additionalContext"]
    sid = context.split("Noetic session ", 1)[1].split(" ", 1)[0]
    for source in ("resume", "compact"):
        kept = hook("session-start", gated, watched, **start, source=source)
        assert kept["reply"] == opened["reply"], source
        assert kept["loaded"] == [], source
    assert (gated / ".noetic" / "config.toml").read_text() == (
        '[outcomes]\ntest_commands = ["pytest"]\n'
    )
    assert f"Noetic session {sid} " in context
    # with an open task, its newest assessment is read as plain values, as the models give it
    for args in (
        ["preflight", "fix the bug", "--vectors", json.dumps(VECTORS)],
        ["check", "--vectors", json.dumps({"know": 0.95, "uncertainty": 0.05})],
    ):
        done = modules_loaded([*args, "--session", sid, "--json"], (), gated)
        assert done["code"] == 0, done["output"]
    resumed = hook("session-start", gated, watched, **start, source="resume")
    assert resumed["loaded"] == []
    from noetic.store import Store

    with Store(gated / ".noetic") as store:
        task = store.open_cascade_of(sid)
        assert task is not None
        last = store.assessments(cascade_id=task.id)[-1]
    line = (
        f"Open task: fix the bug (last {last.assessment.phase.value.upper()}: "
        f"{last.decision.action.value} at confidence {last.decision.confidence:.2f}); "
        "finish it with a POSTFLIGHT."
    )
    assert line.startswith("Open task: fix the bug (last CHECK: ")
    assert line in resumed["reply"]["hookSpecificOutput"]["additionalContext"].splitlines()


@pytest.mark.subprocess
def test_a_test_run_is_recorded_through_the_store_alone(gated: Path) -> None:
    # PostToolUse after a configured test run: with no open task it reads so from the SQLite
    # file (no store, no dataclasses) and writes why to hooks.log; with one it records the
    # outcome through the store, not the tracker (the calibration, and nothing heavy: its
    # results are plain data)
    _with_test_commands(gated)
    start = hook("session-start", gated, hook_event_name="SessionStart", source="startup")
    context = start["reply"]["hookSpecificOutput"]["additionalContext"]
    sid = context.split("Noetic session ", 1)[1].split(" ", 1)[0]
    ran = {"hook_event_name": "PostToolUse", "tool_name": "Bash",
           "tool_input": {"command": "pytest -q"},
           "tool_response": {"stdout": "1 passed", "stderr": "", "interrupted": False}}  # fmt: skip
    watched = (*LIGHT, "noetic.runtime.tracker", "noetic.calibration.learning")
    light = (*PER_CALL, *watched, "noetic.store.base")
    idle = hook("post-tool-use", gated, light, **ran)
    assert idle["reply"] is None and idle["loaded"] == []
    log = (gated / ".noetic" / "hooks.log").read_text()
    assert f"`pytest -q` not recorded: session {sid} has no open task" in log
    stranger = hook("post-tool-use", gated, light, **ran, session_id="a-claude-session-not-seen")
    assert stranger["reply"] is None and stranger["loaded"] == []
    log = (gated / ".noetic" / "hooks.log").read_text().splitlines()
    assert log[-1].endswith(
        "`pytest -q` not recorded: no Noetic session for this Claude Code session "
        "(did the SessionStart hook run?)"
    )
    opened = modules_loaded(
        ["preflight", "fix the bug", "--session", sid, "--vectors", json.dumps(VECTORS),
         "--json"], (), gated,
    )  # fmt: skip
    assert opened["code"] == 0, opened["output"]
    cascade = json.loads(opened["output"][0])["cascade"]["id"]
    recorded = hook("post-tool-use", gated, watched, **ran)
    assert recorded["reply"] is None
    assert set(recorded["loaded"]) <= {"noetic.calibration.learning"}
    from noetic.calibration import list_outcomes
    from noetic.store import Store

    with Store(gated / ".noetic") as store:
        [outcome] = list_outcomes(store)
    assert (outcome.cascade_id, outcome.score, outcome.source) == (cascade, 1.0, "test")
    assert outcome.evidence == "`pytest -q` exited 0 (Claude Code Bash)"


@pytest.mark.subprocess
def test_the_hooks_on_prompts_subagents_and_host_events_load_no_heavy_module(gated: Path) -> None:
    # UserPromptSubmit runs before every prompt, the subagent hooks around every subagent, and
    # the host's reports (a permission denied, a failed turn, a task completed) as they come:
    # each is a fresh process that reads or writes the store alone
    start = hook("session-start", gated, hook_event_name="SessionStart", source="startup")
    sid = start["reply"]["hookSpecificOutput"]["additionalContext"].split("Noetic session ")[1]
    opened = modules_loaded(
        ["preflight", "fix the bug", "--session", sid.split(" ", 1)[0], "--vectors",
         json.dumps(VECTORS), "--json"], HEAVY, gated,
    )  # fmt: skip
    assert opened["code"] == 0, opened["output"]
    runs = [
        hook("user-prompt-submit", gated, PER_CALL, hook_event_name="UserPromptSubmit",
             prompt="go on"),
        hook("subagent-start", gated, PER_CALL, hook_event_name="SubagentStart", agent_id="a-1",
             agent_type="reviewer"),
        hook("subagent-stop", gated, PER_CALL, hook_event_name="SubagentStop", agent_id="a-1",
             agent_type="reviewer", stop_hook_active=False, last_assistant_message="done"),
        hook("permission-denied", gated, PER_CALL, hook_event_name="PermissionDenied",
             tool_name="Bash", reason="denied by the user"),
        hook("stop-failure", gated, PER_CALL, hook_event_name="StopFailure",
             error="overloaded_error"),
        hook("task-completed", gated, PER_CALL, hook_event_name="TaskCompleted", task_id="1",
             task_subject="x"),
    ]  # fmt: skip
    assert [r["loaded"] for r in runs] == [[]] * len(runs)
    assert runs[-1]["reply"]["decision"] == "block"  # the open task asks for its POSTFLIGHT
