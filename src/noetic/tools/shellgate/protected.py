"""The protected set: the files a developer's own tools run later, outside any sandbox or gate.

Path patterns (:mod:`.path_patterns`): the built-in list (``protected.txt`` beside this module),
what the repository names (:func:`noetic.tools.repository.control_files`), the scripts an
existing hook or hook manager calls (a few calls deep: a ``pre-commit`` hook running
``./scripts/lint.sh`` makes that script run at the next commit as surely as the hook itself),
and the user's own (``[gate] protected``). Claude Code's PreToolUse hook holds a write to any of
them (the policy rule :data:`RULE` that :func:`with_rule` adds); the sandbox mounts each one
that exists read-only (:func:`Protected.existing`). Cheap to import: plain data, read when
first asked for.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
from collections.abc import Iterable
from functools import cache

from noetic.named import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


RULE = "runs-later"
REASON = (
    "changes a file the developer's own tools run later, outside the sandbox and the gate "
    "(git hooks and the scripts they call, editor and agent settings, Python start-up files, "
    "Noetic's own configuration)"
)
# hook files and hook managers' files whose words may name a script that then runs too
HOOK_CALLERS = (".pre-commit-config.yaml", "lefthook.yml", ".lefthook.yml", ".husky")
MAX_CALL_DEPTH = 3
MAX_SCRIPTS = 64
MAX_SCRIPT_BYTES = 64 * 1024


_WORD = r"[A-Za-z0-9_./${}@%+-]+"
_VARIABLE_PREFIX = r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/"
_SKIPPED_DIRS = frozenset({"node_modules"})
_PACKAGE_DIRS = frozenset({"site-packages", "dist-packages"})


class Entry(NamedTuple):
    """One built-in pattern and what runs the files it matches."""

    pattern: str
    runs: str


@cache
def builtin() -> tuple[Entry, ...]:
    """The built-in list, from ``protected.txt``."""
    # beside this module (importlib.resources would load tempfile, shutil and zipfile)
    with open(os.path.join(os.path.dirname(__file__), "protected.txt"), encoding="utf-8") as fh:
        text = fh.read()
    rows = [line.strip().partition(" ") for line in text.splitlines()]
    return tuple(Entry(p, runs.strip()) for p, _, runs in rows if p and not p.startswith("#"))


class Protected(NamedTuple):
    """The protected set of one workspace (a real path)."""

    workspace: str
    home: str
    patterns: tuple[str, ...]
    named: tuple[str, ...]  # real paths the repository names and the scripts hooks call

    @property
    def all_patterns(self) -> tuple[str, ...]:
        """The patterns, and each named path with all it holds (a hooks folder, a script)."""
        literal = tuple(f"{p}/**" for p in self.named if "*" not in p and "?" not in p)
        return (*self.patterns, *literal)

    def covers(self, path: str) -> bool:
        """Whether the real path ``path`` is in the set."""
        from noetic.tools.shellgate.path_patterns import compile_all

        return bool(compile_all(self.all_patterns, self.home, self.workspace).match(path))

    def why(self, path: str) -> str:
        """What runs ``path`` later, as far as the set says."""
        from noetic.tools.shellgate.path_patterns import compile_all

        for entry in builtin():
            if compile_all((entry.pattern,), self.home, self.workspace).match(path):
                return entry.runs
        if any(path == n or path.startswith(n.rstrip("/") + "/") for n in self.named):
            return "named by the repository's configuration or called by one of its hooks"
        return "listed in [gate] protected"

    def existing(self) -> list[str]:
        """Every path of the set that exists inside the workspace, outermost first (a folder
        stands for all it holds), each a real path: what the sandbox mounts read-only.

        Patterns naming a place are looked up; ``**/NAME`` ones are found in one walk of the
        workspace that does not enter ``node_modules`` nor the packages of a Python
        environment (``site-packages``: only its own ``*.pth`` and ``sitecustomize.py`` run)."""
        root = self.workspace
        found: list[str] = [p for p in self.named if os.path.lexists(p)]
        names: list[str] = []  # `{workspace}/**/NAME` (and `/**`): an entry NAME in any folder
        others: list[str] = []  # anything else with `**` inside: matched in the walk
        for pattern in self.patterns:
            rel = self._relative(pattern)
            if rel is None:
                continue  # not inside the workspace: not the sandbox's to mount
            base = rel[:-3] if rel.endswith("/**") else rel
            if "**" not in base:
                found += glob.glob(os.path.join(glob.escape(root), base), include_hidden=True)
            elif base.startswith("**/") and "/" not in base[3:] and "**" not in base[3:]:
                names.append(base[3:])
            else:
                others.append(pattern)
        if names or others:
            found += self._walk(names, others)
        real = [
            p for p in dict.fromkeys(map(os.path.realpath, found)) if _inside(p, root) and p != root
        ]
        real.sort(key=lambda p: (p.count("/"), p))
        return [p for i, p in enumerate(real) if not any(_inside(p, q) for q in real[:i])]

    def _relative(self, pattern: str) -> str | None:
        if pattern.startswith("{workspace}/"):
            return pattern[len("{workspace}/") :]
        full = self.home + pattern[1:] if pattern.startswith("~") else pattern
        return full[len(self.workspace) + 1 :] if full.startswith(self.workspace + "/") else None

    def _walk(self, names: list[str], others: list[str]) -> list[str]:
        from noetic.tools.shellgate.path_patterns import compile_all

        by_name = re.compile("|".join(fnmatch.translate(n) for n in names)) if names else None
        by_path = compile_all(tuple(others), self.home, self.workspace) if others else None

        def hit(entry: os.DirEntry[str]) -> bool:
            return bool(
                (by_name is not None and by_name.match(entry.name))
                or (by_path is not None and by_path.match(entry.path))
            )

        found: list[str] = []
        stack = [self.workspace]
        while stack:
            folder = stack.pop()
            try:
                entries = list(os.scandir(folder))
            except OSError:
                continue
            environment = os.path.basename(folder) in _PACKAGE_DIRS
            for entry in entries:
                if hit(entry):
                    found.append(entry.path)  # a folder, with all it holds
                elif (
                    not environment
                    and entry.name not in _SKIPPED_DIRS
                    and entry.is_dir(follow_symlinks=False)
                ):
                    stack.append(entry.path)
        return found


def protected_set(
    workspace: str, *, home: str, extra: Iterable[str] = (), control: Any = None
) -> Protected:
    """The protected set of ``workspace`` (module docstring); ``extra`` the user's patterns,
    ``control`` the workspace's :func:`~noetic.tools.repository.control_files` when known."""
    from noetic.tools.repository import control_files

    root = os.path.realpath(workspace)
    control = control if control is not None else control_files(root)
    named = [*control.read_only, *control.folders_to_create]
    named += [s for s in called_scripts(root, hook_folders(root, control)) if s not in named]
    patterns = tuple(e.pattern for e in builtin()) + tuple(extra)
    return Protected(root, os.path.realpath(home), patterns, tuple(named))


def configured(workspace: str) -> tuple[str, ...]:
    """The user's own patterns for ``workspace``: ``[gate] protected`` in the configuration of
    the store the workspace finds (the one Claude Code's hook reads); a file that cannot be read
    is a ValueError naming it."""
    from pathlib import Path

    from noetic.config import load
    from noetic.errors import InvalidValueError
    from noetic.store.location import locate_store

    try:
        return load(locate_store(cwd=Path(workspace)).home).gate.protected
    except InvalidValueError as exc:
        raise ValueError(str(exc)) from None


def hook_folders(root: str, control: Any) -> list[str]:
    """The folders git runs hooks from: the git folder's ``hooks`` (a worktree's common git
    folder's, wherever it is) and the ``core.hooksPath`` folder when the configuration names
    one inside the workspace."""
    from noetic.tools.repository import git_folders

    dotgit = os.path.join(root, ".git")
    found = git_folders(dotgit)
    folders = [os.path.realpath(os.path.join(found[1], "hooks"))] if found is not None else []
    for path in control.read_only:
        if os.path.isdir(path) and path != os.path.realpath(dotgit):
            is_gitdir = os.path.exists(os.path.join(path, "HEAD"))
            folders.append(os.path.join(path, "hooks") if is_gitdir else path)
    return [f for f in dict.fromkeys(folders) if os.path.isdir(f)]


def called_scripts(root: str, folders: list[str]) -> list[str]:
    """The files inside ``root`` that a hook in ``folders`` (or a hook manager's file) names,
    and those they name in turn, up to :data:`MAX_CALL_DEPTH` calls deep."""
    callers = [p for folder in folders for p in _files(folder) if not p.endswith(".sample")]
    for name in HOOK_CALLERS:
        path = os.path.join(root, name)
        if os.path.isdir(path):
            callers += _files(path)
        elif os.path.isfile(path):
            callers.append(path)
    # a hook that is a link runs the file it points to
    found = [
        real
        for real in dict.fromkeys(os.path.realpath(c) for c in callers if os.path.islink(c))
        if _inside(real, root) and real != root
    ]
    seen = set(callers) | set(found)
    for _ in range(MAX_CALL_DEPTH):
        named: list[str] = []
        for caller in callers:
            for script in _named_files(caller, root):
                if script not in seen and len(found) < MAX_SCRIPTS:
                    seen.add(script)
                    found.append(script)
                    named.append(script)
        callers = named
        if not callers:
            break
    return found


def _files(folder: str) -> list[str]:
    return [p for n in sorted(os.listdir(folder)) if os.path.isfile(p := os.path.join(folder, n))]


def _named_files(caller: str, root: str) -> list[str]:
    """The files inside ``root`` a hook's words name: read from the top of the worktree, as git
    runs hooks, or from the caller's own folder (``$(git rev-parse --show-toplevel)/x`` and
    ``$VAR/x`` read as ``x`` from the top)."""
    try:
        with open(caller, "rb") as fh:
            text = fh.read(MAX_SCRIPT_BYTES).decode("utf-8", "replace")
    except OSError:
        return []
    out = []
    for word in set(re.findall(_WORD, text.replace("$(git rev-parse --show-toplevel)", "."))):
        word = re.sub(_VARIABLE_PREFIX, "", word)
        for base in (root, os.path.dirname(caller)):
            path = os.path.realpath(os.path.join(base, word))
            if _inside(path, root) and path != root and os.path.isfile(path) and path not in out:
                out.append(path)
    return out


def planted(command: str, protected: Protected, policy: Any, *, cwd: str) -> list[str]:
    """The paths of ``protected`` that ``command`` writes as the shell sees them: each operand
    and option value of a program the policy knows writes (``ln``, ``cp``, ``tee``…, after any
    wrapper) and each redirection, from every folder the command may run in, without following
    the links the line itself makes (``ln payload .git/hooks/pre-commit`` writes the hook, not
    the payload). Alongside the gate's own rule, which follows them."""
    from noetic.tools.shellgate.syntax import TooComplex, Unparseable, parse

    try:
        script = parse(command, home=protected.home, workspace=protected.workspace, cwd=cwd)
    except (Unparseable, TooComplex, RecursionError):
        return []
    hits: list[str] = []

    def check(value: str | None, cwds: frozenset[str] | None) -> None:
        if not value:
            return
        for folder in cwds or {cwd}:
            path = entry_path(value, folder)
            if path not in hits and protected.covers(path):
                hits.append(path)

    for cmd in script.commands:
        if cmd.name is None or cmd.keyword is not None:
            continue
        words = [cmd.name, *cmd.args]
        for at, word in enumerate(words):  # the writer, after any wrapper
            base = os.path.basename(word.value or "")
            if word.value is not None and base in policy.writers:
                rest = [w.value for w in words[at + 1 :]]
                for target in written_by(policy.writers[base], base, rest):
                    check(target, cmd.cwds)
                break
    for redirect in script.redirects:
        if redirect.writes and redirect.target is not None:
            check(redirect.target.value, redirect.cwds)
    return hits


def written_by(writer: Any, base: str, args: list[str | None]) -> list[str]:
    """The paths a writer program writes, by the policy's description of it (``paths``: all
    operands, the last, all but the first, none; ``options`` whose value is a path; ``when``
    the flags without which it writes nothing); a file copied, moved or linked into a folder
    lands there under its own name. A word the gate cannot know is left to the gate."""
    values = [a for a in args if a is not None]
    if writer.when and not any(
        v == w or v.startswith(w + "=") or (len(w) == 2 and v[:2] == w)
        for v in values
        for w in writer.when
    ):
        return []
    operands: list[str] = []
    optional: list[str] = []
    it = iter(values)
    for value in it:
        if value == "--":  # the end of the options: every word after it is an operand
            operands += it
            break
        if value == "-" or not value.startswith("-"):
            eq = next((o for o in writer.options if o.endswith("=") and value.startswith(o)), None)
            if eq is not None:
                optional.append(value[len(eq) :])
            elif not (any(o.endswith("=") for o in writer.options) and "=" in value):
                operands.append(value)
            continue
        name, _, attached = value.partition("=")
        for option in writer.options:
            if option.endswith("="):
                continue
            if value == option:
                optional.append(next(it, ""))
            elif option.startswith("--") and name == option and attached:
                optional.append(attached)
            elif not option.startswith("--") and value.startswith(option) and len(value) > 2:
                optional.append(value[len(option) :])
    from noetic.tools.shellgate.effects_table import WRITTEN

    targets = operands[WRITTEN[writer.paths]] + optional
    if base in ("cp", "mv", "ln", "link", "install", "rsync"):
        folders = [*optional] if optional else operands[-1:] if len(operands) > 1 else []
        sources = operands if optional else operands[:-1]
        for folder in folders:
            targets += [os.path.join(folder, os.path.basename(s.rstrip("/"))) for s in sources]
    return [t for t in targets if t]


def entry_path(path: str, cwd: str) -> str:
    """The real path of ``path``'s own entry: its folder resolved, its last name kept (a link
    is itself, not where it points)."""
    joined = os.path.normpath(path if path.startswith("/") else os.path.join(cwd, path))
    name = os.path.basename(joined)
    if name in ("", ".", ".."):
        return os.path.realpath(joined)
    return os.path.join(os.path.realpath(os.path.dirname(joined)), name)


def with_rule(policy: Any, protected: Protected) -> Any:
    """``policy`` with the rule :data:`RULE` matching writes to ``protected``."""
    from noetic.tools.shellgate.policy import Match, Rule

    if any(r.id == RULE for r in policy.rules):
        return policy
    rule = Rule(
        id=RULE,
        reason=REASON,
        match=(Match(paths=protected.all_patterns, access="write"),),
    )
    return policy._replace(rules=(*policy.rules, rule))


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")
