"""How commands spell their options, read as getopt, GNU and git read them.

A long option may be abbreviated to any unambiguous prefix (``--forc``, ``--target=``), short
options cluster (``-qc CMD``, ``cp -rt DIR``) and take their value attached (``-oFILE``,
``-c"code"``); the gate finds an option's value however it is spelled, so a capability tied to
an option (a path written, a command run, code handed over) is never missed for its spelling.
"""

from __future__ import annotations

import re

from noetic.tools.shellgate.parsed_line import Word

GIT_VALUES = ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env")


def first_operand(args: list[Word], values: tuple[str, ...] = GIT_VALUES) -> int | None:
    """Where the first operand is: a word that is neither an option nor the value of one of
    ``values`` (git's subcommand after ``-C DIR -c K=V``); a word known only at run time is one."""
    skip = False
    for i, word in enumerate(args):
        if skip:
            skip = False
        elif word.value is None or not word.value.startswith("-"):
            return i
        else:
            skip = word.value in values
    return None


def abbreviates(given: str, option: str) -> bool:
    """GNU getopt and git take any unambiguous prefix of a long option: ``--forc``."""
    return len(given) > 3 and option.startswith(given)


def option_is(value: str, option: str) -> bool:
    if option.startswith("--"):
        name = value.split("=", 1)[0]
        return name == option or abbreviates(name, option)
    return value == option


def option_values(args: list[Word], options: tuple[str, ...]) -> list[tuple[Word, str | None]]:
    """(word, value) for each use of ``options``: ``-o V``, ``-oV``, ``--opt V``, ``--opt=V``,
    ``--op=V``, and ``of=V`` for an option spelled with ``=``; an option spelled
    ``--opt=prefix=`` is used only when its value starts with ``prefix=`` (tar's
    ``--checkpoint-action=exec=CMD``). ``rest`` takes every operand after the options, joined."""
    found: list[tuple[Word, str | None]] = []
    for i, word in enumerate(args):
        value = word.value
        nxt = args[i + 1] if i + 1 < len(args) else None
        if value is None:
            spelled = [o.partition("=")[0] for o in options if o.startswith("--")]
            if any(word.text.startswith(o + "=") for o in spelled):
                found.append((word, None))  # `--to-command="$CMD"`
            continue
        for option in options:
            if option == "rest":
                continue
            head, _, prefix = option.partition("=")
            if option.endswith("=") and not head.startswith("-"):  # dd's of=
                if value.startswith(option):
                    found.append((word, value[len(option) :]))
                continue
            given, eq, attached = value.partition("=")
            if head.startswith("--") and given.startswith("--") and option_is(given, head):
                got = attached if eq else (nxt.value if nxt is not None else None)
                where = word if eq or nxt is None else nxt
                if prefix:
                    if got is not None and got.startswith(prefix):
                        found.append((where, got[len(prefix) :]))
                    elif got is None:
                        found.append((where, None))
                else:
                    found.append((where, got))
            elif len(head) == 2 and not head.startswith("--"):
                clustered = re.fullmatch(r"-[A-Za-z]+", value) and value.endswith(head[1])
                if value == head or clustered:  # `-c CMD`, `-qc CMD`, `cp -rt DIR`
                    if nxt is not None:
                        found.append((nxt, nxt.value))
                elif value.startswith(head) and not value.startswith("--") and len(value) > 2:
                    found.append((word, value[2:]))
            elif value == head and nxt is not None:  # -fprint FILE
                found.append((nxt, nxt.value))
    if "rest" in options:
        operands = [a for a in args if not (a.value or "").startswith("-")]
        if operands:
            known = all(a.value is not None for a in operands)
            found.append(
                (operands[0], " ".join(a.value or "" for a in operands) if known else None)
            )
    return found


def split_string(args: list[Word], i: int) -> tuple[str | None, int] | None:
    """``env -S STRING`` / ``-SSTRING`` / ``--split-string=STRING`` / an abbreviation: the
    string and how many words it took."""
    value = args[i].value or ""
    if value.startswith("--"):
        name, eq, attached = value.partition("=")
        if len(name) < 3 or not "--split-string".startswith(name):  # GNU takes `--s`
            return None
        if eq:
            return attached, 1
        return (args[i + 1].value if i + 1 < len(args) else ""), 2
    m = re.fullmatch(r"-([a-zA-Z0]*?)S(.*)", value, re.DOTALL)
    if m is None or any(c not in "i0v" for c in m.group(1)):
        return None
    if m.group(2):
        return m.group(2), 1
    return (args[i + 1].value if i + 1 < len(args) else ""), 2


def code_on_line(
    args: list[Word], code_flags: tuple[str, ...], takes_value: tuple[str, ...] | None
) -> tuple[str, str | None, Word, list[Word]] | None:
    """The code handed on the command line: ``-c CODE``, ``-cCODE``, ``-Ic CODE``, ``-le'…'``,
    ``--eval=CODE``; or the module of ``-m MODULE``. Returns (kind, code, word, rest)."""
    letters = {f[1] for f in code_flags if len(f) == 2 and f[0] == "-"}
    values = {v.lstrip("-") for v in takes_value or ()}
    longs = [f for f in code_flags if f.startswith("--") or (f[:1] == "-" and len(f) > 2)]
    words = [f for f in code_flags if not f.startswith("-")]  # deno eval CODE
    skip = False
    for i, word in enumerate(args):
        value = word.value
        nxt = args[i + 1] if i + 1 < len(args) else None
        if skip:
            skip = False
            continue
        if value is None or value == "--":
            return None
        if value in words and i == 0:
            return ("code", nxt.value if nxt else "", nxt or word, [])
        for flag in longs:
            name, eq, attached = value.partition("=")
            if name == flag or (flag.startswith("--") and abbreviates(name, flag)):
                if eq:
                    return ("code", attached, word, [])
                return ("code", nxt.value if nxt else "", nxt or word, [])
        if not value.startswith(("-", "+")) or value.startswith("--") or value in ("-", "+"):
            if value.startswith("--"):  # a long option of the interpreter's own (--norc)
                skip = value[2:] in values  # `--rcfile FILE`
                continue
            return None  # the first operand: a script file, whose arguments follow
        for j, letter in enumerate(value[1:], start=1):
            if letter in letters and value[0] == "-":
                rest = value[j + 1 :]
                if rest:
                    return ("code", rest, word, [])
                return ("code", nxt.value if nxt else "", nxt or word, [])
            if letter == "m" and "m" in values:
                module = value[j + 1 :] or (nxt.value if nxt else None)
                after = args[i + 1 :] if value[j + 1 :] else args[i + 2 :]
                if module is None:
                    return ("code", None, word, [])
                return ("module", module, word, after)
            if letter in values:
                skip = j == len(value) - 1  # `-W arg`: the next word is this option's value
                break  # `-Warg`: the rest of the word is
    return None
