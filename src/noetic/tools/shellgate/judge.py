"""The judge: every simple command of a parsed line, held against what it can do.

A command is judged by its capabilities, not its name alone: whether it runs a string as code,
writes a file, changes folder, reads a secret or sends data over the network (docs/agent.md
lists them). Shell code a command spells out is parsed and judged in its turn; a capability
whose effect the gate cannot determine is refused, saying what was undeterminable, unless the
sandbox contains it (``sandbox_contains``). Particular programs' checks are in
:mod:`.program_capabilities`, :mod:`.table_checks`, :mod:`.find_actions`, :mod:`.sed_awk` and
:mod:`.interpreters`.
"""

from __future__ import annotations

import glob
import itertools
import os
import re
import shlex
from collections.abc import Iterable
from functools import lru_cache

from noetic.tools.shellgate import find_actions, policy_lookups, program_capabilities, table_checks
from noetic.tools.shellgate.effects_table import PROGRAMS, WRITTEN
from noetic.tools.shellgate.links import follow, resolve
from noetic.tools.shellgate.option_spelling import (
    abbreviates,
    option_is,
    option_values,
    split_string,
)
from noetic.tools.shellgate.parsed_line import Command, Redirect, Script, Word
from noetic.tools.shellgate.path_patterns import compile_all
from noetic.tools.shellgate.policy import Match, Policy
from noetic.tools.shellgate.policy_lookups import concerns
from noetic.tools.shellgate.syntax import TooComplex, Unparseable, parse
from noetic.tools.shellgate.verdict import Violation

MAX_COMMAND_CHARS = 65_536
MAX_INLINE_DEPTH = 6
"""Shell code inside shell code (``bash -c "flock -c '…'"``) is followed this deep."""
MAX_GLOB_MATCHES = 2_000
_VALUES = frozenset({".", ":", "[", "true", "false", "test"})  # as operands: paths, values
_DECLARING = frozenset({"unset", "export", "declare", "typeset", "local", "readonly"})


class Judge:
    """Judges one line; an inner judge (:meth:`inline`) shares what the line has done so far:
    files downloaded, files holding the environment's dump (``tainted``), links made, files
    written (``scripts``) and functions defined."""

    def __init__(
        self,
        policy: Policy,
        workspace: str,
        home: str,
        cwd: str,
        sandboxed: bool = False,
        cdpath: str | None = None,
    ) -> None:
        self.policy = policy
        self.workspace = workspace
        self.home = home
        self.cwd = cwd
        self.sandboxed = sandboxed
        self.cdpath = cdpath
        self.found: list[Violation] = []
        self.downloaded: set[str] = set()
        self.tainted: set[str] = set()
        self.links: dict[str, str | None] = {}
        self.scripts: dict[str, str | None] = {}
        self.on_entry = False  # the write acts on a path's own entry (rm, mv), not a link's target
        self.functions: set[str] = set()
        self.inline_depth = 0

    def refuse(self, rule: str, part: str, start: int = 0, detail: str = "") -> None:
        self.found.append(
            Violation(
                rule=rule, reason=self.policy.reason(rule), part=part, start=start, detail=detail
            )
        )

    def judge(self, text: str) -> list[Violation]:
        if len(text) > MAX_COMMAND_CHARS:
            self.refuse("too-complex", f"{len(text)} characters (at most {MAX_COMMAND_CHARS})")
        elif "\0" in text:
            self.refuse("unparseable", "a NUL character", text.index("\0"))
        elif not text.strip():
            self.refuse("unparseable", "an empty command")
        elif (script := self.parsed(text, frozenset({self.cwd}))) is not None:
            self.script(script)
        return self.found

    def parsed(self, text: str, cwds: frozenset[str] | None) -> Script | None:
        try:
            return parse(
                text,
                home=self.home,
                workspace=self.workspace,
                cwds=cwds,
                links=self.links,
                cdpath=self.cdpath,
            )
        except Unparseable as exc:
            self.refuse("unparseable", exc.part, exc.start)
        except (TooComplex, RecursionError):
            self.refuse("too-complex", text[:80])
        return None

    # the whole line -----------------------------------------------------------------------------

    def script(self, script: Script) -> None:
        if script.evaluated is not None:
            part, start = script.evaluated
            self.refuse(
                "eval",
                part,
                start,
                "bash evaluates text as arithmetic or an array subscript in this line, and this "
                "text holds a command substitution it would run",
            )
        self.functions |= {f.name for f in script.functions}
        for function in script.functions:
            if any(c.name is not None and c.name.value == function.name for c in function.calls):
                self.refuse("fork-bomb", function.text, function.start)
        for cmd in script.commands:
            self.command(cmd)
        for redirect in script.redirects:
            self.redirect(redirect)

    def inline(self, code: str, word: Word, cmd: Command, what: str) -> None:
        """Judge ``code``, shell code a command runs, as if it were on the line; a refusal
        names its own part when that is in the line, else the word that holds the code."""
        if self.inline_depth >= MAX_INLINE_DEPTH:
            self.refuse("too-complex", word.text, word.start, f"{what} nests too deeply")
            return
        inner = Judge(self.policy, self.workspace, self.home, self.cwd, self.sandboxed, self.cdpath)
        inner.downloaded, inner.tainted, inner.links = self.downloaded, self.tainted, self.links
        inner.scripts, inner.functions = self.scripts, self.functions
        inner.inline_depth = self.inline_depth + 1
        if not code.strip():
            return
        script = inner.parsed(code, cmd.cwds)
        if script is not None:
            inner.script(script)
        for v in inner.found:
            inside = v.part and v.part in word.text
            self.found.append(
                v._replace(
                    part=v.part if inside else word.text,
                    start=word.start,
                    detail=f"{what}: {v.detail}" if v.detail else f"{what}: {v.part}",
                )
            )

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
        program_capabilities.record(self, cmd)
        if cmd.name is None or cmd.keyword is not None:
            program_capabilities.capabilities(self, cmd.keyword or "", [], cmd, 0)
            return
        self.argv([cmd.name, *cmd.args], cmd, hidden_args=False)
        program_capabilities.scripts_written(self, cmd)

    def variables(self, cmd: Command) -> None:
        names = [n for n, _ in cmd.assignments]
        if cmd.keyword == "unset":
            names += [a.value or a.text for a in cmd.args]
        fit = policy_lookups.names_fit
        for rule in self.policy.rules:
            for m in rule.match:
                for name in names if m.variables else ():
                    if fit(name, m.variables) and not fit(name, m.unless):
                        self.refuse(rule.id, cmd.text, cmd.start, f"sets {name}")
        program_capabilities.index_variables(self, cmd)

    def sets(self, assignments: list[tuple[str, Word | None]], cmd: Command) -> None:
        """Settings ``cmd`` makes other than by assignment words (``env -u NAME``, ``env
        NAME=value``, ``'unset' NAME``), judged as assignments."""
        self.variables(Command(None, [], cmd.text, cmd.start, cmd.cwds, assignments))

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
            self.sets([(n, None) for n in names], cmd)
        if base not in self.policy.inert:
            self.path_rules(args, cmd.cwds, write=False, part=cmd.text)
        flags = self.policy.recursive_readers.get(base)
        if flags is not None and (not flags or any(self.has_flag(a, flags) for a in args)):
            find_actions.folders(self, args, cmd)
        resolved = self.resolved(name.value, cmd.cwds) if "/" in name.value else set()
        if resolved & self.downloaded:
            self.refuse("download-execute", cmd.text, cmd.start)
        for place in resolved & set(self.scripts):  # `./run.sh` written earlier in the line
            from noetic.tools.shellgate import interpreters

            interpreters.run_written(self, name, self.scripts[place or ""], cmd)
        if depth > 8:
            self.refuse("too-complex", cmd.text, cmd.start)
            return
        self.strings(base, args, cmd)
        table_checks.opaque(self, base, args)
        wrapper = self.policy.wrappers.get(base)
        if wrapper is not None:
            inner = self.unwrap(base, args, wrapper, cmd)
            if inner:
                own = args[: len(args) - len(inner)] if inner[0] in args else args
                moved = self.chdir(base, own, cmd)
                if base == "xargs":  # `xargs -I{} sh -c '{}'`: each input line goes where {} is
                    inner = find_actions.placeholders(inner, find_actions.replace_string(own))
                self.argv(inner, moved, hidden_args=hidden_args or base == "xargs", depth=depth + 1)
            return
        if base in self.policy.evaluators:
            self.evaluator(base, args, cmd)
            return
        interpreter = policy_lookups.interpreter_flags(self.policy, base)
        if interpreter is not None:
            from noetic.tools.shellgate import interpreters

            module = interpreters.interpreted(self, base, interpreter, args, cmd)
            if module and table_checks.module(self, module, cmd):
                self.argv(module, cmd, hidden_args=hidden_args, depth=depth + 1)
        if base in self.policy.programs:
            from noetic.tools.shellgate import sed_awk  # loaded for a line naming sed or awk

            sed_awk.judge_program(self, base, args, cmd)
        if base == "find":
            find_actions.find(self, args, cmd, depth)
        writer = self.policy.writers.get(base)
        if writer is not None:
            if hidden_args and writer.paths != "none":
                fed = program_capabilities.piped_paths(cmd)  # `find src -name '*.o' | xargs rm`
                if fed is None:
                    self.refuse(
                        "dynamic-path", cmd.text, cmd.start, "its paths come from its input"
                    )
                for word in fed or ():
                    self.path_rules([word], cmd.cwds, write=True, part=cmd.text)
                    self.written(word, cmd.cwds, cmd.text, cmd.start)
            self.writes(base, args, cmd)
        program_capabilities.capabilities(self, base, args, cmd, depth)
        table_checks.program(self, base, name, args, cmd)
        runner = self.policy.runner_subcommands.get(base, ())
        sub = program_capabilities.subcommand(base, args)
        ran: bool | None = None
        if sub is not None and sub in runner:  # `uv run …`, `npm exec …`, `poetry run …`
            after = args[[a.value for a in args].index(sub) + 1 :]
            ran = self.rest(base, after, cmd, hidden_args, depth)
            ran = None if table_checks.runs_shell(base, args) else ran  # `npm exec -c CODE`, judged
        elif not self.known(base):
            ran = self.rest(base, args, cmd, hidden_args, depth)
            ran = ran if base in PROGRAMS else None  # an unknown program is refused already
        if ran is False:
            self.undetermined(
                "unknown-program", name, f"{base} runs a command the gate does not know"
            )

    def known(self, base: str) -> bool:
        """Whether the policy says what ``base`` does with its operands."""
        p = self.policy
        row = PROGRAMS.get(base)
        if row is not None:
            return not row.runs_operands  # `npx TOOL`: known only once TOOL is
        return (
            base in p.writers
            or base in p.judged_alone
            or base in p.inert
            or base in p.network_clients
            or base in p.downloaders
            or base in p.index_options
            or base in p.programs
            or base in ("git", "find", "go")
            or base in p.wrappers
            or base in p.evaluators
            or policy_lookups.interpreter_flags(self.policy, base) is not None
            or any(key.split(" ")[0] == base for key in p.runs)
        )

    def rest(
        self, base: str, args: list[Word], cmd: Command, hidden_args: bool, depth: int
    ) -> bool | None:
        """A command the policy does not know may run its operands as a command (``chrt 10
        rm -rf /``, ``fakeroot make``, ``uv run pytest``): from the first operand that names a
        command the policy judges, the rest is judged as that command. Returns whether one was
        found (None: there is no operand)."""
        # `fd -x rm`, `parallel rm {} ::: …`: the paths come from the command, unseen
        hidden = hidden_args or any(
            (w.value or "") in ("-x", "--exec", "-X", "--exec-batch") or "{" in (w.value or "")
            for w in args
        )
        for i, word in enumerate(args):
            value = word.value
            if value is None or value.startswith("-"):
                continue
            named = value.rsplit("/", 1)[-1]
            if named in concerns(self.policy) or (self.known(named) and named not in _VALUES):
                inner = find_actions.placeholders(args[i:], "{")
                self.argv(inner, cmd, hidden_args=hidden, depth=depth + 1)
                return True
        return False if any(w.value is None or not w.value.startswith("-") for w in args) else None

    def unwrap(
        self, base: str, args: list[Word], takes_value: Iterable[str], cmd: Command
    ) -> list[Word]:
        """The command a wrapper runs: its options, ``NAME=value`` (env) and duration skipped;
        ``env -S STRING`` split as env splits it."""
        takes = set(takes_value)
        i = 0
        positional_skipped = False
        while i < len(args):
            word = args[i]
            value = word.value
            if value is None:
                return args[i:]
            if value == "--":
                return args[i + 1 :]
            if base == "env" and (split := split_string(args, i)) is not None:
                text, used = split
                return self.env_split(text, word, cmd) + args[i + used :]
            if value.startswith("-") and len(value) > 1:
                if base == "env" and value in ("-u", "--unset") and i + 1 < len(args):
                    self.sets([(args[i + 1].value or "", None)], cmd)
                i += 2 if value in takes else 1
                continue
            if base == "env" and "=" in value and not value.startswith("="):
                var, _, given = value.partition("=")
                self.sets([(var, Word(word.text, given, False, word.start))], cmd)
                i += 1
                continue
            if base == "timeout" and not positional_skipped:
                positional_skipped = True
                i += 1
                continue
            if base == "watch":
                code = " ".join(a.value or "" for a in args[i:])
                if any(a.value is None for a in args[i:]):
                    self.undetermined(
                        "program-exec", word, "watch runs a command built at run time"
                    )
                else:
                    self.inline(code, word, cmd, "the command watch runs")
                return []
            return args[i:]
        return []

    def chdir(self, base: str, own: list[Word], cmd: Command) -> Command:
        """The command as ``env -C DIR`` or ``sudo -D DIR`` runs it: in DIR."""
        options = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}.get(base, ())
        found = option_values(own, options)
        if not found:
            return cmd
        _, folder = found[-1]
        if folder is None or (cmd.cwds is None and not folder.startswith("/")):
            return cmd.moved(None)
        places = {p for p in self.resolved(folder, cmd.cwds) if p is not None}
        if len(places) != len(self.resolved(folder, cmd.cwds)):
            return cmd.moved(None)
        return cmd.moved(frozenset(places))

    def env_split(self, text: str | None, word: Word, cmd: Command) -> list[Word]:
        """The words ``env -S`` makes of its string, or a refusal when it cannot be known."""
        if text is None or "$" in text or "\\" in text:
            what = "known only at run time" if text is None or "$" in text else "with escapes"
            self.undetermined("program-exec", word, f"env -S splits a string {what}")
            return []
        try:
            parts = shlex.split(text, comments=False, posix=True)
        except ValueError:
            self.refuse("unparseable", word.text, word.start, "env -S cannot split this string")
            return []
        while parts and "=" in parts[0] and not parts[0].startswith(("-", "=")):
            var, _, value = parts.pop(0).partition("=")
            self.sets([(var, Word(word.text, value, False, word.start))], cmd)
        return [Word(word.text, p, False, word.start) for p in parts]

    def evaluator(self, base: str, args: list[Word], cmd: Command) -> None:
        if base == "eval" and args and all(a.value is not None for a in args):
            self.inline(" ".join(a.value or "" for a in args), args[0], cmd, "the code eval runs")
            return
        script = args[0].value if args and base in ("source", ".") else None
        if script is not None and self.inside_all(script, cmd.cwds):
            if self.resolved(script, cmd.cwds) & self.downloaded:
                self.refuse("download-execute", cmd.text, cmd.start)
            for place in self.resolved(script, cmd.cwds) & set(self.scripts):
                # a file this line wrote: judged by what it holds, refused when that is unknown
                from noetic.tools.shellgate import interpreters

                interpreters.handed(self, base, True, self.scripts[place or ""], args[0], cmd)
            return  # running a script file of the workspace, as `bash file` would
        self.refuse("eval", cmd.text, cmd.start)

    def undetermined(self, rule: str, word: Word, detail: str) -> None:
        """Refuse what the gate cannot determine, unless the sandbox contains it."""
        if self.sandboxed and rule in self.policy.sandbox_contains:
            return
        self.refuse(rule, word.text, word.start, detail)

    def strings(self, base: str, args: list[Word], cmd: Command) -> None:
        """Options whose value a command runs as shell code (``flock -c``, tar's
        ``--to-command``, ``git rebase -x``)."""
        sub = program_capabilities.subcommand(base, args)
        options = self.policy.runs.get(base, ()) + self.policy.runs.get(f"{base} {sub}", ())
        for word, code in option_values(args, options):
            if code is None:
                self.undetermined(
                    "program-exec", word, f"{base} runs a command known only at run time"
                )
            else:
                self.inline(code, word, cmd, f"the command {base} runs")

    def writes(self, base: str, args: list[Word], cmd: Command) -> None:
        writer = self.policy.writers[base]
        if writer.when and not any(self.has_flag(a, writer.when) for a in args):
            return
        targets = self.option_values(args, writer.options)
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
                    skip_next = "=" not in value and any(
                        option_is(value, o) for o in writer.options if not o.endswith("=")
                    )
                    continue
                if "=" in value and any(o.endswith("=") for o in writer.options):
                    continue
            operands.append(word)
        targets += operands[WRITTEN[writer.paths]]
        if base == "rm" and any(
            (a.value or "").startswith("--no-pre")
            and "--no-preserve-root".startswith(a.value or "")
            for a in args
        ):
            self.refuse("destructive-root", cmd.text, cmd.start)
        self.path_rules(targets, cmd.cwds, write=True, part=cmd.text)
        # `rm r`, `mv r s` and `ln -s x r` act on the link r itself, not on where it points
        self.on_entry = base in ("rm", "unlink", "mv", "ln", "link")
        try:
            for word in targets:
                self.written(word, cmd.cwds, cmd.text, cmd.start)
            program_capabilities.scripts_changed(self, base, targets, args, cmd)
        finally:
            self.on_entry = False

    def option_values(self, args: list[Word], options: Iterable[str]) -> list[Word]:
        """The words given as values of path options (``-o F``, ``-oF``, ``--output=F``,
        ``--out=F`` as GNU abbreviates it, dd's ``of=F``)."""
        return [
            Word(word.text, value, word.glob, word.start) if value is not None else word
            for word, value in option_values(args, tuple(options))
        ]

    # where a write lands ------------------------------------------------------------------------

    def written(self, word: Word, cwds: frozenset[str] | None, part: str, start: int) -> None:
        value = word.value
        if value is None:
            self.refuse("dynamic-path", word.text, word.start)
            return
        if not value:
            return
        if cwds is None and not value.startswith("/"):
            self.refuse("dynamic-path", word.text, word.start, "the folder it runs in is unknown")
            return
        if word.glob:
            parts = value.split("/")
            first = next(i for i, p in enumerate(parts) if any(c in p for c in "*?["))
            if ".." in parts[first:]:
                self.refuse("dynamic-path", word.text, word.start)
                return
            prefix = "/".join(parts[:first]) or ("/" if value.startswith("/") else ".")
            places = self.resolved(prefix, cwds)
        elif (
            self.on_entry and not value.endswith("/") and os.path.basename(value) not in (".", "..")
        ):
            parent = os.path.dirname(value) or "."
            name = os.path.basename(value)
            places = {
                None if p is None else os.path.join(p, name) for p in self.resolved(parent, cwds)
            }
        else:
            places = self.resolved(value, cwds)
        if None in places:
            self.refuse("dynamic-path", word.text, word.start, "it goes through a link made here")
            return
        for place in places:
            assert place is not None
            if place == "/":
                self.refuse("destructive-root", word.text, word.start)
            elif place == self.home and not self.inside(place):
                self.refuse("destructive-home", word.text, word.start)
            else:
                self.landing(place, word)

    def landing(self, place: str, word: Word) -> None:
        if self.inside(place):
            return
        if policy_lookups.names_fit(place, self.policy.writable):
            return
        if place.startswith(("/dev/", "/proc/", "/sys/")) or place in ("/dev", "/proc", "/sys"):
            self.refuse("device-write", word.text, word.start)
            return
        self.refuse("write-outside-workspace", word.text, word.start, f"it lands in {place}")

    def inside(self, place: str) -> bool:
        return place == self.workspace or place.startswith(self.workspace.rstrip("/") + "/")

    def inside_all(self, value: str, cwds: frozenset[str] | None) -> bool:
        if cwds is None and not value.startswith("/"):
            return False
        places = self.resolved(value, cwds)
        return None not in places and all(self.inside(p or "") for p in places)

    def resolved(self, value: str, cwds: frozenset[str] | None) -> set[str | None]:
        """Where ``value`` lands from each possible folder; None for a path through a link
        made earlier in the line whose target is unknown."""
        if value.startswith("/"):
            found = {_resolve(value, "/")}
        else:
            found = {_resolve(value, cwd) for cwd in cwds or ()}
        if not self.links:
            return set(found)
        return {follow(p, self.links) for p in found}

    # the policy's rules -------------------------------------------------------------------------

    def command_rules(self, base: str, args: list[Word], cmd: Command) -> None:
        for rule in self.policy.rules:
            for m in rule.match:
                if m.command and self.fits(m, base, args):
                    self.refuse(rule.id, cmd.text, cmd.start)
                    break

    def fits(self, m: Match, base: str, args: list[Word]) -> bool:
        if not policy_lookups.names_fit(base, m.command):
            return False
        if m.subcommand and program_capabilities.subcommand(base, args) not in m.subcommand:
            return False
        if m.flags and not any(self.has_flag(a, m.flags) for a in args):
            return False
        return not m.arguments or any(
            a.value is not None and any(re.search(p, a.value) for p in m.arguments) for a in args
        )

    @staticmethod
    def has_flag(word: Word, flags: Iterable[str]) -> bool:
        value = word.value
        if value is None:
            return False
        for flag in flags:
            if value == flag or (flag.startswith("--") and value.startswith(flag + "=")):
                return True
            name = value.split("=", 1)[0]
            if flag.startswith("--") and name.startswith("--") and abbreviates(name, flag):
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
        checks = [
            (rule.id, compile_all(m.paths, self.home, self.workspace))
            for rule in self.policy.rules
            for m in rule.match
            if m.paths and (write or m.access != "write")
        ]
        for word in words:
            if word.value is None or word.glob or word.value.startswith("/"):
                # `/proc/$PPID/environ`, `/root/.ss?/id_*`, another user's `/home/u/.netrc`
                for rule, named in policy_lookups.may_name(
                    self.policy, word, self.home, self.workspace, write=write
                ):
                    self.refuse(rule, word.text, word.start, f"it may name {named}")
                if word.value is None:
                    continue
            places = sorted(self.places(word, cwds))
            for rule, pattern in checks:
                hit = next((p for p in places if pattern.match(p)), None)
                if hit is not None:
                    self.refuse(rule, word.text, word.start, f"it names {hit}")

    def places(self, word: Word, cwds: frozenset[str] | None) -> set[str]:
        """Every real path a word may name: itself, the value of ``--opt=PATH``, curl's
        ``@PATH``, and for a glob, every file it matches now."""
        value = word.value or ""
        candidates = {value}
        if "=" in value:
            candidates.add(value.split("=", 1)[1])
        candidates |= {c[1:] for c in list(candidates) if c[:1] in ("@", "<")}
        candidates |= {self.home + c[1:] for c in list(candidates) if c.startswith("~/")}
        found: set[str] = set()
        for candidate in candidates:
            if not candidate:
                continue
            found.add(os.path.normpath(candidate))
            found |= {p for p in self.resolved(candidate, cwds) if p is not None}
            if word.glob and any(c in candidate for c in "*?["):
                found |= self.matches(candidate, cwds)
        return found

    def matches(self, pattern: str, cwds: frozenset[str] | None) -> set[str]:
        out: set[str] = set()
        for cwd in cwds or {self.workspace}:
            hits = glob.iglob(pattern, root_dir=cwd, include_hidden=True)
            for hit in itertools.islice(hits, MAX_GLOB_MATCHES):
                out.add(_resolve(hit, cwd))
        return out

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
