"""Code handed to an interpreter: on its command line, on its standard input, or as a module.

``python3 -c CODE``, ``-cCODE``, ``-Ic CODE``, ``perl -le'…'``, ``node --eval=…``, a quoted
here-document, ``… | bash /dev/stdin``: wherever the code comes from, it is found. Shell code is
parsed and judged as commands; Python that only computes (:mod:`.pycode`) is allowed; any
other code — or code the gate cannot see (a pipe, a variable) — is refused on a host with no
sandbox, with what could not be determined, and left to the sandbox where there is one.
``python3 -m MODULE …`` is judged as the command the module stands for (``-m pip``).
"""

from __future__ import annotations

import re

from noetic.tools.shellgate.option_spelling import code_on_line
from noetic.tools.shellgate.parsed_line import Command, Word
from noetic.tools.shellgate.policy_lookups import names_fit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.tools.shellgate.judging import Judging


_STDIN = r"^/(dev/stdin|dev/fd/0|proc/(self|thread-self|\d+)/fd/0)$"


def interpreted(
    judge: Judging, base: str, code_flags: tuple[str, ...], args: list[Word], cmd: Command
) -> list[Word] | None:
    """Judging the code an interpreter is handed; returns the argument vector of the module
    ``python3 -m MODULE …`` runs, which is judged as that command (``-m pip``)."""
    allowed = names_fit(base, judge.policy.allow_interpreters)
    downloads = any(judge.downloads(c) for c in [*cmd.substitutions, *cmd.upstream])
    shell = names_fit(base, judge.policy.shells)
    family = re.sub(r"[\d.]+$", "", base) or base  # `python3.12` spells options as `python`
    found = code_on_line(args, code_flags, judge.policy.interpreter_values.get(family))
    if found is not None:
        kind, code, word, rest = found
        if kind == "module":
            return [Word(word.text, code, False, word.start), *rest]
        if downloads:
            judge.refuse("download-execute", cmd.text, cmd.start)
        elif not allowed:
            handed(judge, base, shell, code, word, cmd)
        return None
    operand = next(
        (a for a in args if a.value is None or not a.value.startswith("-") or a.value == "-"),
        None,
    )
    from_stdin = shell and _reads_stdin(args)  # `bash -s -- a b <<< CODE`: a, b are arguments
    if (
        from_stdin
        or operand is None
        or operand.value == "-"
        or re.match(_STDIN, operand.value or "")
    ):
        fed = cmd.stdin in ("pipe", "heredoc", "herestring")
        if (operand is None or from_stdin) and not fed:
            # an interactive session, or a script read from a file (`sh < f`): the
            # workspace's own, unless this line wrote it or downloaded it
            for r in cmd.redirects:
                if r.operator != "<" or r.target is None or allowed:
                    continue
                places = judge.resolved(r.target.value or "", r.cwds) if r.target.value else {None}
                if places & judge.downloaded:
                    judge.refuse("download-execute", cmd.text, cmd.start)
                for place in places & set(judge.scripts):
                    handed(judge, base, shell, judge.scripts[place or ""], r.target, cmd)
            return None
        if downloads:
            judge.refuse("download-execute", cmd.text, cmd.start)
        elif not allowed and cmd.stdin_text is not None:
            handed(judge, base, shell, cmd.stdin_text, operand or cmd.name or args[0], cmd)
        elif not allowed:
            judge.undetermined(
                "pipe-to-interpreter",
                operand or Word(cmd.text, None, False, cmd.start),
                f"{base} reads code from its standard input, which the gate does not see",
            )
        return None
    if operand.value is None:
        if downloads:
            judge.refuse("download-execute", cmd.text, cmd.start)
        elif not allowed:
            judge.undetermined("interpreter-code", operand, f"{base} runs a file named at run time")
        return None
    places = judge.resolved(operand.value, cmd.cwds)
    if places & judge.downloaded:
        judge.refuse("download-execute", cmd.text, cmd.start)
    for place in places & set(judge.scripts):  # a script written earlier in the line
        if not allowed:
            handed(judge, base, shell, judge.scripts[place or ""], operand, cmd)
    return None


def _reads_stdin(args: list[Word]) -> bool:
    """A shell's ``-s`` (alone or in a cluster, before its operands): the code is read from
    standard input and every operand is an argument."""
    for word in args:
        value = word.value
        if value is None or value == "--" or not value.startswith("-") or value == "-":
            return False
        if not value.startswith("--") and "s" in value[1:]:
            return True
    return False


def run_written(judge: Judging, name: Word, content: str | None, cmd: Command) -> None:
    """``./run.sh`` run after the line wrote it: its code is judged by its ``#!`` line."""
    first = (content or "").split("\n", 1)[0]
    interpreter = first[2:].strip().split() if first.startswith("#!") else []
    if interpreter and interpreter[0].endswith("/env"):
        interpreter = interpreter[1:]
    base = interpreter[0].rsplit("/", 1)[-1] if interpreter else "sh"
    handed(judge, base, names_fit(base, judge.policy.shells), content, name, cmd)


def handed(
    judge: Judging, base: str, shell: bool, code: str | None, word: Word, cmd: Command
) -> None:
    """Code handed to an interpreter: shell code is judged as commands, Python that only
    computes is allowed, anything else the gate cannot bound."""
    if code is None:
        judge.undetermined(
            "interpreter-code", word, f"{base} runs code the gate cannot see (built at run time)"
        )
    elif shell:
        judge.inline(code, word, cmd, f"the code {base} runs")
    elif names_fit(base, ("python*", "pypy*")):
        from noetic.tools.shellgate import pycode  # for a line handing Python code over

        what = pycode.undetermined(code)
        if what is not None:
            judge.undetermined("interpreter-code", word, f"the {base} code {what}")
    else:
        judge.undetermined("interpreter-code", word, f"the gate does not read {base} code")
