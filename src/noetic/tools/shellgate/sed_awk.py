"""What a sed or awk command can do beyond filtering text: run commands, write or read files.

sed's ``e`` command and ``s///e`` flag run shell commands, ``w``/``W`` and ``s///w`` write
files, ``r``/``R`` read them; awk's ``system()``, ``| "cmd"``, ``"cmd" | getline`` run commands,
``print > "file"`` writes one, ``getline < "file"`` reads one. Each program is read as its tool
reads it, and every such feature is returned as an :class:`Effect` whose ``value`` is the
command or path when the program spells it out, None when it is computed at run time. A program
the reader cannot follow is one :class:`Effect` of kind ``unknown``: the gate cannot bound it.
"""

from __future__ import annotations

import re
from functools import cache

from noetic.named import NamedTuple
from noetic.tools.shellgate.parsed_line import Command, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Literal

    from noetic.tools.shellgate.judging import Judging


class Effect(NamedTuple):
    kind: Literal["exec", "write", "read", "unknown"]
    value: str | None
    what: str  # how the program does it, for the refusal
    fed: bool = False  # the command reads the program's output


# sed ---------------------------------------------------------------------------------------

_SED_SIMPLE = set("=dDgGhHlnNpPxzFqQLv}")
_SED_LABEL = set("bBtT:")


def sed(script: str) -> list[Effect]:
    """The effects of one sed script (GNU sed's syntax)."""
    found: list[Effect] = []
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{!":
            i += 1
            continue
        if c == "#":
            i = _line_end(script, i)
            continue
        past = _sed_address(script, i)
        if past is None:
            return [Effect("unknown", None, "a sed address that does not parse")]
        i = past
        while i < n and script[i] in " \t!":
            i += 1
        if i >= n:
            break
        c = script[i]
        i += 1
        if c in "{};":
            continue
        if c in _SED_SIMPLE:
            while i < n and (script[i].isdigit() or script[i] in " \t"):
                i += 1
        elif c in _SED_LABEL:
            while i < n and script[i] not in ";\n":
                i += 1
        elif c in "aic":
            i = _sed_text(script, i)
        elif c in "rRwW":
            end = _line_end(script, i)
            path = script[i:end].strip()
            found.append(Effect("read" if c in "rR" else "write", path, f"sed {c} {path}"))
            i = end
        elif c == "e":
            end = _line_end(script, i)
            command = script[i:end].strip()
            found.append(Effect("exec", command or None, f"sed e {command}".strip()))
            i = end
        elif c in "sy":
            parsed = _sed_substitute(script, i, c, found)
            if parsed is None:
                return [Effect("unknown", None, f"a sed {c} command that does not parse")]
            i = parsed
        else:
            return [Effect("unknown", None, f"the sed command {c!r}")]
    return found


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _sed_address(s: str, i: int) -> int | None:
    """Past the address(es) at ``i`` (none is fine)."""
    for part in range(2):
        if i >= len(s):
            return i
        c = s[i]
        if c.isdigit():
            while i < len(s) and (s[i].isdigit() or s[i] == "~"):
                i += 1
        elif c == "$":
            i += 1
        elif c in "+~" and part == 1:
            i += 1
            while i < len(s) and s[i].isdigit():
                i += 1
        elif c == "/" or c == "\\":
            delim = "/" if c == "/" else (s[i + 1] if i + 1 < len(s) else "")
            start = i + 1 if c == "/" else i + 2
            end = _delimited(s, start, delim)
            if end is None:
                return None
            i = end + 1
            while i < len(s) and s[i] in "IM":
                i += 1
        elif part == 1:
            return None
        else:
            return i
        if part == 0:
            if i < len(s) and s[i] == ",":
                i += 1
                continue
            return i
    return i


def _delimited(s: str, i: int, delim: str) -> int | None:
    """The index of the unescaped ``delim`` ending a part that starts at ``i``."""
    if not delim or delim in "\n\\":
        return None
    while i < len(s):
        if s[i] == "\\":
            i += 2
            continue
        if s[i] == delim:
            return i
        if s[i] == "\n" and delim != "\n":
            return None
        i += 1
    return None


def _sed_text(s: str, i: int) -> int:
    """Past the text of ``a``, ``i`` or ``c`` (lines continued by a trailing backslash)."""
    while i < len(s):
        end = _line_end(s, i)
        line = s[i:end]
        i = end + 1
        if not line.endswith("\\"):
            break
    return i


def _sed_substitute(s: str, i: int, c: str, found: list[Effect]) -> int | None:
    if i >= len(s):
        return None
    delim = s[i]
    first = _delimited(s, i + 1, delim)
    if first is None:
        return None
    second = _delimited(s, first + 1, delim)
    if second is None:
        return None
    i = second + 1
    if c == "y":
        return i
    while i < len(s) and s[i] not in ";\n}":
        flag = s[i]
        if flag == "w":
            end = _line_end(s, i + 1)
            path = s[i + 1 : end].strip()
            found.append(Effect("write", path, f"sed s///w {path}"))
            return end
        if flag == "e":
            found.append(Effect("exec", None, "sed s///e (runs the pattern space)"))
        elif not (flag.isdigit() or flag in "gpiImM \t"):
            return None
        i += 1
    return i


# awk ---------------------------------------------------------------------------------------


@cache
def _awk_token() -> re.Pattern[str]:
    return re.compile(
        r"""
        (?P<space>[ \t]+|\\\n)
      | (?P<comment>\#[^\n]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*")
      | (?P<name>@?[A-Za-z_][A-Za-z0-9_]*)
      | (?P<number>\d+(?:\.\d*)?(?:[eE][-+]?\d+)?|\.\d+)
      | (?P<op>\|\||\|&|\||>>|>=|>|<=|<|&&|\+\+|--|==|!=|[-+*/%^!~?:=,;(){}\[\]$\n])
        """,
        re.VERBOSE,
    )


_OPERAND_END = {"name", "number", "string", "regex", ")", "]", "$", "++", "--"}


def awk(program: str) -> list[Effect]:
    """The effects of one awk program (POSIX awk with gawk's ``|&`` and ``@load``)."""
    tokens = _awk_tokens(program)
    if tokens is None:
        return [Effect("unknown", None, "an awk program that does not tokenise")]
    found: list[Effect] = []
    in_print = False
    depth = 0

    def at(k: int) -> tuple[str, str]:  # an empty token before the first and past the last
        return tokens[k] if 0 <= k < len(tokens) else ("", "")

    for k, (kind, text) in enumerate(tokens):
        before, after = at(k - 1), at(k + 1)
        if kind == "name" and text in ("print", "printf"):
            in_print, depth = True, 0
        elif kind == "name" and text.startswith("@"):
            found.append(Effect("unknown", None, f"awk {text}"))
        elif text == "(":
            depth += 1
        elif text == ")":
            depth -= 1
        elif text in (";", "\n", "{", "}"):
            in_print = False
        elif kind == "name" and text == "system" and after[1] == "(":
            literal = at(k + 2)[0] == "string" and at(k + 3)[1] == ")"
            found.append(
                Effect("exec", _awk_string(at(k + 2)[1]) if literal else None, "awk system()")
            )
        elif text in ("|", "|&"):
            if before[0] == "string" and after[1] == "getline":
                found.append(Effect("exec", _awk_string(before[1]), f"awk {before[1]} | getline"))
            elif after[0] == "string" and at(k + 2)[1] in ("", ";", "\n", "}", ")"):
                found.append(Effect("exec", _awk_string(after[1]), f"awk | {after[1]}", fed=True))
            else:
                found.append(Effect("exec", None, f"awk {text} (a command built at run time)"))
        elif text in (">", ">>") and in_print and depth == 0:
            literal = after[0] == "string" and at(k + 2)[1] in ("", ";", "\n", "}")
            value = _awk_string(after[1]) if literal else None
            found.append(Effect("write", value, f"awk print {text} {after[1]}"))
        elif text == "<" and "getline" in (before[1], at(k - 2)[1]):
            value = _awk_string(after[1]) if after[0] == "string" else None
            if value is not None:
                found.append(Effect("read", value, f"awk getline < {after[1]}"))
    return found


def _awk_tokens(program: str) -> list[tuple[str, str]] | None:
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(program):
        if program[i] == "/" and (not tokens or tokens[-1][0] not in _OPERAND_END):
            end = _awk_regex_end(program, i + 1)
            if end is None:
                return None
            tokens.append(("regex", program[i : end + 1]))
            i = end + 1
            continue
        m = _awk_token().match(program, i)
        if m is None:
            return None
        kind = m.lastgroup or ""
        if kind not in ("space", "comment"):
            text = m.group()
            if kind == "op":
                kind = text if text in (")", "]", "$", "++", "--") else "op"
            tokens.append((kind, text))
        i = m.end()
    return tokens


def _awk_regex_end(program: str, i: int) -> int | None:
    bracket = False
    while i < len(program):
        c = program[i]
        if c == "\\":
            i += 2
            continue
        if c == "\n":
            return None
        if c == "[":
            bracket = True
        elif c == "]":
            bracket = False
        elif c == "/" and not bracket:
            return i
        i += 1
    return None


_AWK_ESCAPES = {"n": "\n", "t": "\t", '"': '"', "\\": "\\", "/": "/"}


def _awk_string(token: str) -> str | None:
    """An awk string literal's value; None for an escape outside :data:`_AWK_ESCAPES`."""
    if len(token) < 2 or token[0] != '"':
        return None
    body = token[1:-1]
    if "\\" not in body:
        return body
    if not re.fullmatch(r'(?:[^\\]|\\[nt"\\/])*', body):
        return None
    return re.sub(r"\\(.)", lambda m: _AWK_ESCAPES[m.group(1)], body)


# the command line --------------------------------------------------------------------------

_SED_VALUES = ("-l", "--line-length")
_AWK_VALUES = ("-v", "--assign", "-F", "--field-separator")


def judge_program(judge: Judging, base: str, args: list[Word], cmd: Command) -> None:
    """A sed or awk command: what its programs run, write and read."""
    if base in judge.policy.allow_interpreters:
        return
    kind = judge.policy.programs[base]
    scripts, word = program_text(kind, args)
    if scripts is None:
        judge.undetermined(
            "program-exec", word or cmd.name or args[0], f"{base} reads a program from a file"
        )
        return
    for script, where in scripts:
        if script is None:
            judge.undetermined("program-exec", where, f"the {base} program is built at run time")
            continue
        read = sed(script) if kind == "sed" else awk(script)
        for found in read:
            effect(judge, found, where, cmd)


def effect(judge: Judging, effect: Effect, where: Word, cmd: Command) -> None:
    if effect.kind == "unknown":
        judge.undetermined("program-exec", where, effect.what)
    elif effect.kind == "exec":
        if effect.value is None:
            judge.undetermined("program-exec", where, effect.what)
        else:  # a command awk prints into reads that output as its input
            code = f": | {effect.value}" if effect.fed else effect.value
            judge.inline(code, where, cmd, effect.what)
    elif effect.value is None:
        judge.refuse("dynamic-path", where.text, where.start, effect.what)
    else:
        path = Word(where.text, effect.value, False, where.start)
        judge.path_rules([path], cmd.cwds, write=effect.kind == "write", part=where.text)
        if effect.kind == "write" and effect.value not in ("/dev/stdout", "/dev/stderr"):
            judge.written(path, cmd.cwds, where.text, where.start)


def program_text(
    kind: str, args: list[Word]
) -> tuple[list[tuple[str | None, Word]] | None, Word | None]:
    """The program(s) of a sed or awk command line and the words holding them; None when a
    program comes from a file (``-f``), or a sandbox option makes it inert (an empty list)."""
    scripts: list[tuple[str | None, Word]] = []
    expressions = ("-e", "--expression") if kind == "sed" else ("-e", "--source")
    files = (
        ("-f", "--file")
        if kind == "sed"
        else ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load")
    )
    values = _SED_VALUES if kind == "sed" else _AWK_VALUES
    words = iter(args)
    operand_seen = False
    for word in words:
        value = word.value
        if value is None:
            if not scripts and not operand_seen:
                scripts.append((None, word))
            operand_seen = True
            continue
        name, eq, attached = value.partition("=")
        if value == "--sandbox" or (kind == "awk" and value == "-S"):
            return [], None
        if name in files or (value[:2] in files and not value.startswith("--") and len(value) > 2):
            return None, word
        if name in expressions:
            nxt = attached if eq else next(words, None)
            if isinstance(nxt, Word):
                scripts.append((nxt.value, nxt))
            else:
                scripts.append((nxt, word))
            continue
        if value[:2] in expressions and not value.startswith("--") and len(value) > 2:
            scripts.append((value[2:], word))
            continue
        if value in values:
            next(words, None)
            continue
        if value.startswith("-") and len(value) > 1:
            continue
        if not scripts and not operand_seen:
            scripts.append((value, word))
        operand_seen = True
    return scripts, None
