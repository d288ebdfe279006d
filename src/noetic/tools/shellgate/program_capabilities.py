"""The capabilities of particular programs: git, package managers, network clients.

git runs commands through its configuration (a key of ``git_exec_keys`` set for one command is
judged as the shell code it holds; set in a config file it is refused: it would run later,
outside any sandbox) and through ``rebase -x``, ``submodule foreach``, ``bisect run``. A package
manager pointed at an index the policy does not name is refused: it installs code from a source
nobody chose. The environment dumped into a network client (piped, substituted, or through a
file written earlier in the line) is refused: it holds the user's tokens.
"""

from __future__ import annotations

import re

from noetic.tools.shellgate.effects_table import PROGRAMS
from noetic.tools.shellgate.option_spelling import GIT_VALUES, first_operand, option_values
from noetic.tools.shellgate.parsed_line import Command, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.tools.shellgate.judging import Judging


_GIT_PATH_KEYS = r"^(core\.(hookspath|fsmonitor|worktree)|include\.path|includeif\..*)$"
_PACKAGE_URL = (
    r"^(git\+|hg\+|svn\+|bzr\+|https?://|ftp://|git://|ssh://|github:|gitlab:|bitbucket:|git@)"
    r"|\s@\s*\S+://"
)


_GIT_CONFIG_SETS = frozenset(
    {"--add", "--replace-all", "--unset", "--unset-all", "-e", "--edit", "--rename-section",
     "--remove-section"}
)  # fmt: skip
_INSTALLS = frozenset({"install", "i", "add", "update", "upgrade", "download", "wheel", "get"})


def subcommand(base: str, args: list[Word]) -> str | None:
    """The first operand (git's ``push`` after ``-C dir -c k=v``)."""
    i = first_operand(args, GIT_VALUES if base == "git" else ())
    return None if i is None else args[i].value


def capabilities(judge: Judging, base: str, args: list[Word], cmd: Command, depth: int) -> None:
    if base == "git":
        _git(judge, args, cmd, depth)
    if base in judge.policy.index_options:
        _packages(judge, base, args, cmd)
    if base == "go":
        _go(judge, args, cmd)
    row = PROGRAMS.get(base)
    if base in judge.policy.network_clients or (row is not None and row.network):
        _network(judge, base, args, cmd)
    if base in judge.policy.downloaders:
        writer = judge.policy.writers.get(base)
        options = writer.options if writer is not None else ()
        saved = [w.value or "" for w in judge.option_values(args, options)]
        saved += _remote_names(base, args)
        for r in cmd.redirects:
            if r.writes and r.target is not None and r.target.value:
                saved.append(r.target.value)
        for value in saved:
            judge.downloaded |= {p for p in judge.resolved(value, cmd.cwds) if p}
    elif base == "tee" and any(judge.downloads(c) for c in cmd.upstream):  # `curl … | tee f`
        for word in args:
            if word.value is not None and not word.value.startswith("-"):
                judge.downloaded |= {p for p in judge.resolved(word.value, cmd.cwds) if p}


def _remote_names(base: str, args: list[Word]) -> list[str]:
    """The files ``wget URL`` and ``curl -O URL`` save a download as: the URL's last part."""
    values = [a.value or "" for a in args]
    urls = [v for v in values if "://" in v]
    remote = base == "wget" and not any(
        v in ("-O", "--output-document") or v.startswith(("--output-document=", "-O"))
        for v in values
    )
    remote = remote or (
        base == "curl"
        and any(
            v in ("-O", "--remote-name", "--remote-name-all")
            or re.fullmatch(r"-[a-zA-Z]*O[a-zA-Z]*", v) is not None
            for v in values
        )
    )
    if not remote:
        return []
    return [u.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] or "index.html" for u in urls]


def scripts_written(judge: Judging, cmd: Command) -> None:
    """What a redirection writes, when the line spells it out (``cat > run.sh <<'EOF'``,
    ``echo 'make test' > run.sh``), so running that file later in the line is judged by it."""
    name = cmd.name.value if cmd.name is not None else None
    base = (name or "").rsplit("/", 1)[-1]
    content: str | None = None
    if base in ("cat", "tee") and cmd.stdin_text is not None and not cmd.upstream:
        content = cmd.stdin_text
    elif base == "echo" and all(a.value is not None for a in cmd.args):
        words = [a.value or "" for a in cmd.args]
        content = None if words[:1] and words[0].startswith("-") else " ".join(words) + "\n"
    targets = [r for r in cmd.redirects if r.writes and r.target is not None and r.target.value]
    tee_files = [a for a in cmd.args if a.value and not a.value.startswith("-")]
    for r in targets:
        assert r.target is not None
        appended = r.operator in (">>", "&>>")
        for place in judge.resolved(r.target.value or "", r.cwds):
            if place is not None:
                judge.scripts[place] = None if appended else content
    for word in tee_files if base == "tee" else ():
        for place in judge.resolved(word.value or "", cmd.cwds):
            if place is not None:
                judge.scripts[place] = content


_CONTENT_KEPT = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl", "touch"})


def scripts_changed(
    judge: Judging, base: str, targets: list[Word], args: list[Word], cmd: Command
) -> None:
    """A writer changes a file written earlier in the line: its content is no longer known,
    except that a copy carries its source's (``cp run.sh go.sh``) and a mode change keeps it."""
    if base in _CONTENT_KEPT:
        return
    operands = [a for a in args if a.value is not None and not a.value.startswith("-")]
    source = operands[0] if base in ("cp", "mv", "install") and len(operands) == 2 else None
    carried: str | None = None
    tracked = False
    if source is not None:
        for place in judge.resolved(source.value or "", cmd.cwds):
            if place in judge.scripts:
                carried, tracked = judge.scripts[place], True
    for word in targets:
        for place in judge.resolved(word.value or "", cmd.cwds) if word.value else ():
            if place is None:
                continue
            if tracked:
                judge.scripts[place] = carried
            elif source is not None and judge.inside_all(source.value or "", cmd.cwds):
                judge.scripts.pop(place, None)  # now a copy of a file of the workspace
            elif source is not None:
                judge.scripts[place] = None  # a copy of a file from outside: unknown
            elif place in judge.scripts:
                judge.scripts[place] = None


def record(judge: Judging, cmd: Command) -> None:
    """Files a command fills with the environment, for a network client later in the line."""
    if _dumps_environment(cmd):
        for r in cmd.redirects:
            if r.writes and r.target is not None and r.target.value:
                judge.tainted |= {p for p in judge.resolved(r.target.value, r.cwds) if p}


# paths piped to xargs ----------------------------------------------------------------------

_FILTERS = frozenset({"grep", "egrep", "fgrep", "rg", "sort", "uniq", "head", "tail", "tac", "cat"})
_GREP_VALUES = frozenset({"-e", "-f", "-m", "-A", "-B", "-C", "--regexp", "--file"})


def piped_paths(cmd: Command) -> list[Word] | None:
    """The folders (or files) every path piped into ``xargs`` lies under, when the pipeline
    only lists and filters paths: ``find DIR``, ``grep -l … DIR``, ``git ls-files``,
    ``ls``, ``echo PATHS``, through ``grep``/``sort``/``head``…; None when it could be anything."""
    if cmd.stdin != "pipe" or not cmd.upstream:
        return None
    roots: list[Word] = []
    for source in cmd.upstream:
        name = source.name.value if source.name is not None else None
        base = (name or "").rsplit("/", 1)[-1]
        args = source.args
        if any(a.value is None for a in args) or name is None:
            return None
        values = [a.value or "" for a in args]
        listing = _listed(base, args, values, source)
        if listing is not None:
            roots += listing
        elif base in _FILTERS and not [v for v in values[1:] if not v.startswith("-")]:
            continue  # filters lines it reads, adds none
        else:
            return None
    return roots or None


def _listed(base: str, args: list[Word], values: list[str], cmd: Command) -> list[Word] | None:
    here = [Word(cmd.text, ".", False, cmd.start)]
    if base == "find":
        starts = []
        for word in args:
            if (word.value or "").startswith(("-", "(", "!")):
                break
            starts.append(word)
        return starts or here
    if base in ("grep", "egrep", "fgrep", "rg") and (
        base == "rg" or any(re.fullmatch(r"-[a-zA-Z]*[lL][a-zA-Z]*", v) for v in values)
    ):
        if base == "rg" and not any(v in ("-l", "--files", "--files-with-matches") for v in values):
            return None
        operands: list[Word] = []
        skip = False
        for word in args:
            value = word.value or ""
            if skip:
                skip = False
            elif value in _GREP_VALUES:
                skip = True
            elif not value.startswith("-"):
                operands.append(word)
        explicit = any(
            v in ("-e", "-f", "--regexp", "--file") or v.startswith(("--regexp=", "--file="))
            for v in values
        )
        files = operands if explicit else operands[1:]
        return files or here
    if base == "git" and (values[:1] == ["ls-files"] or values[:2] == ["diff", "--name-only"]):
        return here
    if base == "ls":  # `ls -d ~/*` prints full paths: the folders listed bound them
        return [a for a in args if not (a.value or "").startswith("-")] or here
    if base == "echo":
        return [a for a in args if not (a.value or "").startswith("-")]
    return None


# git ---------------------------------------------------------------------------------------


def _git(judge: Judging, args: list[Word], cmd: Command, depth: int) -> None:
    i = 0
    sub: str | None = None
    while i < len(args):
        word = args[i]
        value = word.value
        if value is None:
            return
        nxt = args[i + 1] if i + 1 < len(args) else None
        if value == "-c" and nxt is not None:
            _git_key(judge, nxt, nxt.value, cmd, persistent=False)
            i += 2
            continue
        if value.startswith("--config-env"):
            key = value.partition("=")[2] if "=" in value else (nxt.value if nxt else None)
            _git_key(judge, word, (key or "").split("=", 1)[0] + "=", cmd, persistent=False)
            i += 1 if "=" in value else 2
            continue
        if value.startswith("--exec-path="):
            judge.undetermined(
                "program-exec", word, "git --exec-path chooses where git finds its commands"
            )
        if value in GIT_VALUES:
            i += 2
            continue
        if value.startswith("-"):
            i += 1
            continue
        sub = value
        break
    rest = args[i + 1 :]
    if sub in ("clone", "submodule"):
        for k, word in enumerate(rest):
            if word.value in ("-c", "--config") and k + 1 < len(rest):
                _git_key(judge, rest[k + 1], rest[k + 1].value, cmd, persistent=True)
            elif (word.value or "").startswith("--config="):
                _git_key(judge, word, (word.value or "")[9:], cmd, persistent=True)
    if sub == "config":
        _git_config(judge, rest, cmd)
    elif sub == "submodule" and any(w.value == "foreach" for w in rest):
        after = rest[[w.value for w in rest].index("foreach") + 1 :]
        operands = [w for w in after if not (w.value or "").startswith("-")]
        if operands:
            if any(w.value is None for w in operands):
                judge.undetermined(
                    "program-exec", operands[0], "submodule foreach, built at run time"
                )
            else:
                code = " ".join(w.value or "" for w in operands)
                judge.inline(code, operands[0], cmd, "the command git submodule foreach runs")
    elif sub == "bisect" and rest and rest[0].value == "run" and len(rest) > 1:
        judge.argv(rest[1:], cmd, hidden_args=False, depth=depth + 1)


def _git_key(
    judge: Judging, word: Word, setting: str | None, cmd: Command, *, persistent: bool
) -> None:
    """``key=value`` given to git: a key that runs a command is judged or refused."""
    if setting is None:
        judge.undetermined("program-exec", word, "git is configured with a key named at run time")
        return
    key, eq, value = setting.partition("=")
    lowered = key.lower()
    if not any(re.fullmatch(p, lowered) for p in judge.policy.git_exec_keys):
        return
    if persistent:
        judge.refuse("protected-path", word.text, word.start, f"sets {key}, which runs a command")
        return
    if lowered.startswith("alias."):
        if not value.startswith("!"):
            judge.undetermined(
                "program-exec", word, f"{key} is a git alias the gate does not expand"
            )
            return
        value = value[1:]
    if re.match(_GIT_PATH_KEYS, lowered) or not eq:
        judge.undetermined("program-exec", word, f"{key} makes git run a program")
        return
    judge.inline(value, word, cmd, f"the command git's {key} runs")


def _git_config(judge: Judging, rest: list[Word], cmd: Command) -> None:
    operands: list[Word] = []
    scope_file: Word | None = None
    setting = False
    words = iter(rest)
    for word in words:
        value = word.value
        if value is None:
            operands.append(word)
        elif value in ("-f", "--file"):
            scope_file = next(words, None)
        elif value.startswith("--file="):
            scope_file = Word(word.text, value[7:], word.glob, word.start)
        elif value in ("--global", "--system"):
            named = judge.home + "/.gitconfig" if value == "--global" else "/etc/gitconfig"
            scope_file = Word(word.text, named, False, word.start)
        elif value in _GIT_CONFIG_SETS:
            setting = True
        elif not value.startswith("-"):
            operands.append(word)
    if operands and operands[0].value in ("set", "unset", "edit", "rename-section"):
        setting, operands = True, operands[1:]
    elif operands and operands[0].value in ("get", "list"):
        return
    setting = setting or len(operands) >= 2
    if not setting:
        return
    if operands:
        key = operands[0]
        lowered = (key.value or "").lower()
        if key.value is None or any(re.fullmatch(p, lowered) for p in judge.policy.git_exec_keys):
            judge.refuse(
                "protected-path", key.text, key.start, f"sets {key.text}, which runs a command"
            )
    if scope_file is not None:
        judge.written(scope_file, cmd.cwds, cmd.text, cmd.start)


# package managers --------------------------------------------------------------------------


def _allowed_index(judge: Judging, url: str) -> bool:
    url = url.strip().rstrip("/")
    return any(url.startswith(i.rstrip("/")) for i in judge.policy.package_indexes)


def _index(judge: Judging, word: Word, value: str | None, how: str) -> None:
    if value is None:
        judge.refuse("package-index", word.text, word.start, f"{how} names an index at run time")
        return
    for part in re.split(r"[,|\s]+", value.strip()):
        if part and part not in ("direct", "off") and not _allowed_index(judge, part):
            judge.refuse("package-index", word.text, word.start, f"{how} uses {part}")
            return


def _packages(judge: Judging, base: str, args: list[Word], cmd: Command) -> None:
    for word, value in option_values(args, judge.policy.index_options[base]):
        _index(judge, word, value, base)
    operands = [w for w in args if not (w.value or "").startswith("-")]
    values = [w.value for w in operands]
    if "config" in values or (values[:1] == ["set"]):
        for k, word in enumerate(operands):
            key = (word.value or "").lower()
            if not any(part in key for part in ("registry", "index-url", "index_url")):
                continue
            if "=" in key:
                _index(judge, word, (word.value or "").split("=", 1)[1], f"{base} config")
            elif k + 1 < len(operands):
                nxt = operands[k + 1]
                _index(judge, nxt, nxt.value, f"{base} config {word.value}")
        return
    if not _INSTALLS.intersection(v for v in values if v):
        return
    for word in operands:
        value = word.value
        if (
            value is not None
            and re.search(_PACKAGE_URL, value)
            and not _allowed_index(judge, value)
        ):
            judge.refuse("package-index", word.text, word.start, f"installs from {value}")


def _go(judge: Judging, args: list[Word], cmd: Command) -> None:
    values = [a.value for a in args]
    if values[:2] == ["env", "-w"]:
        for word in args[2:]:
            name, _, value = (word.value or "").partition("=")
            if name in judge.policy.index_variables:
                _index(judge, word, value if word.value is not None else None, f"go env {name}")


def index_variables(judge: Judging, cmd: Command) -> None:
    for name, word in cmd.assignments:
        if name in judge.policy.index_variables:
            value = None if word is None else word.value
            where = word or Word(cmd.text, None, False, cmd.start)
            if word is None and cmd.keyword is None:
                continue  # `env NAME` without a value, or `unset`
            _index(judge, Word(where.text, value, False, where.start), value, f"{name}")


# the network -------------------------------------------------------------------------------


def _dumps_environment(cmd: Command) -> bool:
    if cmd.keyword in ("export", "declare", "typeset"):
        return not cmd.args or any((a.value or "") in ("-p", "-x", "-px") for a in cmd.args)
    name = cmd.name.value if cmd.name is not None else None
    base = (name or "").rsplit("/", 1)[-1]
    operands = [a for a in cmd.args if not (a.value or "-").startswith("-")]
    if base == "env":
        return not [a for a in operands if "=" not in (a.value or "")]
    if base == "printenv":
        return True
    if base == "set":
        return not cmd.args
    if base == "compgen":
        return any(a.value in ("-e", "-v") for a in cmd.args)
    return False


def _network(judge: Judging, base: str, args: list[Word], cmd: Command) -> None:
    for source in cmd.upstream:
        if _dumps_environment(source):
            judge.refuse(
                "secret-to-network", cmd.text, cmd.start, f"the environment is piped to {base}"
            )
            return
    for source in cmd.substitutions:
        if _dumps_environment(source):
            judge.refuse(
                "secret-to-network", source.text, source.start, f"{base} is handed the environment"
            )
            return
    if not judge.tainted:
        return
    words = [*args, *(r.target for r in cmd.redirects if r.operator == "<" and r.target)]
    for word in words:
        if word.value is not None and judge.places(word, cmd.cwds) & judge.tainted:
            judge.refuse(
                "secret-to-network", word.text, word.start, "a file holding the environment"
            )
