"""Claude Code: the MCP server entry, the hooks and the instructions block.

Three files, by scope:

============  ===========================  ==========================  ========================
scope         MCP server                   hooks                       instructions
============  ===========================  ==========================  ========================
``project``   ``<project>/.mcp.json``      ``<project>/.claude/        ``<project>/CLAUDE.md``
                                           settings.json``
``user``      ``~/.claude.json``           ``~/.claude/settings.json`` ``~/.claude/CLAUDE.md``
============  ===========================  ==========================  ========================

The server entry is the one ``claude mcp add --scope project|user noetic -- noetic mcp``
writes (``mcpServers.noetic``: ``type``, ``command``, ``args``, ``env``). Each hook is a
``noetic hook <event>`` command in Claude Code's hooks format (``hooks.<Event>`` is a list of
``{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}`` groups); Noetic's hooks
are recognised by their command (``noetic hook …``), so the user's own hooks are never
touched. The instructions sit between two marker lines in ``CLAUDE.md``; the user's text
around them is kept as it is.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any

from noetic.errors import InvalidValueError
from noetic.hosts.setup.config_edits import FileChange, json_change, text_change
from noetic.hosts.setup.servers import server_change

SCOPES = ("project", "user")
DEFAULT_SCOPE = "project"

# Claude Code event → (the `noetic hook` event, the tool matcher or None for every occurrence).
# A Bash command that fails raises PostToolUseFailure instead of PostToolUse; both are read.
HOOKS: dict[str, tuple[str, str | None]] = {
    "SessionStart": ("session-start", None),
    "UserPromptSubmit": ("user-prompt-submit", None),
    "PreToolUse": ("pre-tool-use", "Bash|Write|Edit|MultiEdit"),
    "PreCompact": ("pre-compact", None),
    "Stop": ("stop", None),
    "PostToolUse": ("post-tool-use", "Bash"),
    "PostToolUseFailure": ("post-tool-use", "Bash"),
    "SessionEnd": ("session-end", None),
    "SubagentStart": ("subagent-start", None),
    "SubagentStop": ("subagent-stop", None),
    "TaskCompleted": ("task-completed", None),
    "PermissionDenied": ("permission-denied", None),
    "StopFailure": ("stop-failure", None),
}
HOOK_TIMEOUT_S = 30
HOOK_KINDS = ("command", "http")
# Claude Code runs no http hook for these events (it skips them, saying so in its debug log).
COMMAND_ONLY = frozenset({"SessionStart"})
DEFAULT_URL = "http://127.0.0.1:8765"  # `noetic serve`'s default address

BEGIN = "<!-- noetic:begin (written by `noetic setup claude-code`; edit outside these lines) -->"
END = "<!-- noetic:end -->"

INSTRUCTIONS = """\
## Noetic: assess what you know before you act

Noetic records your self-assessment and checks it against outcomes. A hook opens a Noetic
session when this Claude Code session starts; its id is in your context (and in
`$NOETIC_SESSION` for shell commands).

- Before a non-trivial task: `execute_preflight(session_id, prompt)`, answer the prompt
  honestly, then `submit_preflight_assessment(session_id, vectors)`.
- When the decision is INVESTIGATE: look into the weakest vectors, then `execute_check` /
  `submit_check_assessment` with the vectors that changed.
- When the task is done: `execute_postflight`, then `submit_postflight_assessment` with all
  13 vectors. You will be asked once if you stop with a task still open.
- Test runs are outcomes: when you run one of the project's test commands (Noetic's
  `[outcomes] test_commands`) as its own command line — `pytest -q`, `cd sub && npm test`,
  not piped into `tail` — its pass or failure is recorded for your open task; run anything
  else with `noetic run -- CMD` to record its exit status.
- Bash commands pass Noetic's shell gate: a refused one is denied with the rule that refused
  it. An irreversible one (a push, a publish, a deploy, a migration) waits until your task's
  latest CHECK says PROCEED: run CHECK first.
- The same steps from the shell: `noetic preflight "task"`, `noetic check`,
  `noetic postflight`, `noetic state`."""


def paths(scope: str, project: Path, home: Path) -> dict[str, Path]:
    """The scope's three files (the module's table)."""
    if scope not in SCOPES:
        raise InvalidValueError(f"unknown scope {scope!r}", field="scope", fix="project or user")
    claude = (project if scope == "project" else home) / ".claude"
    return {
        "mcp": project / ".mcp.json" if scope == "project" else home / ".claude.json",
        "hooks": claude / "settings.json",
        "instructions": project / "CLAUDE.md" if scope == "project" else claude / "CLAUDE.md",
    }


def check_url(url: str) -> str:
    """The base URL of ``noetic serve`` for http hooks: http(s), a host, no query."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.query:
        raise InvalidValueError(
            f"--url {url!r} is not the address of a server",
            field="url",
            fix=f"for example {DEFAULT_URL} (what `noetic serve` prints, without /mcp)",
        )
    return url.rstrip("/").removesuffix("/mcp")


def is_noetic_hook(hook: Any) -> bool:
    """A hook entry running ``noetic hook …`` (whatever path the executable has), or an http
    hook posting to a ``/hooks/<event>`` of Noetic's."""
    if isinstance(hook, dict) and hook.get("type") == "http":
        from urllib.parse import urlsplit

        from noetic.hosts.hooks.answer import EVENTS

        url = hook.get("url")
        if not isinstance(url, str):
            return False
        head, _, event = urlsplit(url).path.rstrip("/").rpartition("/")
        return head.endswith("/hooks") and event in EVENTS
    if not isinstance(hook, dict) or not isinstance(hook.get("command"), str):
        return False
    try:
        argv = shlex.split(hook["command"])
    except ValueError:
        return False
    return (
        len(argv) >= 3
        and os.path.basename(argv[0]) in ("noetic", "noetic.exe")
        and argv[1] == "hook"
    )


def _entry(executable: str, event: str, url: str | None) -> dict[str, Any]:
    """One hook: the ``noetic hook EVENT`` command, or (``url``) a POST to the server; off
    loopback the server wants its bearer token, which Claude Code fills from
    ``$NOETIC_TOKEN``."""
    from urllib.parse import urlsplit

    command = shlex.join([executable, "hook", event])
    if url is None:
        return {"type": "command", "command": command, "timeout": HOOK_TIMEOUT_S}
    entry: dict[str, Any] = {
        "type": "http",
        "url": f"{url.rstrip('/')}/hooks/{event}",
        "timeout": HOOK_TIMEOUT_S,
    }
    if urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
        entry["headers"] = {"Authorization": "Bearer $NOETIC_TOKEN"}
        entry["allowedEnvVars"] = ["NOETIC_TOKEN"]
    return entry


def _events(data: dict[str, Any], path: Path) -> dict[str, Any]:
    hooks = data.get("hooks")
    if hooks is None:
        return {}
    if not isinstance(hooks, dict):
        raise InvalidValueError(f'{path}: "hooks" is not an object; left untouched', field="hooks")
    for event in HOOKS:
        if event in hooks and not isinstance(hooks[event], list):
            raise InvalidValueError(
                f'{path}: "hooks.{event}" is not a list; left untouched', field="hooks"
            )
    return hooks


def _strip_ours(groups: list[Any]) -> list[Any]:
    """The groups without Noetic's hooks; a group left empty by that goes."""
    kept = []
    for group in groups:
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(is_noetic_hook(h) for h in inner):
            kept.append(group)
            continue
        rest = [h for h in inner if not is_noetic_hook(h)]
        if rest:
            kept.append({**group, "hooks": rest})
    return kept


def add_hooks(data: dict[str, Any], executable: str, path: Path, url: str | None = None) -> None:
    """Noetic's hooks, as commands or (``url``) http hooks, replacing the other kind."""
    hooks = _events(data, path)
    for event, (name, matcher) in HOOKS.items():
        hook = _entry(executable, name, None if event in COMMAND_ONLY else url)
        wanted = {**({"matcher": matcher} if matcher is not None else {}), "hooks": [hook]}
        groups = hooks.get(event, [])
        if wanted in groups:
            continue
        hooks[event] = [*_strip_ours(groups), wanted]
    data["hooks"] = hooks


def remove_hooks(data: dict[str, Any], path: Path) -> None:
    if "hooks" not in data:
        return
    hooks = _events(data, path)
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        kept = _strip_ours(groups)
        if kept != groups:
            if kept:
                hooks[event] = kept
            else:
                del hooks[event]
    if not hooks:
        del data["hooks"]


def add_block(text: str, body: str = INSTRUCTIONS) -> str:
    block = f"{BEGIN}\n{body}\n{END}\n"
    start, end = _block_span(text)
    if start is not None:
        return text[:start] + block + text[end:]
    if not text or text.endswith("\n\n"):
        return text + block
    return text + ("\n" if text.endswith("\n") else "\n\n") + block


def remove_block(text: str) -> str:
    start, end = _block_span(text)
    if start is None:
        return text
    head, tail = text[:start], text[end:]
    if not tail:  # the block ended the file: drop the blank lines put before it
        head = head.rstrip("\n") + "\n" if head.strip() else head.rstrip("\n")
    return head + tail


def _block_span(text: str) -> tuple[int | None, int]:
    start = text.find(BEGIN)
    if start < 0:
        return None, 0
    end = text.find(END, start)
    if end < 0:
        raise InvalidValueError(
            f"the Noetic block in CLAUDE.md has no end line ({END}); left untouched",
            field="CLAUDE.md",
            fix="remove the Noetic lines by hand, or add the end line back",
        )
    end += len(END)
    if text[end : end + 1] == "\n":
        end += 1
    return start, end


def plan(
    *,
    scope: str,
    project: Path,
    home: Path,
    command: list[str],
    uninstall: bool = False,
    instructions: bool = True,
    tests: bool = True,
    hooks: str = "command",
    url: str | None = None,
) -> list[FileChange]:
    """The changes ``noetic setup claude-code`` makes (or undoes), nothing written. With
    ``tests`` (project scope), the project's test commands go to its store's configuration
    (:func:`test_setup` says which); uninstalling leaves that configuration alone."""
    where = paths(scope, project, home)
    root = project if scope == "project" else home
    executable = command[0]
    if hooks not in HOOK_KINDS:
        raise InvalidValueError(
            f"unknown hook kind {hooks!r}", field="hooks", fix="command or http"
        )
    if url is not None and hooks != "http":
        raise InvalidValueError("--url is for --hooks http", field="url")
    base = check_url(url or DEFAULT_URL) if hooks == "http" else None

    # what `claude mcp add noetic -- <command>` writes
    server = {"type": "stdio", "command": command[0], "args": command[1:], "env": {}}

    def edit_hooks(data: dict[str, Any], original: dict[str, Any] | None) -> None:
        if uninstall:
            remove_hooks(data, where["hooks"])
        else:
            add_hooks(data, executable, where["hooks"], base)

    changes = [
        server_change(where["mcp"], "mcpServers", server, uninstall=uninstall, root=root),
        json_change(
            where["hooks"],
            edit_hooks,
            uninstall=uninstall,
            root=root,
            strip=lambda data, _: remove_hooks(data, where["hooks"]),
        ),
    ]
    if instructions or uninstall:
        changes.append(
            text_change(
                where["instructions"],
                remove_block if uninstall else add_block,
                uninstall=uninstall,
                root=root,
            )
        )
    if tests and not uninstall and scope == "project":
        found = test_setup(project)
        if found.kept is None and found.found:
            from noetic.hosts.testing.detect import with_test_commands

            commands = found.commands
            changes.append(
                text_change(
                    found.config,
                    lambda text: with_test_commands(text, commands),
                    uninstall=False,
                    root=found.config.parent,
                )
            )
    return changes


def test_setup(project: Path) -> Any:
    """The project's test commands and where they are configured (its store's config.toml)."""
    from noetic.hosts.testing.detect import test_setup as detect
    from noetic.store.location import locate_store

    return detect(project, locate_store(None, cwd=project).home)


def manual(scope: str, command: list[str]) -> str | None:
    return None


def _settings(scope: str, project: Path, home: Path) -> dict[str, Any]:
    """The scope's Claude Code settings (``{}`` when there are none); a file that does not
    parse raises its error."""
    from noetic.hosts.setup.config_edits import parse_json_object, read_bytes

    path = paths(scope, project, home)["hooks"]
    return parse_json_object(read_bytes(path), path) or {}


def installed_commands(scope: str, project: Path, home: Path) -> list[str] | None:
    """The commands Noetic's server entry and hooks run (for ``noetic doctor``); None when
    neither is installed. A file that does not parse raises its error."""
    from noetic.hosts.setup.servers import server_command

    server = server_command(paths(scope, project, home)["mcp"], "mcpServers")
    hooks = [h for _, h in _hooks_in(_settings(scope, project, home)) if is_noetic_hook(h)]
    found = [shlex.split(h["command"])[0] for h in hooks if h.get("type") != "http"]
    return [server, *found] if server is not None else found or (None if not hooks else [])


def installed_hooks(scope: str, project: Path, home: Path) -> tuple[str, str | None] | None:
    """Which kind of hooks Noetic has in the scope's settings (``command``, ``http``, or
    ``mixed``) and, for http, the server's base URL; None when there are none. SessionStart is
    a command with either kind (:data:`COMMAND_ONLY`)."""
    ours = [(e, h) for e, h in _hooks_in(_settings(scope, project, home)) if is_noetic_hook(h)]
    hooks = [h for event, h in ours if event not in COMMAND_ONLY]
    if not hooks:
        return None if not ours else ("command", None)
    urls = {h["url"].rsplit("/hooks/", 1)[0] for h in hooks if h.get("type") == "http"}
    if not urls:
        return "command", None
    if len(urls) == 1 and all(h.get("type") == "http" for h in hooks):
        return "http", urls.pop()
    return "mixed", ", ".join(sorted(urls))


def http_hook_urls(scope: str, project: Path, home: Path) -> list[tuple[str, str]]:
    """Every http hook in the scope's settings that posts to a ``…/hooks/<event>`` URL, known
    event or not, as (Claude Code's event, the URL): what ``noetic doctor`` checks."""
    from urllib.parse import urlsplit

    return [
        (event, h["url"])
        for event, h in _hooks_in(_settings(scope, project, home))
        if isinstance(h, dict) and h.get("type") == "http" and isinstance(h.get("url"), str)
        if "/hooks/" in urlsplit(h["url"]).path
    ]


def _hooks_in(settings: dict[str, Any]) -> list[tuple[str, Any]]:
    """Every hook in the settings, with the Claude Code event it is under."""
    events = settings.get("hooks")
    return [
        (str(event), h)
        for event, groups in (events.items() if isinstance(events, dict) else ())
        if isinstance(groups, list)
        for g in groups
        if isinstance(g, dict) and isinstance(g.get("hooks"), list)
        for h in g["hooks"]
    ]
