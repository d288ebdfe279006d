"""Fail closed: a program is judged by its row of the effects table (:mod:`.effects_table`), and a
program with no row — nor any entry in the policy — is refused where there is no sandbox, as is
a subcommand its row does not list (``git NAME`` may be an alias in the repository's config).
Every refusal names what the gate could not determine.
"""

from __future__ import annotations

import fnmatch
import os
import re
import shlex

from noetic.tools.shellgate import find_actions
from noetic.tools.shellgate.effects_table import MODULES, PROGRAM_MODULES, PROGRAMS, WRITTEN
from noetic.tools.shellgate.option_spelling import first_operand, option_values
from noetic.tools.shellgate.parsed_line import Command, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.tools.shellgate.effects_table import Program
    from noetic.tools.shellgate.judging import Judging


_ASSIGNMENT = r"^([A-Za-z_][A-Za-z0-9_]*)="
_STDIN = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})
_TAR_OLD_STYLE = r"^[A-Za-z]+$"


def program(judge: Judging, base: str, name: Word, args: list[Word], cmd: Command) -> None:
    """Judging ``base args`` by its row; refuse a program the gate does not know."""
    row = PROGRAMS.get(base)
    if row is None:
        # `./build.sh`, `.venv/bin/pytest`: a program of the workspace is the project's own
        own = "/" in (name.value or "") and judge.inside_all(name.value or "", cmd.cwds)
        if judge.known(base) or base in judge.functions or own:
            return
        judge.undetermined(
            "unknown-program",
            name,
            f"the gate does not know what {base} does (no row in its effects table)",
        )
        return
    if base == "tar" and args and re.match(_TAR_OLD_STYLE, args[0].value or "-"):
        args = [Word(args[0].text, "-" + (args[0].value or ""), False, args[0].start), *args[1:]]
    apply(judge, base, row, args, cmd, name)


def module(judge: Judging, argv: list[Word], cmd: Command) -> bool:
    """``python3 -m NAME …``: judged by the module's row; True when it is to be judged as the
    program of that name instead (``-m pip``, ``-m pytest``)."""
    name, args = argv[0], argv[1:]
    value = name.value or ""
    row = MODULES.get(value)
    if row is not None:
        apply(judge, f"-m {value}", row, args, cmd, name)
        return False
    if value in PROGRAM_MODULES:
        return True
    top = value.split(".", 1)[0]
    for folder in sorted(cmd.cwds or ()):
        for root in (folder, os.path.join(folder, "src")):
            base = os.path.join(root, top)
            if (os.path.isdir(base) or os.path.isfile(base + ".py")) and judge.inside(root):
                return False  # a module of the workspace: the project's own code
    judge.undetermined(
        "unknown-program", name, f"python -m {value}: a module the gate does not model"
    )
    return False


def runs_shell(base: str, args: list[Word]) -> bool:
    """Whether ``base args`` is handed shell code through an option of its row (or its
    subcommand's): ``npm exec -c CODE`` runs CODE, judged as commands, not its operands."""
    row = PROGRAMS.get(base)
    while row is not None:
        if row.shell_options and option_values(args, row.shell_options):
            return True
        sub, _, args = _subcommand(row, args)
        row = row.subcommands.get(sub or "")
    return False


def opaque(judge: Judging, base: str, args: list[Word]) -> None:
    """Options that make a program run commands in its own language (vim's ``-c``/``+``,
    emacs's ``--eval``): what they run is not shell, so the gate cannot read it."""
    options = judge.policy.opaque_runs.get(base)
    if not options:
        return
    for word in args:
        value = word.value or ""
        plus = "+" in options and value.startswith("+") and len(value) > 1
        if plus or any(value == o or value.startswith(o + "=") for o in options if o != "+"):
            judge.undetermined("program-exec", word, f"{base} runs {value} in its own language")
            return


def apply(
    judge: Judging, label: str, row: Program, args: list[Word], cmd: Command, where: Word
) -> None:
    _writes(judge, row, args, cmd)
    _code(judge, label, row, args, cmd)
    if row.implicit_files and judge.scripts:
        _implicit(judge, label, row.implicit_files, cmd, where)
    _escapes(judge, label, row, args, cmd)
    for i, word in enumerate(args):
        if word.value in row.exec_options and i + 1 < len(args):  # `fd -e py -x rm {}`
            inner = [w for w in args[i + 1 :] if w.value != ";"]
            judge.argv(find_actions.placeholders(inner, "{"), cmd, hidden_args=True, depth=1)
            break
    if row.assignments is not None:
        _assignments(judge, label, row.assignments, args)
    if row.mounts:
        _mounts(judge, args, cmd)
    if row.serves is not None:
        _served(judge, label, row.serves, args, cmd, where)
    if row.follows_links and any(judge.has_flag(a, row.follows_links) for a in args):
        values = {a.value for a in args}
        if values & {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprintf"}:
            judge.refuse(
                "dynamic-path",
                cmd.text,
                cmd.start,
                f"{label} follows links with {'/'.join(row.follows_links)}, so what it changes "
                "may lie outside the workspace",
            )
    if not row.subcommands and not row.closed:
        return
    sub, sub_word, rest = _subcommand(row, args)
    at = sub_word or where
    sub_row = row.subcommands.get(sub if sub is not None else "")
    if sub_row is not None:
        apply(judge, f"{label} {sub}", sub_row, rest, cmd, at)
        if sub_row.runs_operands and judge.rest(label, rest, cmd, False, 1) is False:
            judge.undetermined(
                "unknown-program", at, f"{label} {sub} runs a command the gate does not know"
            )
    elif row.closed:
        before = args[: len(args) - len(rest) - 1]
        if (
            label == "git"
            and sub
            and _workspace_repository(judge, before, cmd)
            and _git_alias(judge, sub, at, rest, cmd)
        ):
            return
        what = f"{label} {sub}" if sub is not None else f"{label} with no subcommand"
        judge.undetermined(
            "unknown-program",
            at,
            f"{what}: a subcommand the gate does not model (it may be an alias or a plug-in)",
        )


def _workspace_repository(judge: Judging, options: list[Word], cmd: Command) -> bool:
    """Whether git will read the workspace's own repository (so its aliases are the ones
    :mod:`.git_aliases` reads): no ``-C``/``--git-dir``/``--work-tree``, and from every folder the
    command may run in, the first ``.git`` above it is the workspace's."""
    if any((w.value or "-C").startswith(("-C", "--git-dir", "--work-tree")) for w in options):
        return False
    for folder in cmd.cwds or ():
        if not judge.inside(folder):
            return False
        while True:
            if os.path.lexists(os.path.join(folder, ".git")):
                if folder != judge.workspace:
                    return False
                break
            if folder == judge.workspace:
                return False  # no repository at the workspace's root
            folder = os.path.dirname(folder)
    return cmd.cwds is not None


def _git_alias(judge: Judging, name: str, word: Word, rest: list[Word], cmd: Command) -> bool:
    """``git NAME`` where NAME is an alias git reads from its configuration: judged as the git
    command or the shell code it stands for. False when the gate cannot tell what it runs."""
    if any(w.value is None for w in rest):
        return False
    args = [w.value or "" for w in rest]
    seen = {name}
    from noetic.tools.shellgate import git_aliases  # for a line running git

    value = git_aliases.lookup(name, judge.workspace, judge.home)
    expansion: list[str] = []
    for _ in range(8):  # an alias may name another alias
        if not isinstance(value, str):
            return False  # none (a git-NAME program) or unreadable
        if value.startswith("!"):  # shell code, handed the arguments as "$@"
            code = " ".join([value[1:], *(shlex.quote(a) for a in [*expansion, *args])])
            judge.inline(code, word, cmd, f"the command git's alias {name} runs")
            return True
        try:
            parts = shlex.split(value)
        except ValueError:
            return False
        if not parts:
            return False
        head, expansion = parts[0], parts[1:] + expansion
        if head in PROGRAMS["git"].subcommands:
            argv = [Word(word.text, v, False, word.start) for v in ["git", head, *expansion]]
            judge.argv([*argv, *rest], cmd, hidden_args=False, depth=1)
            return True
        if head in seen:
            return False
        seen.add(head)
        value = git_aliases.lookup(head, judge.workspace, judge.home)
    return False


def _subcommand(row: Program, args: list[Word]) -> tuple[str | None, Word | None, list[Word]]:
    """The subcommand of ``args``: an option naming one (``cmake -E``), else the first
    operand (git's after ``-C DIR -c K=V``)."""
    for i, word in enumerate(args):
        if word.value is not None and word.value.startswith("-") and word.value in row.subcommands:
            return word.value, word, args[i + 1 :]
    at = first_operand(args)
    if at is None:
        return None, None, []
    word = args[at]  # one named at run time ("$") is never a listed subcommand
    return "$" if word.value is None else word.value, word, args[at + 1 :]


def _operands(args: list[Word]) -> list[Word]:
    out: list[Word] = []
    dashdash = False
    for word in args:
        value = word.value
        if not dashdash and value == "--":
            dashdash = True
        elif dashdash or value is None or not value.startswith("-") or value == "-":
            out.append(word)
    return out


def _writes(judge: Judging, row: Program, args: list[Word], cmd: Command) -> None:
    if row.write_when and not any(judge.has_flag(a, row.write_when) for a in args):
        return
    if row.write_unless and any(judge.has_flag(a, row.write_unless) for a in args):
        return
    targets = judge.option_values(args, row.write_options) if row.write_options else []
    values = {w.value for w in targets}
    operands = [
        w
        for w in _operands(args)
        if w.value not in values and not re.match(_ASSIGNMENT, w.value or "")
    ]
    targets += operands[WRITTEN[row.writes]]
    targets = [t for t in targets if t.value not in _STDIN]
    if not targets:
        return
    judge.path_rules(targets, cmd.cwds, write=True, part=cmd.text)
    for word in targets:
        judge.written(word, cmd.cwds, cmd.text, cmd.start)


def _code(judge: Judging, label: str, row: Program, args: list[Word], cmd: Command) -> None:
    for word, code in option_values(args, row.shell_options) if row.shell_options else ():
        if code is None:
            judge.undetermined("program-exec", word, f"{label} runs a command named at run time")
        else:
            judge.inline(code, word, cmd, f"the command {label} runs")
    for word, _ in option_values(args, row.code_options) if row.code_options else ():
        judge.undetermined(
            "program-exec", word, f"{label} runs code in its own language, unread by the gate"
        )
    for word, value in option_values(args, row.file_options) if row.file_options else ():
        places = judge.resolved(value, cmd.cwds) if value else {None}
        own = (
            value is not None
            and value not in _STDIN
            and judge.inside_all(value, cmd.cwds)
            and not (places & set(judge.scripts))
        )
        if not own:
            judge.undetermined(
                "program-exec",
                word,
                f"{label} runs the code in {value or 'a file named at run time'}, which is not a "
                "file of the workspace the gate can trust (standard input, outside, or written "
                "in this line)",
            )
    if row.stdin_code and cmd.stdin is not None:
        text = cmd.stdin_text
        if text is None or not row.escapes:
            judge.undetermined(
                "program-exec",
                cmd.name or Word(cmd.text, None, False, cmd.start),
                f"{label} runs the commands on its standard input, which the gate "
                + ("does not see" if text is None else "does not read"),
            )
        else:
            _search(judge, label, row, Word(cmd.text, text, False, cmd.start), "its standard input")


def _implicit(
    judge: Judging, label: str, patterns: tuple[str, ...], cmd: Command, where: Word
) -> None:
    """A file the program runs unasked (``make`` and its ``Makefile``) that this line wrote."""
    for place in judge.scripts:
        for folder in cmd.cwds or {"/"}:
            rel = os.path.relpath(place, folder)
            if rel.startswith("..") and cmd.cwds is not None:
                continue
            name = os.path.basename(place)
            if any(
                fnmatch.fnmatchcase(rel, p)
                or (p.startswith("**/") and fnmatch.fnmatchcase(name, p[3:]))
                for p in patterns
            ):
                judge.undetermined(
                    "program-exec",
                    where,
                    f"{label} runs {rel}, which this line wrote: code the gate does not read",
                )
                return


def _escapes(judge: Judging, label: str, row: Program, args: list[Word], cmd: Command) -> None:
    if not row.escapes:
        return
    for word in args:
        if word.value is None:
            judge.undetermined(
                "program-exec",
                word,
                f"{label} is handed text known only at run time, which "
                "may hold a command that runs a program",
            )
            continue
        _search(judge, label, row, word, word.value)


def _search(judge: Judging, label: str, row: Program, word: Word, what: str) -> None:
    text = word.value or ""
    for pattern in row.escapes:
        found = re.search(pattern, text, re.MULTILINE)
        if found is not None:
            judge.undetermined(
                "program-exec",
                word,
                f"{label} can run a program or write a file through "
                f"{text[found.start() : found.start() + 24].strip()!r} "
                f"(in {what[:60]!r})",
            )
            return


def _assignments(judge: Judging, label: str, safe: tuple[str, ...], args: list[Word]) -> None:
    for word in _operands(args):
        found = re.match(_ASSIGNMENT, word.value or "")
        if word.value is None and "=" in word.text:
            judge.undetermined("program-exec", word, f"{label} is given a setting made at run time")
        elif found is not None and found.group(1) not in safe:
            judge.undetermined(
                "program-exec",
                word,
                f"{label} {found.group(1)}=… may change the commands it runs (SHELL, CC, MAKE…)",
            )


def _served(
    judge: Judging,
    label: str,
    options: tuple[str, ...],
    args: list[Word],
    cmd: Command,
    where: Word,
) -> None:
    """The folder a server serves (an option's value, else where it runs) is the workspace's."""
    given = option_values(args, options)
    folders = [value for _, value in given] or ["."]
    if any(f is None or not judge.inside_all(f, cmd.cwds) for f in folders):
        what = (folders[0] or "a folder named at run time") if given else "the folder it runs in"
        judge.refuse(
            "credential-read",
            where.text,
            where.start,
            f"{label} serves {what}, outside the workspace",
        )


def _mounts(judge: Judging, args: list[Word], cmd: Command) -> None:
    sources: list[Word] = []
    for word, value in option_values(args, ("-v", "--volume", "--mount")):
        if value is None:
            judge.refuse("dynamic-path", word.text, word.start, "a bind mount named at run time")
            continue
        value = value.removeprefix("=")  # `-v=/:/h`, as docker's flag parser reads it
        if "=" in value.split(",", 1)[0] or value.startswith(("type=", "source=", "src=")):
            fields = dict(p.partition("=")[::2] for p in value.split(","))
            source = fields.get("source") or fields.get("src") or ""
        else:
            source = value.split(":", 1)[0]
        if source.startswith(("/", ".", "~")):
            if source.startswith("~"):
                source = judge.home + source[1:]
            sources.append(Word(word.text, source, False, word.start))
    for mount in sources:
        if not judge.inside_all(mount.value or "", cmd.cwds):
            judge.refuse(
                "write-outside-workspace",
                mount.text,
                mount.start,
                f"a container may write {mount.value} through this bind mount",
            )
