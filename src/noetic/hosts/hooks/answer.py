"""What each ``noetic hook <event>`` does with the JSON a host sends on stdin.

Claude Code runs one command per hook event and reads its stdout as JSON. Each Claude Code
session is its own agent in the store (``claude-code:<session_id>``, using the per-agent current
sessions of :mod:`noetic.store.current`), so sub-agents and parallel sessions in one project
never act on each other's session; the sessions themselves are recorded as ``ai_id``
``claude-code`` so calibration reads them together. What each event does is the table in
``docs/claude-code.md``; the PreToolUse gate is :mod:`noetic.hosts.hooks.pretool`.

The store, the workspace and the gate's configuration come from the project root
(:func:`~noetic.hosts.hooks.shared.project_root`: the server's project,
``$CLAUDE_PROJECT_DIR``), never from a ``.noetic`` below it, which the agent could make; the
helpers every handler shares live in :mod:`~noetic.hosts.hooks.shared`. These functions raise
on failure; the command around them (``noetic.cli.hooks``) logs to ``<store>/hooks.log`` and
exits 0, so Noetic never stands in the agent's way — except ``pre-tool-use``, which answers
``deny`` naming what failed (:func:`noetic.hosts.hooks.pretool.guarded_pre_tool_use`): an error
the agent can cause must not open the gate.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path

from noetic.hosts.hooks.shared import (
    AI_ID,
    agent_key,
    locate,
    log_failure,
    note,
    one_line,
    outside_project,
    project_dir,
    project_root,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


EVENTS = (
    "session-start",
    "user-prompt-submit",
    "pre-tool-use",
    "pre-compact",
    "stop",
    "post-tool-use",
    "session-end",
    "subagent-start",
    "subagent-stop",
    "task-completed",
    "permission-denied",
    "stop-failure",
)
# Recent tasks read for the SessionStart context; the budget usually stops well before.
RECENT_TASKS = 50
_EXIT_CODE = re.compile(r"exit(?:ed with)? code:? *(\d+)", re.IGNORECASE)


def run_hook(
    event: str,
    payload: dict[str, Any],
    *,
    store: Path | None = None,
    project: Path | None = None,
) -> dict[str, Any] | None:
    """Handle one hook event; the reply to print as JSON, or None to print nothing.

    ``project`` is the server's project for an http hook: a payload whose ``cwd`` lies outside
    it is refused (PreToolUse: ``deny``; any other event: an error, logged)."""
    from noetic.errors import InvalidValueError

    if event not in EVENTS:
        raise InvalidValueError(
            f"unknown hook event {event!r}", field="event", fix=f"one of: {', '.join(EVENTS)}"
        )
    if event == "pre-tool-use":
        from noetic.hosts.hooks.pretool import guarded_pre_tool_use

        reply = guarded_pre_tool_use(payload, store=store, project=project)
        try:  # the answer stands whatever happens here: it was given failing closed
            location = locate(payload, store, project)
        except Exception:
            return reply
    else:
        refused = outside_project(payload, project) if project is not None else None
        if refused is not None:
            raise InvalidValueError(refused, field="cwd")
        location = locate(payload, store, project)
        reply = _answer(event, payload, location, project)
    from noetic.runtime.telemetry import enabled

    if enabled() and location.exists:
        from noetic.hosts.hooks.session_trace import observe

        try:
            observe(event, payload, location.home, reply)
        except Exception as exc:
            if event != "pre-tool-use":
                raise
            log_failure(event, payload, store, exc, project)  # the gate's answer stands
    return reply


def _answer(
    event: str, payload: dict[str, Any], location: Any, project: Path | None
) -> dict[str, Any] | None:
    if event == "session-start":
        return session_start(location, payload, project)
    if not location.exists:
        return None  # no store in this project yet: nothing to act on
    if event == "user-prompt-submit":
        return user_prompt_submit(location)
    if event == "post-tool-use":
        post_tool_use(location, payload, project)
        return None
    if event == "stop" and payload.get("stop_hook_active") is True:
        return None  # Claude Code is already continuing because of a stop hook
    from noetic.runtime.opening import remembered_session
    from noetic.store import open_store

    # the store alone, without the tracker: no profiles and no models
    with open_store(location.home, create=True) as store:
        sid = remembered_session(store, agent_key(payload))
        if sid is None:
            return None
        if event in ("stop", "task-completed"):
            return stop(store, sid, payload)
        if event == "pre-compact":
            pre_compact(store, sid, payload)
        elif event == "subagent-start":
            subagent_start(store, sid, payload)
        elif event == "subagent-stop":
            subagent_stop(store, sid, payload)
        elif event in ("permission-denied", "stop-failure"):
            host_event(store, sid, event, payload)
        else:
            store.end_session(sid)
        return None


def user_prompt_submit(location: Any) -> dict[str, Any] | None:
    """The agent's record as context for the prompt it is about to answer; None before it has
    outcomes. It runs before every prompt, so a local store is read with the standard library's
    sqlite3 alone (read-only, one row); a PostgreSQL store through the store."""
    from noetic.calibration.record import line_from
    from noetic.store import reads

    if location.url is None:
        body = reads.newest_map_body_in(location.home, AI_ID)
    else:
        from noetic.store import open_store

        with open_store(location.home, url=location.url) as store:
            body = reads.newest_map_body(store, AI_ID)
    line = line_from(body)
    if line is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": line}}


# session-start -------------------------------------------------------------------------------


def _project_name(location: Any, payload: dict[str, Any], project: Path | None) -> str | None:
    from noetic.errors import InvalidValueError
    from noetic.untrusted import check_identifier

    root = location.git_root or project_root(payload, project)
    try:
        return check_identifier(root.resolve().name, "project")
    except InvalidValueError:
        return None


def session_start(
    location: Any, payload: dict[str, Any], project: Path | None = None
) -> dict[str, Any]:
    """Open (or keep) this Claude session's Noetic session and answer the context. The tracker
    (profiles, models) is built only to open a new session: a resumed one is read from the
    store alone."""
    from noetic.config import load
    from noetic.runtime.opening import remembered_session
    from noetic.store import open_store
    from noetic.store.current import write_current_session

    with open_store(location.home, create=True) as store:
        key = agent_key(payload)
        sid = remembered_session(store, key)
        session = store.get_session(sid) if sid else None
        if session is None or session.status != "active":
            from noetic.runtime.opening import tracker_over

            model = payload.get("model")
            session, _ = tracker_over(store).bootstrap(
                ai_id=AI_ID,
                ai_model=model if isinstance(model, str) and model.strip() else None,
                project=_project_name(location, payload, project),
            )
            write_current_session(store.home, session.id, key)
        _export_env(session.id)
        _find_test_commands(store.home, payload, project)
        text = session_context(store, session, load(store.home).context_tokens)
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": text}}


def _find_test_commands(home: Path, payload: dict[str, Any], project: Path | None) -> None:
    """Outcomes by default: a store whose configuration does not mention ``test_commands``
    (set up with ``--scope user``, or before setup looked) gets the project's, once found.
    A configuration that mentions them is left as it is, without looking at the project."""
    from noetic.config import load

    if load(home).outcomes_mentioned:
        return
    from noetic.hosts.testing.detect import test_setup, with_test_commands

    found = test_setup(project_root(payload, project), home)
    if found.kept is not None or not found.found:
        return
    path = home / "config.toml"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    from noetic.store.derived_files import atomic_write_bytes

    atomic_write_bytes(path, with_test_commands(text, found.commands).encode("utf-8"))
    note(home, "session-start", f"test commands found and written to {path}: "
         + ", ".join(f"{f.command} ({f.because})" for f in found.found))  # fmt: skip


def _export_env(session_id: str) -> None:
    """Pin the session for the shell commands Claude Code runs next (``$CLAUDE_ENV_FILE``)."""
    path = os.environ.get("CLAUDE_ENV_FILE")
    if path:
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(f"export NOETIC_SESSION={session_id}\n")


def estimate_tokens(text: str) -> int:
    """A cautious token estimate with no tokenizer to load: half a token per UTF-8 byte (real
    tokenizers average three to four bytes per token on English, one per digit)."""
    return (len(text.encode("utf-8")) + 1) // 2


def session_context(store: Any, session: Any, budget: int) -> str:
    """The SessionStart context: the session and how to use it, the open task, then the
    project's earlier tasks, newest first, as many as the budget holds."""
    head = [
        "# Noetic",
        f"Noetic session {session.id} is open for you (profile {session.profile}"
        + (f", project {session.project}" if session.project else "")
        + f'). Pass session_id="{session.id}" to Noetic\'s tools; shell commands have it in '
        "$NOETIC_SESSION.",
        "Before a non-trivial task: execute_preflight, then submit_preflight_assessment with "
        "honest scores. After it: execute_postflight, then submit_postflight_assessment.",
    ]
    from noetic.calibration.record import record_line

    mine = record_line(store, session.ai_id)
    if mine is not None:
        head.append(mine)
    open_task = store.open_cascade_of(session.id)
    if open_task is not None:
        from noetic.store.reads import newest_decision

        last = newest_decision(store, open_task.id)  # plain values: no model is built
        line = f"Open task: {open_task.task}"
        if last is not None:
            phase, action, confidence = last
            line += f" (last {phase.upper()}: {action} at confidence {confidence:.2f})"
        head.append(line + "; finish it with a POSTFLIGHT.")
    text = "\n".join(head)
    if estimate_tokens(text) > budget:  # cut to the budget, at a character's boundary
        return text.encode("utf-8")[: max(0, budget * 2 - 2)].decode("utf-8", errors="ignore")
    earlier = _earlier_tasks(store, session)
    if earlier:
        title = "## Earlier tasks" + (f" in {session.project}" if session.project else "")
        title += " (newest first: calibration, confidence before → after, outcome)"
        lines = [title]
        for row in earlier:
            candidate = "\n".join([text, *lines, row])
            if estimate_tokens(candidate) > budget:
                break
            lines.append(row)
        if len(lines) > 1:
            text = "\n".join([text, *lines])
    return text


def _earlier_tasks(store: Any, session: Any) -> list[str]:
    from noetic.store.reads import earlier_tasks

    out = []
    for r in earlier_tasks(store, session.project, RECENT_TASKS):
        outcome = "no outcome" if r.outcome is None else f"outcome {r.outcome:.2f}"
        line = (
            f"- {one_line(r.task, 160)} [{r.calibration}; "
            f"{r.confidence_pre:.2f} → {r.confidence_post:.2f}; {outcome}]"
        )
        if r.notes:
            line += f" learned: {one_line(r.notes, 200)}"
        out.append(line)
    return out


# pre-compact ---------------------------------------------------------------------------------


def pre_compact(store: Any, sid: str, payload: dict[str, Any]) -> str | None:
    """Checkpoint the open task before the host compacts the conversation; where it went (the
    git notes of the repository holding the store, as the tracker's checkpoints, else SQLite).
    The task's newest assessment is read as plain values, so no model is built."""
    from noetic.store.checkpoints import (
        git_root,
        last_assessment,
        make_checkpoint,
        write_checkpoint,
    )

    cascade = store.open_cascade_of(sid)
    if cascade is None:
        return None
    last = last_assessment(store, cascade.id)
    if last is None:
        return None
    vectors, action = last
    trigger = payload.get("trigger") if payload.get("trigger") in ("manual", "auto") else "auto"
    why = f"before {trigger} compaction: {cascade.task}"
    checkpoint = make_checkpoint(sid, cascade.id, "compact", vectors, action, None, why)
    # git finds the repository from the store's folder as it appends: one git process (a
    # PostgreSQL store's folder may not exist: then from the nearest folder that does)
    repo = store.home if store.home.is_dir() else git_root(store.home)
    return str(write_checkpoint(store, checkpoint, repo))


# stop ----------------------------------------------------------------------------------------


def stop(store: Any, sid: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """Ask for the POSTFLIGHT of a still-open task, once per task."""
    if payload.get("stop_hook_active") is True:
        return None
    cascade = store.open_cascade_of(sid)
    if cascade is None:
        return None
    from noetic.store.current import current_session_path

    path = store.home / "hooks" / current_session_path(store.home, agent_key(payload)).name
    asked: list[str] = []
    with contextlib.suppress(FileNotFoundError, ValueError):
        loaded = json.loads(path.read_text(encoding="utf-8"))
        asked = [x for x in loaded.get("asked_postflight", []) if isinstance(x, str)]
    if cascade.id in asked:
        return None
    from noetic.store.derived_files import atomic_write_json

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_json(path, {"asked_postflight": [*asked[-99:], cascade.id]})
    return {
        "decision": "block",
        "reason": (
            f"Noetic: the task {cascade.task!r} (session {sid}) is still open. If the work is "
            "done, record the POSTFLIGHT now: execute_postflight, then "
            "submit_postflight_assessment with an honest reassessment of all 13 vectors "
            "(or `noetic postflight` in the shell). If it is not done, say so and stop; you "
            "will not be asked again for this task."
        ),
    }


# subagents and what else the host reports ------------------------------------------------------

_AGENT_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,200}$")


def _subagent(payload: dict[str, Any]) -> tuple[str, str] | None:
    """The subagent's id and type from a SubagentStart/SubagentStop payload (None: no id)."""
    agent = payload.get("agent_id")
    if not isinstance(agent, str) or not _AGENT_ID.match(agent):
        return None
    kind = payload.get("agent_type")
    return agent, one_line(kind, 80) if isinstance(kind, str) and kind.strip() else "subagent"


def subagent_start(store: Any, sid: str, payload: dict[str, Any]) -> None:
    """A subagent gets a task of its own in the session, under the task open when it started
    (``result.parent``): its test runs are outcomes of its task until SubagentStop ends it."""
    found = _subagent(payload)
    if found is None:
        return
    agent, kind = found
    if any(c.result.get("agent_id") == agent for c in store.cascades(sid) if c.status == "open"):
        return  # resumed: it has its task already
    parent = store.open_cascade_of(sid)
    store.open_cascade(
        sid,
        f"subagent {kind} ({agent})",
        profile=store.get_session(sid).profile,
        result={"subagent": kind, "agent_id": agent, "parent": parent.id if parent else None},
    )


def subagent_stop(store: Any, sid: str, payload: dict[str, Any]) -> None:
    """The subagent's task ends, with the subagent's last message as its result."""
    found = _subagent(payload)
    if found is None:
        return
    agent, _ = found
    for task in store.cascades(sid):
        if task.status == "open" and task.result.get("agent_id") == agent:
            last = payload.get("last_assistant_message")
            result = dict(task.result)
            if isinstance(last, str) and last.strip():
                result["last_message"] = last[:4000]
            store.finish_cascade(task.id, "completed", result)


def host_event(store: Any, sid: str, event: str, payload: dict[str, Any]) -> None:
    """Claude Code's PermissionDenied and StopFailure, kept on the open task as events (the
    task page lists them); neither is an outcome of the task."""
    from noetic.events import Event, EventKind, HostReported

    name = "PermissionDenied" if event == "permission-denied" else "StopFailure"
    tool = payload.get("tool_name")
    detail = next(
        (payload[k] for k in ("reason", "error", "message") if isinstance(payload.get(k), str)),
        "",
    )
    open_task = store.open_cascade_of(sid)
    reported = HostReported(
        host="Claude Code",
        event=name,
        tool=tool if isinstance(tool, str) else None,
        detail=one_line(detail, 500) if detail else "",
    )
    store.append_event(
        Event(
            kind=EventKind.HOST_EVENT,
            engine="claude-code",
            session_id=sid,
            cascade_id=open_task.id if open_task else None,
            data=reported.model_dump(),
        )
    )


# post-tool-use -------------------------------------------------------------------------------


def exit_status(payload: dict[str, Any]) -> int | None:
    """The exit status of the Bash command the payload reports; None when it did not finish."""
    response = payload.get("tool_response")
    if isinstance(response, dict):
        for key in ("exit_code", "exitCode", "returnCode", "code"):
            value = response.get(key)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        if response.get("interrupted") is True:
            return None
    if payload.get("hook_event_name") == "PostToolUseFailure":
        if payload.get("is_interrupt") is True:
            return None
        found = _EXIT_CODE.search(str(payload.get("error") or ""))
        return int(found.group(1)) if found else 1
    return 0  # PostToolUse fires only when the command succeeded


def _outputs(payload: dict[str, Any]) -> list[str]:
    """What the command printed, as far as the payload carries it: a failure's ``error`` text
    (Claude Code puts the output after ``Exit code N``), the response's stdout and stderr."""
    parts = [payload.get("error")]
    response = payload.get("tool_response")
    if isinstance(response, dict):
        parts += [response.get("stdout"), response.get("stderr")]
    return [p for p in parts if isinstance(p, str) and p]


def post_tool_use(location: Any, payload: dict[str, Any], project: Path | None = None) -> None:
    """Record a configured test command's exit status as the outcome of this Claude session's
    open task; a test run that records nothing says why in ``hooks.log``. The store is opened
    only for a test run (PostToolUse fires after every Bash call), and a SQLite store only when
    the session has an open task to record it for."""
    from noetic.config import load
    from noetic.hosts.testing.commands import Hidden, recognise
    from noetic.hosts.testing.recording import record_exit

    home = location.home
    if payload.get("tool_name") != "Bash":
        return None
    tool_input = payload.get("tool_input")
    command = tool_input.get("command") if isinstance(tool_input, dict) else None
    if not isinstance(command, str):
        return None
    folder = project_dir(payload)
    run = recognise(
        command,
        list(load(home).test_commands),
        workspace=str(project_root(payload, project)),
        cwd=str(folder),
        home=os.path.expanduser("~"),
    )
    if run is None:
        return None
    shown = one_line(command, 120)
    if isinstance(run, Hidden):
        return _not_recorded(home, shown, run.reason)
    code = exit_status(payload)
    if code is None:
        return _not_recorded(home, shown, "interrupted before it finished")
    status = run.status(code)
    if status.score is None:
        return _not_recorded(home, shown, status.meaning)
    outputs = _outputs(payload) if code != 0 else []
    failed = next(filter(None, map(run.preparation_failed, outputs)), None)
    if failed is not None:
        return _not_recorded(home, shown, f"`{failed}` failed before the test run started "
                             f"(exit {code} is its status, not the tests')")  # fmt: skip
    if location.url is None:
        from noetic.store.current import read_current_session
        from noetic.store.reads import open_task_in

        sid = read_current_session(home, agent_key(payload))
        found = open_task_in(home, sid) if sid else (False, False)
        if found is not None and not all(found):
            return _not_recorded(home, shown, _no_task(sid if found[0] else None))
    from noetic.runtime.opening import remembered_session
    from noetic.store import open_store

    # the store alone: the outcome needs no tracker
    with open_store(home, create=True) as store:
        sid = remembered_session(store, agent_key(payload))
        if sid is None:
            return _not_recorded(home, shown, _no_task(None))
        record = record_exit(store, sid, command, code, status.score, via="Claude Code Bash")
    if record is None:
        _not_recorded(home, shown, _no_task(sid))


def _not_recorded(home: Path, shown: str, why: str) -> None:
    """Say in ``hooks.log`` why a test run recorded nothing."""
    note(home, "post-tool-use", f"`{shown}` not recorded: {why}")


def _no_task(sid: str | None) -> str:
    """Why a test run has no task to record for: no session, or no open task."""
    if sid is None:
        return "no Noetic session for this Claude Code session (did the SessionStart hook run?)"
    return f"session {sid} has no open task"
