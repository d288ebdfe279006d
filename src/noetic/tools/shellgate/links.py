"""Links a command line makes, so a later step is judged where it really lands.

``ln -s / r && cd r && rm -rf *`` removes the root: ``r`` does not exist when the gate looks,
so resolving it on disk says "inside the workspace". Each ``ln`` (symbolic or hard) is recorded
with its target, and every later path of the line is followed through the links recorded; a
link whose target the gate cannot know makes every path through it unknown.
"""

from __future__ import annotations

import os
import re

TYPE_CHECKING = False
if TYPE_CHECKING:
    from noetic.tools.shellgate.parsed_line import Command, Word


def record_links(
    links: dict[str, str | None], cmd: Command, cwds: frozenset[str] | None, workspace: str
) -> None:
    """Record the links ``ln`` and ``cp -s`` make (``ln -s / r``, or a hard link to a file
    outside), and where ``mv`` or ``cp -a`` carry one, so a later ``cd r`` or write through ``r``
    is judged where it lands."""
    name = cmd.name.value if cmd.name is not None else None
    base = (name or "").rsplit("/", 1)[-1]
    if base in ("mv", "cp") and links:
        _carry(links, cmd, cwds, workspace, base)
    flags = [a.value or "" for a in cmd.args if (a.value or "").startswith("-")]
    copied_as_link = base == "cp" and any(
        f == "--symbolic-link" or re.fullmatch(r"-[A-Za-z]*s[A-Za-z]*", f) for f in flags
    )
    if base not in ("ln", "link") and not copied_as_link:
        return
    operands: list[Word] = []
    folder: str | None = None
    into_folder = False
    args = iter(cmd.args)
    for word in args:
        value = word.value or ""
        if value in ("-t", "--target-directory") or value.startswith("--target"):
            into_folder = True
            given = next(args, None) if "=" not in value else None
            folder = value.split("=", 1)[1] if "=" in value else None
            if given is not None:
                folder = given.value
        elif value.startswith("-") and len(value) > 1 and word.value is not None:
            continue
        else:
            operands.append(word)
    if not operands:
        return
    symbolic = copied_as_link or any(
        (a.value or "").startswith("--sym")
        or re.fullmatch(r"-[A-Za-z]*s[A-Za-z]*", a.value or "") is not None
        for a in cmd.args
    )
    for cwd in cwds or {workspace}:
        made: list[tuple[str | None, Word]] = []
        if into_folder:
            if folder is None:
                links["?"] = None  # `ln -t "$DIR" …`: links nobody can place
                return
            made = [(folder, w) for w in operands]
        elif len(operands) == 1:
            made = [(".", operands[0])]
        else:
            last = operands[-1].value
            into = last is not None and os.path.isdir(resolve(last, cwd))
            if len(operands) > 2 or into:
                made = [(last, w) for w in operands[:-1]]
            else:
                _link(links, cwd, None, operands[-1].value, operands[0], cwds, symbolic)
                continue
        for where, source in made:
            named = (source.value or "").rstrip("/").rsplit("/", 1)[-1] or None
            _link(links, cwd, where, named, source, cwds, symbolic)


def _carry(
    links: dict[str, str | None],
    cmd: Command,
    cwds: frozenset[str] | None,
    workspace: str,
    base: str,
) -> None:
    """``mv r s`` moves a recorded link; ``cp -a r s`` (also ``-d``, ``-P``) copies it as one."""
    values = [a.value for a in cmd.args]
    flags = [v for v in values if v is not None and v.startswith("-")]
    keeps = base == "mv" or any(
        f in ("--no-dereference", "--archive") or f.startswith("--preserve=links")
        or re.fullmatch(r"-[A-Za-z]*[adP][A-Za-z]*", f)
        for f in flags
    )  # fmt: skip
    operands = [v for v in values if v is None or not v.startswith("-")]
    if not keeps or len(operands) != 2:
        return
    source, dest = operands
    for cwd in cwds or {workspace}:
        if source is None or dest is None:
            links["?"] = None
            return
        place = os.path.normpath(
            os.path.join(
                resolve(os.path.dirname(source) or ".", cwd), os.path.basename(source.rstrip("/"))
            )
        )
        if place not in links:
            continue
        into = resolve(dest, cwd)
        target = os.path.join(into, os.path.basename(place)) if os.path.isdir(into) else into
        links[os.path.normpath(target)] = links[place]


def _link(
    links: dict[str, str | None],
    cwd: str,
    folder: str | None,
    name: str | None,
    source: Word,
    cwds: frozenset[str] | None,
    symbolic: bool,
) -> None:
    if name is None or (folder is None and cwds is None):
        links["?"] = None  # a link the gate cannot place: every path is in doubt
        return
    place = os.path.join(resolve(folder or ".", cwd), name) if folder else name
    place = os.path.join(resolve(os.path.dirname(place) or ".", cwd), os.path.basename(place))
    target = None if source.glob else source.value
    relative_to = os.path.dirname(place) if symbolic else cwd
    links[os.path.normpath(place)] = None if target is None else resolve(target, relative_to)


def follow(path: str, links: dict[str, str | None]) -> str | None:
    """``path`` with any link made earlier in the line followed; None when the path goes
    through a link whose target the gate cannot know."""
    if not links:
        return path
    if "?" in links:
        return None
    for _ in range(40):  # as many hops as the kernel follows
        for link, target in links.items():
            if path == link or path.startswith(link.rstrip("/") + "/"):
                if target is None:
                    return None
                path = os.path.normpath(target + path[len(link) :])
                break
        else:
            return path
    return None


def resolve(path: str, cwd: str) -> str:
    """``path`` made absolute against ``cwd``, ``..`` folded, symlinks of existing parts
    followed."""
    joined = path if path.startswith("/") else os.path.join(cwd, path)
    return os.path.realpath(os.path.normpath(joined))
