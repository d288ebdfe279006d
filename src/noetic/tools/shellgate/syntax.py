"""A shell command as the gate sees it: simple commands, their words, redirections and context.

tree-sitter's Bash grammar parses the command (a tree with an error or a missing node is
:class:`Unparseable`), and one walk makes flat records the policy can judge without knowing the
grammar: every simple command that could run, wherever it is nested, with its words after quote
removal, brace and tilde expansion (a word holding any other expansion has no value: the gate
cannot see what it will be), what feeds its standard input, its redirections, and the folders it
may run in (each ``cd`` adds its target rather than replacing, since it may fail). docs/agent.md,
"What the gate sees", says what is followed and what is refused.
"""

from __future__ import annotations

import re
from functools import cache

from noetic.tools.shellgate.expand import (
    Chars,
    TooMany,
    braces,
    globbed,
    tilde,
    unescape_ansi_c,
)
from noetic.tools.shellgate.links import follow, record_links, resolve
from noetic.tools.shellgate.parsed_line import Command, Function, Redirect, Script, Word

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


__all__ = [
    "Command",
    "Function",
    "Redirect",
    "Script",
    "TooComplex",
    "Unparseable",
    "Word",
    "parse",
]

MAX_DEPTH = 80
"""Nesting beyond this (substitutions in substitutions…) is refused rather than analysed."""

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


# The grammar sees every byte of a non-ASCII character as the letter "a": tree-sitter-bash's
# scanner can crash on some characters (a "{" before a private-use one), and Bash's syntax is all
# ASCII, so the tree is the same except that "$é" may read as a variable, which only makes a
# word unknown. Every text is taken from the original bytes by offset.
_ASCII_ONLY = bytes(b if b < 0x80 else 0x61 for b in range(256))


@cache
def _parser() -> Any:
    tree_sitter = _compiled("tree_sitter")
    return tree_sitter.Parser(tree_sitter.Language(_compiled("tree_sitter_bash").language()))


def _compiled(package: str) -> Any:
    """``package``'s compiled module (``_binding``), loaded from its file without running the
    package's ``__init__``, on every hook call: tree-sitter's imports typing (for a protocol the
    gate never uses), tree-sitter-bash's importlib.resources (tempfile, shutil, random, bz2,
    lzma) for a query file the gate never reads. Where the module cannot be found so, the
    package itself, which has the same names."""
    import importlib.machinery

    try:
        found = importlib.machinery.PathFinder.find_spec(package)
        if found is None or found.submodule_search_locations is None:
            raise ImportError(package)
        spec = importlib.machinery.PathFinder.find_spec(
            f"{package}._binding", list(found.submodule_search_locations)
        )
        if spec is None or spec.loader is None:
            raise ImportError(f"{package}._binding")
        module = spec.loader.create_module(spec)
        if module is None:
            raise ImportError(f"{package}._binding")
        spec.loader.exec_module(module)
        return module
    except Exception:  # another layout: the package's own way
        return __import__(package)


_HERE = object()


def parse(
    text: str,
    *,
    home: str,
    workspace: str,
    cwd: str | None = None,
    cwds: Any = _HERE,
    links: dict[str, str | None] | None = None,
    cdpath: str | None = None,
) -> Script:
    """Parse ``text`` and collect what it would run from ``cwd`` (the workspace unless given;
    every path here is a real path), or from any of ``cwds`` (None: a folder nobody knows).
    ``links`` are symbolic links made earlier (their path and target, None when unknown);
    ``cdpath`` is the CDPATH the shell runs with."""
    source = text.encode("utf-8", errors="surrogatepass")
    tree = _parser().parse(source.translate(_ASCII_ONLY))
    root = tree.root_node
    if root.has_error:
        bad = _first_error(root)
        part = _slice(source, bad) if bad is not None else text
        start = _offset(source, bad) if bad else 0
        raise Unparseable(part or text[start : start + 20] or text, start)
    stray, evaluated = _lenient(root, source)
    if stray is not None:
        raise Unparseable(_slice(source, stray), _offset(source, stray))
    walker = _Walker(source, home=home, workspace=workspace, links=links, cdpath=cdpath)
    first: frozenset[str] | None = frozenset({cwd or workspace}) if cwds is _HERE else cwds
    walker.visit(root, _State(first), 0)
    return Script(
        text, walker.commands, walker.redirects, walker.functions, walker.links, evaluated
    )


def _first_error(node: Any) -> Any:
    if node.is_error or node.is_missing:
        return node
    for child in node.children:
        if child.has_error or child.is_missing:
            return _first_error(child)
    return None


_RESERVED = frozenset({"then", "else", "elif", "fi", "do", "done", "esac", "in", "}", "]]"})
# an unescaped backtick or `$(`, a substitution bash would run: one after an even run of
# backslashes (each pair is an escaped backslash)
_HIDDEN_SUBSTITUTION = r"(?<!\\)(?:\\\\)*(?:`|\$\()"


def _slice(source: bytes, node: Any) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _offset(source: bytes, node: Any) -> int:
    return len(source[: node.start_byte].decode("utf-8", "replace"))


_EVALUATING_NODES = frozenset(
    {"arithmetic_expansion", "c_style_for_statement", "subscript", "test_command",
     "declaration_command"}
)  # fmt: skip
_EVALUATING_COMMANDS = frozenset(
    {"let", "declare", "typeset", "local", "readonly", "export", "printf", "read", "test", "[",
     "mapfile", "readarray", "shift", "wait", "ulimit", "kill"}
)  # fmt: skip


def _lenient(root: Any, source: bytes) -> tuple[Any, tuple[str, int] | None]:
    """Where the grammar is more lenient than bash. The first token Bash refuses: ``;;`` outside
    ``case``, a reserved word such as ``fi`` or ``done`` standing as a command's name, a
    substitution in what the grammar reads as plain text (``${x:-`cmd`}``). And a literal holding
    ``$(…)`` or a backtick in a line where bash evaluates text as an arithmetic expression or an
    array subscript (``x='a[$(cmd)]'; (( x ))``, ``test -v``, ``printf -v``, ``read``): bash
    would run it, the grammar sees a string; its text and offset."""
    stray: Any = None
    evaluating = False
    literal: tuple[str, int] | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        kind = node.type
        text = _slice(source, node)
        if stray is None and (
            (
                kind in (";;", ";&", ";;&")
                and (node.parent is None or node.parent.type != "case_item")
            )
            or (kind == "command_name" and text in _RESERVED)
            or (kind in ("word", "string_content") and re.search(_HIDDEN_SUBSTITUTION, text))
        ):
            stray = node
        if (
            kind in _EVALUATING_NODES
            or (kind == "compound_statement" and text.startswith("(("))
            or (kind == "expansion" and any(c.type in (":", "subscript") for c in node.children))
            or (kind == "command_name" and text.strip("'\"") in _EVALUATING_COMMANDS)
        ):
            evaluating = True
        if literal is None and kind in (
            "raw_string",
            "string_content",
            "ansi_c_string",
            "heredoc_body",
        ):
            value = _unescape_double(text) if kind == "string_content" else text
            if "$(" in value or "`" in value:
                literal = (text, _offset(source, node))
        stack.extend(node.children)
    return stray, literal if evaluating else None


class _State:
    __slots__ = ("cwds",)

    def __init__(self, cwds: frozenset[str] | None) -> None:
        self.cwds = cwds  # None: the gate no longer knows where the command runs

    def copy(self) -> _State:
        return _State(self.cwds)


class _Walker:
    def __init__(
        self,
        source: bytes,
        *,
        home: str,
        workspace: str,
        links: dict[str, str | None] | None,
        cdpath: str | None,
    ) -> None:
        self.links: dict[str, str | None] = links if links is not None else {}
        self.cdpath = cdpath
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
        return [cmd for child in node.named_children for cmd in self.visit(child, st, depth + 1)]

    def _pipeline(self, node: Any, st: _State, depth: int) -> list[Command]:
        found: list[Command] = []
        for i, element in enumerate(node.named_children):
            part = self.visit(element, st.copy(), depth + 1)
            if i > 0:
                for cmd in part:
                    cmd.stdin = cmd.stdin or "pipe"
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
                else:
                    for cmd in body:
                        cmd.stdin_text = self.text(child)
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
        return [c for n in node.named_children for c in self._substitutions(n, st, depth + 1)]

    def _command(self, node: Any, st: _State, depth: int) -> list[Command]:
        name: Word | None = None
        args: list[Word] = []
        assignments: list[tuple[str, Word | None]] = []
        subs: list[Command] = []
        herestring = False
        here: str | None = None
        redirects: list[Any] = []
        for i, child in enumerate(node.children):
            role = node.field_name_for_child(i)
            if not child.is_named:
                continue
            if child.type == "herestring_redirect":
                herestring = True
                subs += self._substitutions(child, st, depth)
                fed = [self.word(c, st) for c in child.named_children]
                here = fed[0].value if len(fed) == 1 else None
            elif role == "redirect":
                redirects.append(child)
            elif child.type == "variable_assignment":
                subs += self._substitutions(child, st, depth)
                assignments.append(self._assignment(child, st))
            elif role == "name":
                subs += self._substitutions(child, st, depth)
                inner = child.named_children[0] if len(child.named_children) == 1 else child
                name, *more = self.words(inner, st)
                args = more + args
            else:
                subs += self._substitutions(child, st, depth)
                args += self.words(child, st)
        cmd = Command(
            name, args, self.text(node), self.pos(node), st.cwds, assignments, substitutions=subs
        )
        cmd.stdin = "herestring" if herestring else None
        cmd.stdin_text = None if here is None else here + "\n"
        for child in redirects:  # `ls > out` is one command node holding its redirection
            self._file_redirect(child, st, depth, [cmd])
        return self._record(cmd, st, subs)

    def _record(self, cmd: Command, st: _State, subs: list[Command]) -> list[Command]:
        if any(n == "CDPATH" for n, _ in cmd.assignments):
            self.cdpath = "?"  # `CDPATH=/ cd etc`: the assignment applies to this cd already
        self._follow_cd(cmd, st)
        if st.cwds is not None or self.links:
            record_links(self.links, cmd, st.cwds, self.workspace)
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
                    args += self.words(child, st)
        name = Word(keyword, keyword, start=self.pos(node)) if keyword else None
        cmd = Command(
            name, args, self.text(node), self.pos(node), st.cwds, assignments, substitutions=subs
        )
        cmd.keyword = keyword
        return self._record(cmd, st, subs)

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
        searched = not dest.startswith(("/", "./", "../")) and dest not in (".", "..")
        if searched and self.cdpath == "?":
            st.cwds = None
            return
        bases = [e or "." for e in self.cdpath.split(":")] if searched and self.cdpath else []
        resolved: set[str] = set()
        for cwd in st.cwds:
            for base in [*bases, cwd]:
                place = follow(resolve(dest, resolve(base, cwd)), self.links)
                if place is None:
                    st.cwds = None
                    return
                resolved.add(place)
        st.cwds = st.cwds | frozenset(resolved)

    # words ------------------------------------------------------------------------------------

    def word(self, node: Any, st: _State) -> Word:
        """One word where bash expects exactly one (a redirection target, an assignment's
        value): unknown when braces would make it several."""
        found = self.words(node, st, split=False)
        return found[0] if len(found) == 1 else Word(self.text(node), None, False, self.pos(node))

    def words(self, node: Any, st: _State, *, split: bool = True) -> list[Word]:
        """The words ``node`` becomes after brace and tilde expansion (``{~,x}`` is ``~`` and
        ``x``); one unknown word when an expansion hides what it will be."""
        text, start = self.text(node), self.pos(node)
        chars = self._chars(node, st)
        if chars is None:
            return [Word(text, None, False, start)]
        try:
            expanded = braces(chars) if split else [chars]
        except TooMany:
            return [Word(text, None, False, start)]
        cwd = next(iter(st.cwds)) if st.cwds is not None and len(st.cwds) == 1 else None
        return [Word(text, tilde(one, self.home, cwd), globbed(one), start) for one in expanded]

    def _chars(self, node: Any, st: _State) -> Chars | None:
        """The word's characters after quote removal, each marked quoted or bare; None when a
        parameter expansion or substitution hides them."""
        kind = node.type
        text = self.text(node)
        if kind in ("word", "number", "brace_expression"):
            return _bare(text)
        if kind == "raw_string":
            return [(c, True) for c in text[1:-1]]
        if kind == "ansi_c_string":
            value = unescape_ansi_c(text[2:-1])
            return None if value is None else [(c, True) for c in value]
        if kind == "string":
            out: Chars = []
            for child in node.named_children:
                if child.type == "string_content":
                    out += [(c, True) for c in _unescape_double(self.text(child))]
                    continue
                inner = self._chars(child, st)
                if inner is None:
                    return None
                out += [(c, True) for c, _ in inner]
            return out
        if kind in ("simple_expansion", "expansion"):
            names = [c for c in node.named_children if c.type == "variable_name"]
            if len(names) == 1 and len(node.named_children) == 1:
                var = self.text(names[0])
                if var == "HOME":
                    return [(c, True) for c in self.home]
                if var == "PWD" and st.cwds is not None and len(st.cwds) == 1:
                    return [(c, True) for c in next(iter(st.cwds))]
            return None
        if kind == "concatenation":
            joined: Chars = []
            for child in node.named_children:
                inner = self._chars(child, st)
                if inner is None:
                    return None
                joined += inner
            return joined
        return None


def _bare(text: str) -> Chars:
    """An unquoted word's characters: a backslash quotes the next one (a newline after it is a
    line continuation, dropped)."""
    out: Chars = []
    chars = iter(text)
    for c in chars:
        if c == "\\":
            nxt = next(chars, "")
            if nxt and nxt != "\n":
                out.append((nxt, True))
        else:
            out.append((c, False))
    return out


def _unescape_double(text: str) -> str:
    """Text between double quotes as bash reads it: a backslash quotes ``$``, a backtick, ``"``
    and itself, and drops a newline after it (a line continuation); any other stays."""
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)
