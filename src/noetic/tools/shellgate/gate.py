"""The deterministic shell gate: a command's syntax tree judged against the policy.

:func:`check_command` parses the command (:mod:`.syntax`), then looks at every simple command it
could run — after unwrapping ``env``, ``nohup``, ``timeout``, ``xargs``, ``sudo`` and the like,
and the commands ``find -exec`` runs — and at every redirection. It refuses, in this order of
concern, what hides the command from analysis (a name in a variable, ``eval``, code handed to an
interpreter, a pipe into one, downloaded code run), what writes where it must not (the root,
the home folder, devices, anything outside the workspace, a path it cannot see), and whatever
the policy's rules name (privilege escalation, filesystem administration, credential reads,
history tampering, force pushes…). Fail closed: a command that does not parse, or nests too
deeply to analyse, is refused.

Every refusal is a :class:`Violation` naming the rule, its reason and the part of the command
that broke it.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from noetic.tools.shellgate.policy import Match, Policy, load_policy
from noetic.tools.shellgate.syntax import (
    Command,
    Redirect,
    Script,
    TooComplex,
    Unparseable,
    Word,
    parse,
    resolve,
)

MAX_COMMAND_CHARS = 65_536
_GLOBAL_OPTIONS = {"git": ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path")}
_DECLARING = frozenset({"unset", "export", "declare", "typeset", "local", "readonly"})
_EXEC_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir")


class Violation(BaseModel):
    """One rule a command broke: ``part`` is the piece of the command that broke it."""

    model_config = ConfigDict(frozen=True)

    rule: str
    reason: str
    part: str
    start: int = 0


class Verdict(BaseModel):
    """The gate's decision on one command line."""

    model_config = ConfigDict(frozen=True)

    command: str
    allowed: bool
    violations: tuple[Violation, ...] = ()
    workspace: str

    @property
    def rule(self) -> str | None:
        return self.violations[0].rule if self.violations else None

    def explain(self) -> str:
        if self.allowed:
            return "allowed"
        return "; ".join(f"{v.rule}: {v.reason} ({v.part!r})" for v in self.violations)


def check_command(
    command: str,
    workspace: Path | str,
    policy: Policy | None = None,
    *,
    home: str | None = None,
    cwd: Path | str | None = None,
) -> Verdict:
    """Judge ``command`` as if run in ``cwd`` (default: ``workspace``), the only folder it may
    change being ``workspace``."""
    policy = policy or load_policy()
    root = os.path.realpath(workspace)
    home = os.path.realpath(home or os.path.expanduser("~"))
    start = os.path.realpath(cwd) if cwd is not None else root
    found = _Judge(policy, root, home, start).judge(command)
    unique: dict[tuple[str, str, int], Violation] = {}
    for v in found:
        if policy.enabled(v.rule):
            unique.setdefault((v.rule, v.part, v.start), v)
    return Verdict(
        command=command, allowed=not unique, violations=tuple(unique.values()), workspace=root
    )


def write_refusal(
    policy: Policy, path: str, *, workspace: str, home: str | None = None
) -> Violation | None:
    """The first write rule of ``policy`` that writing the real path ``path`` breaks, if any.

    The files tools ask this before writing, so they cannot do what the gate refuses a shell
    command for (a git hook, Noetic's own store, a shell start-up file)."""
    home = os.path.realpath(home or os.path.expanduser("~"))
    for rule in policy.rules:
        if not policy.enabled(rule.id):
            continue
        for m in rule.match:
            if (
                m.paths
                and m.access == "write"
                and _compile_all(m.paths, home, workspace).match(path)
            ):
                return Violation(rule=rule.id, reason=rule.reason, part=path)
    return None


@dataclass
class _Judge:
    policy: Policy
    workspace: str
    home: str
    cwd: str
    found: list[Violation] = field(default_factory=list)
    downloaded: set[str] = field(default_factory=set)

    def refuse(self, rule: str, part: str, start: int = 0) -> None:
        self.found.append(
            Violation(rule=rule, reason=self.policy.reason(rule), part=part, start=start)
        )

    def judge(self, text: str) -> list[Violation]:
        if len(text) > MAX_COMMAND_CHARS:
            self.refuse("too-complex", f"{len(text)} characters (at most {MAX_COMMAND_CHARS})")
            return self.found
        if "\0" in text:
            self.refuse("unparseable", "a NUL character", text.index("\0"))
            return self.found
        if not text.strip():
            self.refuse("unparseable", "an empty command")
            return self.found
        try:
            script = parse(text, home=self.home, workspace=self.workspace, cwd=self.cwd)
        except Unparseable as exc:
            self.refuse("unparseable", exc.part, exc.start)
            return self.found
        except TooComplex:
            self.refuse("too-complex", text[:80])
            return self.found
        except RecursionError:
            self.refuse("too-complex", text[:80])
            return self.found
        self.script(script)
        return self.found

    # the whole line -----------------------------------------------------------------------------

    def script(self, script: Script) -> None:
        for function in script.functions:
            if any(c.name is not None and c.name.value == function.name for c in function.calls):
                self.refuse("fork-bomb", function.text, function.start)
        for cmd in script.commands:
            self.command(cmd)
        for redirect in script.redirects:
            self.redirect(redirect)

    def redirect(self, r: Redirect) -> None:
        target = r.target
        if target is None or (r.operator in ("<&", ">&") and (target.value or "").isdigit()):
            return
        if r.operator in ("<&", ">&", "<&-", ">&-") and target.value == "-":
            return
        self.path_rules([target], r.cwds, write=r.writes, part=r.text)
        if r.writes:
            self.written(target, r.cwds, r.text, r.start)

    # one simple command -------------------------------------------------------------------------

    def command(self, cmd: Command) -> None:
        self.variables(cmd)
        if cmd.name is None or cmd.keyword is not None:
            return
        self.argv([cmd.name, *cmd.args], cmd, hidden_args=False)

    def variables(self, cmd: Command) -> None:
        names = [(n, cmd.text) for n, _ in cmd.assignments]
        if cmd.keyword == "unset":
            names += [(a.value or a.text, cmd.text) for a in cmd.args]
        for rule in self.policy.rules:
            for m in rule.match:
                for name, text in names:
                    if m.variables and name in m.variables:
                        self.refuse(rule.id, text, cmd.start)

    def argv(self, argv: list[Word], cmd: Command, *, hidden_args: bool, depth: int = 0) -> None:
        """Judge one argument vector; wrappers and ``find -exec`` recurse into what they run."""
        name = argv[0]
        if name.value is None or name.glob:
            self.refuse("dynamic-command", name.text, name.start)
            return
        base = name.value.rsplit("/", 1)[-1]
        args = argv[1:]
        self.command_rules(base, args, cmd)
        if base in _DECLARING:  # `'unset' HISTFILE` is the builtin, however it is quoted
            names = [a.value.split("=", 1)[0] for a in args if a.value and a.value[0] != "-"]
            self.variables(
                Command(None, [], cmd.text, cmd.start, cmd.cwds, [(n, None) for n in names])
            )
        if base not in self.policy.inert:
            self.path_rules(args, cmd.cwds, write=False, part=cmd.text)
        resolved = self.resolved(name.value, cmd.cwds) if "/" in name.value else set()
        if resolved & self.downloaded:
            self.refuse("download-execute", cmd.text, cmd.start)
        if depth > 8:
            self.refuse("too-complex", cmd.text, cmd.start)
            return
        wrapper = self.policy.wrappers.get(base)
        if wrapper is not None:
            inner = self.unwrap(base, args, wrapper, cmd)
            if inner:
                self.argv(inner, cmd, hidden_args=hidden_args or base == "xargs", depth=depth + 1)
            return
        if base in self.policy.evaluators:
            self.evaluator(base, args, cmd)
            return
        interpreter = self.interpreter(base)
        if interpreter is not None:
            self.interpreted(base, interpreter, args, cmd)
        runner = self.policy.command_runners_in_programs.get(base)
        if runner:
            self.program(base, runner, args, cmd)
        if base == "find":
            self.find(args, cmd, depth)
        writer = self.policy.writers.get(base)
        if writer is not None:
            if hidden_args and writer.paths != "none":
                self.refuse("dynamic-path", cmd.text, cmd.start)
            self.writes(base, args, cmd)
        if base in self.policy.downloaders:
            for word in self.option_values(args, self.policy.writers.get(base)):
                self.downloaded |= self.resolved(word.value or "", cmd.cwds)
            for r in cmd.redirects:
                if r.writes and r.target is not None and r.target.value:
                    self.downloaded |= self.resolved(r.target.value, r.cwds)

    def unwrap(
        self, base: str, args: list[Word], takes_value: Iterable[str], cmd: Command
    ) -> list[Word]:
        """The command a wrapper runs: its options, ``NAME=value`` (env) and duration skipped."""
        takes = set(takes_value)
        i = 0
        positional_skipped = False
        while i < len(args):
            value = args[i].value
            if value is None:
                return args[i:]
            if value == "--":
                return args[i + 1 :]
            if value.startswith("-") and len(value) > 1:
                if base == "env" and value in ("-u", "--unset") and i + 1 < len(args):
                    var = args[i + 1].value or ""
                    self.variables(
                        Command(None, [], cmd.text, cmd.start, cmd.cwds, assignments=[(var, None)])
                    )
                if value in takes:
                    i += 2
                else:
                    i += 1
                continue
            if base == "env" and "=" in value and not value.startswith("="):
                var = value.split("=", 1)[0]
                self.variables(
                    Command(None, [], cmd.text, cmd.start, cmd.cwds, assignments=[(var, None)])
                )
                i += 1
                continue
            if base == "timeout" and not positional_skipped:
                positional_skipped = True
                i += 1
                continue
            if base == "watch" and len(args) - i == 1 and " " in value:
                self.refuse("eval", args[i].text, args[i].start)
                return []
            return args[i:]
        return []

    def evaluator(self, base: str, args: list[Word], cmd: Command) -> None:
        script = args[0].value if args and base in ("source", ".") else None
        if script is not None and self.inside_all(script, cmd.cwds):
            return  # running a script file of the workspace, as `bash file` would
        self.refuse("eval", cmd.text, cmd.start)

    def interpreter(self, base: str) -> tuple[str, ...] | None:
        if base in self.policy.interpreters:
            return self.policy.interpreters[base]
        for pattern, flags in self.policy.interpreters.items():
            if any(c in pattern for c in "*?[") and fnmatch.fnmatchcase(base, pattern):
                return flags
        return None

    def interpreted(
        self, base: str, code_flags: tuple[str, ...], args: list[Word], cmd: Command
    ) -> None:
        allowed = any(fnmatch.fnmatchcase(base, p) for p in self.policy.allow_interpreters)
        downloads = any(self.downloads(c) for c in [*cmd.substitutions, *cmd.upstream])
        code = next((a for a in args if self.has_flag(a, code_flags)), None)
        if code is not None:
            if downloads:
                self.refuse("download-execute", cmd.text, cmd.start)
            elif not allowed:
                self.refuse("interpreter-code", code.text, code.start)
            return
        operand = next(
            (a for a in args if a.value is None or not a.value.startswith("-") or a.value == "-"),
            None,
        )
        if operand is None or operand.value == "-":
            if cmd.stdin in ("pipe", "heredoc", "herestring"):
                if downloads:
                    self.refuse("download-execute", cmd.text, cmd.start)
                elif not allowed:
                    self.refuse("pipe-to-interpreter", cmd.text, cmd.start)
            return
        if operand.value is None:
            if downloads:
                self.refuse("download-execute", cmd.text, cmd.start)
            elif not allowed:
                self.refuse("interpreter-code", operand.text, operand.start)
            return
        if self.resolved(operand.value, cmd.cwds) & self.downloaded:
            self.refuse("download-execute", cmd.text, cmd.start)

    def program(self, base: str, patterns: tuple[str, ...], args: list[Word], cmd: Command) -> None:
        if base in self.policy.allow_interpreters:
            return
        for word in args:
            if word.value is None:
                continue
            if any(re.search(p, word.value) for p in patterns):
                self.refuse("interpreter-code", word.text, word.start)
                return

    def find(self, args: list[Word], cmd: Command, depth: int) -> None:
        starts: list[Word] = []
        for word in args:
            if word.value is None or word.value.startswith(("-", "(", "!")):
                break
            starts.append(word)
        starts = starts or [Word(".", ".", start=cmd.start)]
        values = [w.value for w in args]
        if "-delete" in values or "-fdelete" in values:
            for word in starts:
                self.written(word, cmd.cwds, cmd.text, cmd.start)
        i = 0
        while i < len(args):
            if args[i].value in _EXEC_ACTIONS:
                end = i + 1
                while end < len(args) and args[end].value not in (";", "+"):
                    end += 1
                inner = args[i + 1 : end]
                if inner:
                    # `{}` stands for each file found: judge the command once per start folder
                    for start in starts:
                        swapped = [
                            Word(w.text, start.value, start.glob, w.start)
                            if w.value is not None and "{}" in w.value
                            else w
                            for w in inner
                        ]
                        self.argv(swapped, cmd, hidden_args=False, depth=depth + 1)
                i = end
            i += 1

    def writes(self, base: str, args: list[Word], cmd: Command) -> None:
        writer = self.policy.writers[base]
        if writer.when and not any(self.has_flag(a, writer.when) for a in args):
            return
        targets = self.option_values(args, writer)
        operands: list[Word] = []
        skip_next = False
        after_dashdash = False
        for word in args:
            if skip_next:
                skip_next = False
                continue
            value = word.value
            if not after_dashdash and value is not None:
                if value == "--":
                    after_dashdash = True
                    continue
                if value.startswith("-") and len(value) > 1:
                    skip_next = value in writer.options
                    continue
                if "=" in value and any(o.endswith("=") for o in writer.options):
                    continue
            operands.append(word)
        if writer.paths == "all":
            targets += operands
        elif writer.paths == "last":
            targets += operands[-1:]
        elif writer.paths == "after-first":
            targets += operands[1:]
        if base == "rm" and any(a.value == "--no-preserve-root" for a in args):
            self.refuse("destructive-root", cmd.text, cmd.start)
        self.path_rules(targets, cmd.cwds, write=True, part=cmd.text)
        for word in targets:
            self.written(word, cmd.cwds, cmd.text, cmd.start)

    def option_values(self, args: list[Word], writer: object) -> list[Word]:
        """The words given as values of a writer's path options (``-o F``, ``-oF``, ``of=F``)."""
        options = getattr(writer, "options", ())
        found: list[Word] = []
        for i, word in enumerate(args):
            value = word.value
            if value is None:
                continue
            for option in options:
                if option.endswith("=") and value.startswith(option):
                    found.append(Word(word.text, value[len(option) :], word.glob, word.start))
                elif value == option and i + 1 < len(args):
                    found.append(args[i + 1])
                elif option.startswith("--") and value.startswith(option + "="):
                    found.append(Word(word.text, value[len(option) + 1 :], word.glob, word.start))
                elif (
                    len(option) == 2
                    and value.startswith(option)
                    and len(value) > 2
                    and not value.startswith("--")
                ):
                    found.append(Word(word.text, value[2:], word.glob, word.start))
        return found

    # where a write lands ------------------------------------------------------------------------

    def written(self, word: Word, cwds: frozenset[str] | None, part: str, start: int) -> None:
        value = word.value
        if value is None:
            self.refuse("dynamic-path", word.text, word.start)
            return
        if not value:
            return
        if cwds is None and not value.startswith("/"):
            self.refuse("dynamic-path", word.text, word.start)
            return
        if word.glob:
            parts = value.split("/")
            first = next(i for i, p in enumerate(parts) if any(c in p for c in "*?[{"))
            if ".." in parts[first:]:
                self.refuse("dynamic-path", word.text, word.start)
                return
            prefix = "/".join(parts[:first]) or ("/" if value.startswith("/") else ".")
            places = self.resolved(prefix, cwds)
            for place in places:
                if place == "/":
                    self.refuse("destructive-root", word.text, word.start)
                elif place == self.home and not self.inside(place):
                    self.refuse("destructive-home", word.text, word.start)
                else:
                    self.landing(place, word, glob=True)
            return
        for place in self.resolved(value, cwds):
            if place == "/":
                self.refuse("destructive-root", word.text, word.start)
            elif place == self.home and not self.inside(place):
                self.refuse("destructive-home", word.text, word.start)
            else:
                self.landing(place, word, glob=False)

    def landing(self, place: str, word: Word, *, glob: bool) -> None:
        if self.inside(place):
            return
        if any(fnmatch.fnmatchcase(place, p) for p in self.policy.writable):
            return
        if place.startswith(("/dev/", "/proc/", "/sys/")) or place in ("/dev", "/proc", "/sys"):
            self.refuse("device-write", word.text, word.start)
            return
        self.refuse("write-outside-workspace", word.text, word.start)

    def inside(self, place: str) -> bool:
        return place == self.workspace or place.startswith(self.workspace.rstrip("/") + "/")

    def inside_all(self, value: str, cwds: frozenset[str] | None) -> bool:
        if cwds is None and not value.startswith("/"):
            return False
        return all(self.inside(p) for p in self.resolved(value, cwds))

    def resolved(self, value: str, cwds: frozenset[str] | None) -> set[str]:
        if value.startswith("/"):
            return {_resolve(value, "/")}
        return {_resolve(value, cwd) for cwd in cwds or ()}

    # the policy's rules -------------------------------------------------------------------------

    def command_rules(self, base: str, args: list[Word], cmd: Command) -> None:
        for rule in self.policy.rules:
            for m in rule.match:
                if m.command and self.fits(m, base, args):
                    self.refuse(rule.id, cmd.text, cmd.start)
                    break

    def fits(self, m: Match, base: str, args: list[Word]) -> bool:
        if not _globs(m.command).match(base):
            return False
        if m.subcommand and self.subcommand(base, args) not in m.subcommand:
            return False
        if m.flags and not any(self.has_flag(a, m.flags) for a in args):
            return False
        return not m.arguments or any(
            a.value is not None and any(re.search(p, a.value) for p in m.arguments) for a in args
        )

    def subcommand(self, base: str, args: list[Word]) -> str | None:
        takes = _GLOBAL_OPTIONS.get(base, ())
        skip = False
        for word in args:
            if skip:
                skip = False
                continue
            value = word.value
            if value is None:
                return None
            if value.startswith("-"):
                skip = value in takes
                continue
            return value
        return None

    @staticmethod
    def has_flag(word: Word, flags: Iterable[str]) -> bool:
        value = word.value
        if value is None:
            return False
        for flag in flags:
            if value == flag or (flag.startswith("--") and value.startswith(flag + "=")):
                return True
            letter = flag[1:]
            if (
                len(flag) == 2
                and flag[0] == "-"
                and letter.isalpha()
                and re.fullmatch(r"-[A-Za-z]+", value)
                and letter in value[1:]
            ):
                return True
        return False

    def path_rules(
        self, words: list[Word], cwds: frozenset[str] | None, *, write: bool, part: str
    ) -> None:
        for rule in self.policy.rules:
            for m in rule.match:
                if not m.paths or (m.access == "write" and not write):
                    continue
                for word in words:
                    if word.value is None:
                        continue
                    candidates = [word.value]
                    if word.value.startswith("-") and "=" in word.value:
                        candidates.append(word.value.split("=", 1)[1])
                    for candidate in candidates:
                        if not candidate:
                            continue
                        places = self.resolved(candidate, cwds) | {os.path.normpath(candidate)}
                        pattern = _compile_all(m.paths, self.home, self.workspace)
                        if any(pattern.match(place) for place in places):
                            self.refuse(rule.id, word.text, word.start)
                            break

    def downloads(self, cmd: Command) -> bool:
        return any(
            c.name is not None
            and c.name.value is not None
            and c.name.value.rsplit("/", 1)[-1] in self.policy.downloaders
            for c in [cmd, *cmd.upstream, *cmd.substitutions]
        )


@lru_cache(maxsize=4096)
def _resolve(value: str, cwd: str) -> str:
    return resolve(value, cwd)


@lru_cache(maxsize=512)
def _globs(patterns: tuple[str, ...]) -> re.Pattern[str]:
    """One regular expression for a list of shell-style name globs (command names)."""
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


@lru_cache(maxsize=256)
def _compile_all(patterns: tuple[str, ...], home: str, workspace: str) -> re.Pattern[str]:
    """One regular expression matching a path any of ``patterns`` matches."""
    parts = [_compile(p, home, workspace).pattern[1:-1] for p in patterns]
    return re.compile("^(?:" + "|".join(parts) + ")$")


@lru_cache(maxsize=1024)
def _compile(pattern: str, home: str, workspace: str) -> re.Pattern[str]:
    if pattern.startswith("~"):
        pattern = home + pattern[1:]
    pattern = pattern.replace("{workspace}", workspace)
    out = []
    i = 0
    while i < len(pattern):
        if pattern.endswith("/**") and i == len(pattern) - 3:  # a folder and all it holds
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


_DELETING = frozenset({"rm", "rmdir", "unlink", "shred", "truncate"})
_GIT_REWRITES = {"reset": "--hard", "clean": None, "restore": None, "checkout": "--"}


def effects(
    command: str,
    workspace: Path | str,
    policy: Policy | None = None,
    *,
    home: str | None = None,
    cwd: Path | str | None = None,
) -> list[str]:
    """What an allowed command would change irreversibly, as short phrases: deletions,
    overwrites (``>``, ``mv``, ``sed -i``, ``git reset --hard``…), pushes and other writes.
    Empty for a command that only reads. A command that does not parse has no known effects
    (the gate refuses it anyway)."""
    policy = policy or load_policy()
    root = os.path.realpath(workspace)
    home = os.path.realpath(home or os.path.expanduser("~"))
    start = os.path.realpath(cwd) if cwd is not None else root
    try:
        script = parse(command, home=home, workspace=root, cwd=start)
    except (Unparseable, TooComplex, RecursionError):
        return []
    found: list[str] = []
    for cmd in script.commands:
        if cmd.name is None or cmd.name.value is None or cmd.keyword:
            continue
        base = cmd.name.value.rsplit("/", 1)[-1]
        values = [a.value or a.text for a in cmd.args]
        if base in _DELETING or (base == "find" and "-delete" in values):
            found.append(f"deletes ({cmd.text})")
        elif base == "git":
            sub = next((v for v in values if not v.startswith("-")), "")
            flag = _GIT_REWRITES.get(sub, "missing")
            if sub == "push":
                found.append(f"pushes ({cmd.text})")
            elif flag != "missing" and (flag is None or flag in values):
                found.append(f"discards changes ({cmd.text})")
        elif base in policy.writers and base not in ("find", "git"):
            writer = policy.writers[base]
            if writer.when and not any(v in writer.when for v in values):
                continue
            if writer.paths != "none" or any(
                v == o or v.startswith(o) for v in values for o in writer.options
            ):
                found.append(f"writes ({cmd.text})")
    for r in script.redirects:
        target = r.target.value if r.target is not None else None
        if (
            r.writes
            and target not in (None, *policy.writable)
            and not (target or "").startswith("/dev/")
        ):
            found.append(f"writes {target} ({r.text})")
    return found
