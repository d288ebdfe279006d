"""A shell command as the gate sees it: simple commands, their words, redirections and context.

The command is parsed by tree-sitter's Bash grammar into a syntax tree; a tree with an error or
a missing node is a command that does not parse (:class:`Unparseable`). The tree is then walked
once into flat records the policy can judge without knowing the grammar:

- every simple command that could run — at top level, in a pipeline, a list, a subshell, a loop
  or a function body, inside ``$(…)``, backticks or ``<(…)`` — as a :class:`Command` with its
  name and arguments as :class:`Word` s;
- a word's ``value`` is its text after quote removal (``'r'"m"`` and ``r\\m`` are ``rm``), with
  ``~``, ``$HOME`` and ``$PWD`` expanded; a word holding any other expansion or substitution has
  no value: the gate cannot see what it will be;
- what feeds a command's standard input (a pipe from earlier commands, a here-document, a file);
- every redirection, with the folders the command might run in: ``cd`` is followed through
  sequences, and each ``cd`` adds its target to the possible working folders rather than
  replacing them, since it may fail.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

MAX_DEPTH = 80
"""Nesting beyond this (substitutions in substitutions…) is refused rather than analysed."""

_GLOB = frozenset("*?[{")
_SEQUENTIAL = frozenset({"program", "compound_statement", "do_group", "list"})
_BRANCHING = frozenset(
    {
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "case_item",
    }
)
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})


class Unparseable(Exception):
    """The text is not a complete shell command; ``part`` is the first piece that is wrong."""

    def __init__(self, part: str, start: int) -> None:
        super().__init__(part)
        self.part = part
        self.start = start


class TooComplex(Exception):
    """The command nests deeper than :data:`MAX_DEPTH`."""


@dataclass(frozen=True)
class Word:
    """One word of a command. ``value`` is None when an expansion hides what it will be."""

    text: str
    value: str | None
    glob: bool = False
    start: int = 0


@dataclass
class Redirect:
    operator: str
    target: Word | None
    text: str
    start: int
    cwds: frozenset[str] | None
    descriptor: str | None = None

    @property
    def writes(self) -> bool:
        return self.operator in {">", ">>", ">|", "&>", "&>>", ">&"} and not (
            self.target is not None and (self.target.value or "").isdigit()
        )


@dataclass
class Command:
    """A simple command that could run: ``name`` (None for a bare assignment) and ``args``."""

    name: Word | None
    args: list[Word]
    text: str
    start: int
    cwds: frozenset[str] | None
    assignments: list[tuple[str, Word | None]] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    stdin: str | None = None  # "pipe", "heredoc", "herestring", "file"
    upstream: list[Command] = field(default_factory=list)
    substitutions: list[Command] = field(default_factory=list)
    keyword: str | None = None  # export, declare, unset…: the builtin this record stands for


@dataclass
class Function:
    name: str
    text: str
    start: int
    calls: list[Command]


@dataclass
class Script:
    """Everything a command line would run."""

    text: str
    commands: list[Command]
    redirects: list[Redirect]
    functions: list[Function]

    def argv(self) -> list[Word] | None:
        """The words of a line that is one plain command — no pipe, list, redirection,
        assignment, substitution or unknown word — which can run without a shell; else None."""
        if len(self.commands) != 1 or self.redirects or self.functions:
            return None
        cmd = self.commands[0]
        if cmd.name is None or cmd.keyword or cmd.assignments or cmd.substitutions:
            return None
        if cmd.stdin is not None or cmd.text.strip() != self.text.strip():
            return None
        words = [cmd.name, *cmd.args]
        if any(w.value is None or (w.glob and "{" in w.text) for w in words):
            return None
        return words


# The grammar sees every byte of a non-ASCII character as the letter "a": tree-sitter-bash's
# scanner can crash on some characters (a "{" before a private-use one), and Bash's syntax is all
# ASCII, so the tree is the same except that "$é" may read as a variable, which only makes a
# word unknown. Every text is taken from the original bytes by offset.
_ASCII_ONLY = bytes(b if b < 0x80 else 0x61 for b in range(256))


@cache
def _parser() -> Any:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def parse(text: str, *, home: str, workspace: str, cwd: str | None = None) -> Script:
    """Parse ``text`` and collect what it would run from ``cwd`` (the workspace unless given;
    every path here is a real path)."""
    source = text.encode("utf-8", errors="surrogatepass")
    tree = _parser().parse(source.translate(_ASCII_ONLY))
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        part = _slice(source, bad) if bad is not None else text
        start = len(source[: bad.start_byte].decode("utf-8", "replace")) if bad else 0
        raise Unparseable(part or text[start : start + 20] or text, start)
    stray = _stray_token(root, source)
    if stray is not None:
        raise Unparseable(
            _slice(source, stray),
            len(source[: stray.start_byte].decode("utf-8", "replace")),
        )
    walker = _Walker(source, home=home, workspace=workspace)
    walker.visit(root, _State(frozenset({cwd or workspace})), 0)
    return Script(text, walker.commands, walker.redirects, walker.functions)


def _first_error(node: Any) -> Any:
    if node.is_error or node.is_missing:
        return node
    for child in node.children:
        if child.has_error or child.is_missing:
            return _first_error(child)
    return None


_RESERVED = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "in", "}", "]]"})


def _slice(source: bytes, node: Any) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _stray_token(root: Any, source: bytes) -> Any:
    """A token Bash refuses where the grammar is lenient: ``;;`` outside ``case``, or a
    reserved word such as ``fi`` or ``done`` standing as a command's name."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in (";;", ";&", ";;&") and (
            node.parent is None or node.parent.type != "case_item"
        ):
            return node
        if node.type == "command_name" and _slice(source, node) in _RESERVED:
            return node
        stack.extend(node.children)
    return None


@dataclass
class _State:
    cwds: frozenset[str] | None  # None: the gate no longer knows where the command runs

    def copy(self) -> _State:
        return _State(self.cwds)


class _Walker:
    def __init__(self, source: bytes, *, home: str, workspace: str) -> None:
        self.source = source
        self.home = home
        self.workspace = workspace
        self.commands: list[Command] = []
        self.redirects: list[Redirect] = []
        self.functions: list[Function] = []

    # positions and text ---------------------------------------------------------------------

    def text(self, node: Any) -> str:
        return self.source[node.start_byte : node.end_byte].decode("utf-8", errors="surrogatepass")

    def pos(self, node: Any) -> int:
        return len(self.source[: node.start_byte].decode("utf-8", errors="surrogatepass"))

    # the walk ---------------------------------------------------------------------------------

    def visit(self, node: Any, st: _State, depth: int) -> list[Command]:
        """Every command ``node`` could run, recorded and returned."""
        if depth > MAX_DEPTH:
            raise TooComplex
        kind = node.type
        if kind == "comment":
            return []
        if kind == "command":
            return self._command(node, st, depth)
        if kind in ("variable_assignment", "declaration_command", "unset_command"):
            return self._builtin(node, st, depth)
        if kind == "pipeline":
            return self._pipeline(node, st, depth)
        if kind == "redirected_statement":
            return self._redirected(node, st, depth)
        if kind == "function_definition":
            return self._function(node, st, depth)
        if kind in ("subshell", *_SUBSTITUTIONS):
            return self._children(node, st.copy(), depth)
        if kind in _BRANCHING:
            inner = st.copy()
            found = self._children(node, inner, depth)
            if inner.cwds != st.cwds:  # a loop or a branch may or may not have changed folder
                st.cwds = None if inner.cwds is None or st.cwds is None else st.cwds | inner.cwds
            return found
        return self._children(node, st, depth)  # program, lists, test commands, negation…

    def _children(self, node: Any, st: _State, depth: int) -> list[Command]:
        found: list[Command] = []
        for child in node.named_children:
            found += self.visit(child, st, depth + 1)
        return found

    def _pipeline(self, node: Any, st: _State, depth: int) -> list[Command]:
        found: list[Command] = []
        for i, element in enumerate(node.named_children):
            part = self.visit(element, st.copy(), depth + 1)
            if i > 0:
                for cmd in part:
                    if cmd.stdin is None:
                        cmd.stdin = "pipe"
                    cmd.upstream = [*found, *cmd.upstream]
            found += part
        return found

    def _redirected(self, node: Any, st: _State, depth: int) -> list[Command]:
        body = node.child_by_field_name("body")
        found = self.visit(body, st, depth + 1) if body is not None else []
        after: list[Command] = []
        for i, child in enumerate(node.children):
            if node.field_name_for_child(i) != "redirect":
                continue
            if child.type == "heredoc_redirect":
                after += self._heredoc(child, st, depth, found)
            elif child.type == "herestring_redirect":
                for cmd in found:
                    cmd.stdin = cmd.stdin or "herestring"
                after += self._children(child, st.copy(), depth)
            else:
                self._file_redirect(child, st, depth, found)
        return found + after

    def _heredoc(self, node: Any, st: _State, depth: int, body: list[Command]) -> list[Command]:
        for cmd in body:
            cmd.stdin = cmd.stdin or "heredoc"
        quoted = any(
            c.type == "heredoc_start" and self.text(c)[:1] in "'\"\\" for c in node.children
        )
        found: list[Command] = []
        for i, child in enumerate(node.children):
            kind = child.type
            if kind in ("heredoc_start", "heredoc_end") or not child.is_named:
                continue
            if kind == "heredoc_body":
                if not quoted:  # an unquoted here-document expands $(…)
                    found += self._children(child, st.copy(), depth)
                continue
            if node.field_name_for_child(i) == "redirect":
                self._file_redirect(child, st, depth, body)
                continue
            part = self.visit(child, st, depth + 1)
            if kind == "pipeline":  # `cat <<EOF | sh`: the body feeds the pipeline's first part
                for cmd in part:
                    cmd.stdin = cmd.stdin or "pipe"
                    cmd.upstream = [*body, *cmd.upstream]
            found += part
        return found

    def _file_redirect(self, node: Any, st: _State, depth: int, body: list[Command]) -> None:
        target_node = node.child_by_field_name("destination")
        operator = next((self.text(c) for c in node.children if not c.is_named), "")
        descriptor = node.child_by_field_name("descriptor")
        subs = self._substitutions(target_node, st, depth) if target_node is not None else []
        target = self.word(target_node, st) if target_node is not None else None
        redirect = Redirect(
            operator=operator,
            target=target,
            text=self.text(node),
            start=self.pos(node),
            cwds=st.cwds,
            descriptor=self.text(descriptor) if descriptor is not None else None,
        )
        self.redirects.append(redirect)
        for cmd in body:
            cmd.redirects.append(redirect)
            cmd.substitutions += subs
            if operator == "<" and (descriptor is None or self.text(descriptor) == "0"):
                cmd.stdin = cmd.stdin or "file"

    def _function(self, node: Any, st: _State, depth: int) -> list[Command]:
        name = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        calls = self.visit(body, st.copy(), depth + 1) if body is not None else []
        if name is not None:
            self.functions.append(Function(self.text(name), self.text(node), self.pos(node), calls))
        return calls

    def _substitutions(self, node: Any, st: _State, depth: int) -> list[Command]:
        """The commands inside ``$(…)``, backticks and ``<(…)`` anywhere within ``node``."""
        if node.type in _SUBSTITUTIONS:
            return self.visit(node, st, depth + 1)
        found: list[Command] = []
        for child in node.named_children:
            found += self._substitutions(child, st, depth + 1)
        return found

    def _command(self, node: Any, st: _State, depth: int) -> list[Command]:
        name: Word | None = None
        args: list[Word] = []
        assignments: list[tuple[str, Word | None]] = []
        subs: list[Command] = []
        herestring = False
        redirects: list[Any] = []
        for i, child in enumerate(node.children):
            role = node.field_name_for_child(i)
            if not child.is_named:
                continue
            if child.type == "herestring_redirect":
                herestring = True
                subs += self._substitutions(child, st, depth)
            elif role == "redirect":
                redirects.append(child)
            elif child.type == "variable_assignment":
                subs += self._substitutions(child, st, depth)
                assignments.append(self._assignment(child, st))
            elif role == "name":
                subs += self._substitutions(child, st, depth)
                inner = child.named_children[0] if len(child.named_children) == 1 else child
                name = self.word(inner, st)
            else:
                subs += self._substitutions(child, st, depth)
                args.append(self.word(child, st))
        cmd = Command(
            name=name,
            args=args,
            text=self.text(node),
            start=self.pos(node),
            cwds=st.cwds,
            assignments=assignments,
            substitutions=subs,
            stdin="herestring" if herestring else None,
        )
        for child in redirects:  # `ls > out` is one command node holding its redirection
            self._file_redirect(child, st, depth, [cmd])
        self._follow_cd(cmd, st)
        self.commands.append(cmd)
        return [cmd, *subs]

    def _builtin(self, node: Any, st: _State, depth: int) -> list[Command]:
        """A bare ``NAME=value``, or ``export``/``declare``/``local``/``readonly``/``unset``."""
        subs = self._substitutions(node, st, depth)
        assignments: list[tuple[str, Word | None]] = []
        args: list[Word] = []
        keyword = None
        if node.type == "variable_assignment":
            assignments.append(self._assignment(node, st))
        else:
            keyword = self.text(node.children[0])
            for child in node.named_children:
                if child.type == "variable_assignment":
                    assignments.append(self._assignment(child, st))
                elif child.type == "variable_name":
                    args.append(Word(self.text(child), self.text(child), start=self.pos(child)))
                    if keyword != "unset":
                        assignments.append((self.text(child), None))
                else:
                    args.append(self.word(child, st))
        cmd = Command(
            name=Word(keyword, keyword, start=self.pos(node)) if keyword else None,
            args=args,
            text=self.text(node),
            start=self.pos(node),
            cwds=st.cwds,
            assignments=assignments,
            substitutions=subs,
            keyword=keyword,
        )
        self.commands.append(cmd)
        return [cmd, *subs]

    def _assignment(self, node: Any, st: _State) -> tuple[str, Word | None]:
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        return (
            self.text(name) if name is not None else "",
            self.word(value, st) if value is not None else None,
        )

    def _follow_cd(self, cmd: Command, st: _State) -> None:
        if cmd.name is None or cmd.name.value not in ("cd", "pushd", "popd", "chdir"):
            return
        if st.cwds is None:
            return
        targets = [a for a in cmd.args if not (a.value or "").startswith("-") or a.value == "-"]
        if cmd.name.value == "popd" or any(a.value in (None, "-") or a.glob for a in targets):
            st.cwds = None
            return
        dest = targets[0].value if targets else self.home
        assert dest is not None
        resolved = {resolve(dest, cwd) for cwd in st.cwds}
        st.cwds = st.cwds | frozenset(resolved)

    # words ------------------------------------------------------------------------------------

    def word(self, node: Any, st: _State) -> Word:
        value, glob = self._value(node, st, first=True)
        return Word(self.text(node), value, glob, self.pos(node))

    def _value(self, node: Any, st: _State, *, first: bool) -> tuple[str | None, bool]:
        kind = node.type
        text = self.text(node)
        if kind == "word":
            value = _unescape(text)
            if first and value.startswith("~") and not text.startswith("\\"):
                head, sep, rest = value.partition("/")
                if head != "~":
                    return None, False  # ~user: someone else's home
                value = self.home + (sep + rest if sep else "")
            return value, any(c in _GLOB for c in _unquoted(text))
        if kind == "number":
            return text, False
        if kind == "raw_string":
            return text[1:-1], False
        if kind == "ansi_c_string":
            return _unescape_ansi_c(text[2:-1]), False
        if kind == "string":
            parts: list[str] = []
            for child in node.named_children:
                if child.type == "string_content":
                    parts.append(_unescape_double(self.text(child)))
                else:
                    inner, _ = self._value(child, st, first=False)
                    if inner is None:
                        return None, False
                    parts.append(inner)
            return "".join(parts), False
        if kind in ("simple_expansion", "expansion"):
            names = [c for c in node.named_children if c.type == "variable_name"]
            if len(names) == 1 and len(node.named_children) == 1:
                var = self.text(names[0])
                if var == "HOME":
                    return self.home, False
                if var == "PWD" and st.cwds is not None and len(st.cwds) == 1:
                    return next(iter(st.cwds)), False
            return None, False
        if kind == "concatenation":
            out: list[str] = []
            glob = False
            for i, child in enumerate(node.named_children):
                inner, g = self._value(child, st, first=first and i == 0)
                if inner is None:
                    return None, False
                out.append(inner)
                glob = glob or g
            return "".join(out), glob
        return None, False


def _unescape(text: str) -> str:
    out: list[str] = []
    chars = iter(text)
    for c in chars:
        if c == "\\":
            nxt = next(chars, "")
            if nxt != "\n":
                out.append(nxt)
        else:
            out.append(c)
    return "".join(out)


_ANSI_C_SIMPLE = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}
_ANSI_C_ESCAPE = re.compile(
    r"\\(?:([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|(c)|(.?))",
    re.DOTALL,
)


def _unescape_ansi_c(body: str) -> str | None:
    """The value of ``$'body'`` as bash gives it; None where it is a byte that is not text
    (an octal or hex escape above 0x7f, an invalid code point) or a control escape (``\\c``),
    so the gate treats the word as unknown rather than guess."""
    unknown = False

    def one(m: re.Match[str]) -> str:
        nonlocal unknown
        octal, hexa, short, long, control, other = m.groups()
        number = octal or hexa or short or long
        if number is not None:
            code = int(number, 8 if octal else 16)
            if ((octal or hexa) and code > 0x7F) or code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                unknown = True
                return ""
            return chr(code)
        if control is not None:
            unknown = True
            return ""
        return _ANSI_C_SIMPLE.get(other, "\\" + other)  # bash keeps an unknown escape

    value = _ANSI_C_ESCAPE.sub(one, body)
    return None if unknown else value


def _unescape_double(text: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text) and text[i + 1] in '$`"\\\n':
            if text[i + 1] != "\n":
                out.append(text[i + 1])
            i += 2
            continue
        out.append(c)
        i += 1
    return "".join(out)


def _unquoted(text: str) -> str:
    """The characters of an unquoted word that are not escaped by a backslash."""
    out: list[str] = []
    escaped = False
    for c in text:
        if escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        else:
            out.append(c)
    return "".join(out)


def resolve(path: str, cwd: str) -> str:
    """``path`` made absolute against ``cwd``, ``..`` folded, symlinks of existing parts
    followed."""
    joined = path if path.startswith("/") else os.path.join(cwd, path)
    return os.path.realpath(os.path.normpath(joined))
