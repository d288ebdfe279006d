"""What find does beyond its name, and what reading a whole folder reaches.

``find`` deletes (``-delete``), writes (``-fprint FILE``) and runs (``-exec CMD {} ;``, judged as
CMD on the folders it searches); a command that reads whole folders (``grep -r``, ``tar c``,
``find … -exec``) reads every secret inside them. sed and awk are :mod:`.sed_awk`.
"""

from __future__ import annotations

from noetic.tools.shellgate.parsed_line import Command, Word
from noetic.tools.shellgate.policy_lookups import secret_folders

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.tools.shellgate.judging import Judging

_EXEC_ACTIONS = ("-exec", "-execdir", "-ok", "-okdir")


def find(judge: Judging, args: list[Word], cmd: Command, depth: int) -> None:
    starts: list[Word] = []
    leading = 0  # `find -H`, `-L`, `-P`, `-D opts`, `-O3` come before the start folders
    while leading < len(args) and (args[leading].value or "")[:2] in ("-H", "-L", "-P", "-D", "-O"):
        leading += 2 if args[leading].value == "-D" else 1
    for word in args[leading:]:
        if word.value is None or word.value.startswith(("-", "(", "!")):
            break
        starts.append(word)
    starts = starts or [Word(".", ".", start=cmd.start)]
    values = [w.value for w in args]
    if "-delete" in values or "-fdelete" in values:
        for word in starts:
            judge.written(word, cmd.cwds, cmd.text, cmd.start)
    i = 0
    while i < len(args):
        if args[i].value in _EXEC_ACTIONS:
            end = i + 1
            while end < len(args) and args[end].value not in (";", "+"):
                end += 1
            inner = args[i + 1 : end]
            if inner and any("{}" in (w.value or "") for w in inner):
                folders(judge, starts, cmd)  # every file under a start reaches the command
            if inner:
                # `{}` stands for each file found: judge the command once per start folder
                for start in starts:
                    swapped = [
                        Word(w.text, start.value, start.glob, w.start)
                        if w.value is not None and "{}" in w.value
                        else w
                        for w in inner
                    ]
                    judge.argv(swapped, cmd, hidden_args=False, depth=depth + 1)
            i = end
        i += 1


def folders(judge: Judging, words: list[Word], cmd: Command) -> None:
    """A command that reads whole folders (``grep -r``, ``tar c``, ``cp -r``, ``find …
    -exec``) reads the secrets inside them: a folder holding one is a secret read."""
    for word in words:
        value = word.value
        if value is None or value.startswith("-"):
            continue
        for place in judge.resolved(value, cmd.cwds):
            if place is None:
                continue
            for rule, folder in secret_folders(judge.policy, judge.home, judge.workspace):
                if folder == place or folder.startswith(place.rstrip("/") + "/"):
                    judge.refuse(rule, word.text, word.start, f"{place} holds {folder}")
                    break


def replace_string(own: list[Word]) -> str | None:
    """xargs's replace string: ``-I X``, ``-IX``, ``-i``/``--replace`` (``{}``)."""
    for i, word in enumerate(own):
        value = word.value or ""
        if value == "-I" and i + 1 < len(own):
            return own[i + 1].value
        if value.startswith("-I") and len(value) > 2:
            return value[2:]
        if value in ("-i", "--replace"):
            return "{}"
        if value.startswith(("--replace=", "-i")) and len(value) > 2:
            return value.split("=", 1)[1] if "=" in value else value[2:]
    return None


def placeholders(words: list[Word], marker: str | None) -> list[Word]:
    """``words`` with every word holding ``marker`` made unknown: a runner puts its input there."""
    if not marker:
        return words
    return [Word(w.text, None, False, w.start) if marker in (w.value or "") else w for w in words]
