"""A command line rebuilt from the parse the gate approved, for the shell that runs it.

The gate judges words by their values after quote removal and brace and tilde expansion. Bash
re-reads the original text itself, and wherever its reading could differ from the grammar's
(an odd quoting, an expansion the gate resolved), the command run would not be the command
judged. So every word whose value the gate knew is replaced by that value, quoted (``{a,b}``
by the words it stands for, ``~`` by the home folder); what the gate left to the shell — a glob,
a variable, a substitution, the operators between commands — stays as written.
"""

from __future__ import annotations

import shlex
from collections import defaultdict

from noetic.tools.shellgate.syntax import Script, Word


def render(script: Script) -> str:
    """The text of ``script`` with each known word replaced by its quoted value(s)."""
    text = script.text
    groups: dict[int, list[Word]] = defaultdict(list)
    for cmd in script.commands:
        if cmd.keyword is not None:
            continue  # `export A=b`: assignments stay as written
        for word in [*([cmd.name] if cmd.name is not None else []), *cmd.args]:
            groups[word.start].append(word)
    for redirect in script.redirects:
        if redirect.target is not None and redirect.operator not in ("<&", ">&", "<&-", ">&-"):
            groups[redirect.target.start].append(redirect.target)
    edits: list[tuple[int, int, str]] = []
    for start, words in groups.items():
        first = words[0]
        if text[start : start + len(first.text)] != first.text:
            continue
        unique = list({id(w): w for w in words}.values())
        if any(w.value is None or w.glob for w in unique):
            continue
        quoted = [shlex.quote(w.value or "") for w in unique if w.text == first.text]
        edits.append((start, start + len(first.text), " ".join(quoted)))
    out: list[str] = []
    at = 0
    for start, end, replacement in sorted(edits):
        if start < at:
            continue  # nested in a word already rebuilt
        out += [text[at:start], replacement]
        at = end
    out.append(text[at:])
    return "".join(out)
