"""Compact checkpoints, one per assessment, in git notes when the project is a repository.

A checkpoint is one JSON line (vectors to two decimals in canonical order, the action, the three
largest moves since the previous assessment, a short note): in a git repository with a commit,
appended to a note on ``HEAD`` under :data:`NOTES_REF`; elsewhere, to the store's ``checkpoints``
table. Either way the store can list them (``docs/recall.md``, "Checkpoints in git notes").
"""

from __future__ import annotations

import json
from pathlib import Path

from noetic.spawning import Expired, Running
from noetic.store.records import _Record
from noetic.store.rows import now
from noetic.vector_names import VECTOR_NAMES

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from noetic.store.base import BaseStore

NOTES_REF = "refs/notes/noetic/checkpoints"


class Checkpoint(_Record, kw_only=True):
    """One checkpoint: a frozen record (a :class:`~noetic.plain.Value`, as the store's are), so
    writing one, as PreCompact does, builds no model. Its scores are floats as written."""

    session: str
    cascade: str | None
    phase: str
    vectors: list[float]
    action: str
    moves: dict[str, float]
    note: str = ""
    at: str

    def line(self) -> str:
        data = {"s": self.session, "c": self.cascade, "p": self.phase, "v": self.vectors,
                "a": self.action, "d": self.moves, "n": self.note, "t": self.at}  # fmt: skip
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_line(cls, line: str) -> Checkpoint:
        d = json.loads(line)
        return cls(session=d["s"], cascade=d["c"], phase=d["p"],
                   vectors=[float(x) for x in d["v"]], action=d["a"],
                   moves={k: float(x) for k, x in d["d"].items()}, note=d.get("n", ""),
                   at=d["t"])  # fmt: skip

    def named_vectors(self) -> dict[str, float]:
        return dict(zip(VECTOR_NAMES, self.vectors, strict=True))


def make_checkpoint(
    session: str,
    cascade: str | None,
    phase: str,
    vectors: dict[str, float],
    action: str,
    previous: dict[str, float] | None,
    note: str = "",
) -> Checkpoint:
    moves = {}
    if previous:
        changes = {k: vectors[k] - previous[k] for k in vectors if k in previous}
        top = sorted(changes.items(), key=lambda kv: -abs(kv[1]))[:3]
        moves = {k: float(round(v, 2)) for k, v in top if abs(v) >= 0.005}
    return Checkpoint(
        session=session, cascade=cascade, phase=phase,
        vectors=[float(round(vectors.get(v, float("nan")), 2)) for v in VECTOR_NAMES],
        action=action, moves=moves, note=note[:120], at=now()[:19],
    )  # fmt: skip


def last_assessment(store: BaseStore, cascade_id: str) -> tuple[dict[str, float], str] | None:
    """The scores and the action of the task's newest assessment (the last of
    :meth:`BaseStore.assessments` for it), read as plain values: no model is built."""
    columns = ", ".join(f'"{v}"' for v in VECTOR_NAMES)
    row = store.conn.execute(
        f"SELECT {columns}, action FROM assessments WHERE cascade_id = ? "
        "ORDER BY session_id DESC, seq DESC LIMIT 1",
        (cascade_id,),
    ).fetchone()
    if row is None:
        return None
    return {v: float(row[v]) for v in VECTOR_NAMES if row[v] is not None}, row["action"]


def git_root(path: Path) -> Path | None:
    """The repository containing ``path`` if git is installed and it has a commit."""
    import shutil  # only here: a checkpoint appended from a folder in the repository needs none

    if shutil.which("git") is None:
        return None
    probe = path if path.is_dir() else path.parent
    while not probe.exists():
        probe = probe.parent
    # one git process: the top level, then HEAD's commit (failing when there is none)
    out = _git(probe, "rev-parse", "--show-toplevel", "--verify", "-q", "HEAD")
    if out is None:
        return None
    top, _head = out.rstrip("\n").rsplit("\n", 1)
    return Path(top.strip())


def _git(cwd: Path, *args: str, stdin: str | None = None) -> str | None:
    """git's output, or None where it failed or could not start."""
    git = _started(cwd, *args, stdin=stdin)
    return None if git is None else _result(git)


def _started(cwd: Path, *args: str, stdin: str | None = None) -> Running | None:
    # git's -C starts it in ``cwd`` (a folder that is not there fails as a missing cwd did);
    # spawned without subprocess, which a checkpoint on every assessment would load for this
    try:
        return Running(["git", "-C", str(cwd), *args], stdin=stdin, timeout=20)
    except (OSError, Expired):
        return None


def write_checkpoint(store: BaseStore, checkpoint: Checkpoint, repo: Path | None) -> str:
    """Append to the git note on HEAD, or to SQLite; returns where it went. ``repo`` is the
    repository (:func:`git_root`) or any folder in it: git finds the repository from it, and
    a folder in none, or in one without a commit, falls back to SQLite as ``None`` does."""
    return start_checkpoint(store, checkpoint, repo).finish()


class Appending:
    """A checkpoint whose ``git notes append`` runs while the caller goes on with the rest of
    its write (:func:`start_checkpoint`); :meth:`finish` waits for git and, where git could
    not take it, inserts the checkpoint into SQLite, inside the caller's transaction when it
    has one open, so it is stored with the assessment or not at all."""

    def __init__(self, store: BaseStore, checkpoint: Checkpoint, git: Running | None) -> None:
        self.store, self.checkpoint, self._git = store, checkpoint, git

    def finish(self) -> str:
        """Where the checkpoint went: ``"git"`` or ``"sqlite"``."""
        if self._git is not None and _result(self._git) is not None:
            return "git"
        cp = self.checkpoint
        row = {"session_id": cp.session, "cascade_id": cp.cascade, "at": cp.at,
               "line": cp.line()}  # fmt: skip
        with self.store.transaction() as conn:
            self.store.insert(conn, "checkpoints", row)
        return "sqlite"

    def abandon(self) -> None:
        """Stop waiting: the write this checkpoint belongs to failed (git is stopped if it
        still runs; a note it wrote stays, as a note of a failed write did before)."""
        if self._git is not None:
            self._git.abandon()


def start_checkpoint(store: BaseStore, checkpoint: Checkpoint, repo: Path | None) -> Appending:
    """Start appending ``checkpoint`` (see :func:`write_checkpoint`); :meth:`Appending.finish`
    completes it."""
    note = ("notes", "--ref", NOTES_REF, "append", "-F", "-", "HEAD")
    git = None if repo is None else _started(repo, *note, stdin=checkpoint.line())
    return Appending(store, checkpoint, git)


def _result(git: Running) -> str | None:
    try:
        code, out = git.result()
    except (OSError, Expired):
        return None
    return out if code == 0 else None


def list_checkpoints(
    store: BaseStore, repo: Path | None, *, session: str | None = None
) -> list[tuple[str, Checkpoint]]:
    """Every checkpoint, ``(where, checkpoint)``, oldest first."""
    found: list[tuple[str, Checkpoint]] = []
    if repo is not None:
        listing = _git(repo, "notes", "--ref", NOTES_REF, "list") or ""
        for row in listing.splitlines():
            _, obj = row.split()
            text = _git(repo, "notes", "--ref", NOTES_REF, "show", obj) or ""
            found += [(f"git:{obj[:12]}", Checkpoint.from_line(x)) for x in text.splitlines()
                      if x.strip()]  # fmt: skip
    for r in store.conn.execute("SELECT line FROM checkpoints ORDER BY id"):
        found.append(("sqlite", Checkpoint.from_line(r["line"])))
    found.sort(key=lambda t: t[1].at)
    if session is not None:
        found = [t for t in found if t[1].session.startswith(session)]
    return found


def bootstrap_context(store: BaseStore, repo: Path | None, *, tasks: int = 5) -> str:
    """The latest checkpoint of each of the last ``tasks`` tasks, as a compact block."""
    latest: dict[Any, Checkpoint] = {}
    for _, cp in list_checkpoints(store, repo):
        latest[cp.cascade or cp.session] = cp
    recent = sorted(latest.values(), key=lambda c: c.at)[-tasks:]
    if not recent:
        return ""
    header = "# Where earlier tasks stood (vectors in order: " + ",".join(VECTOR_NAMES) + ")"
    return "\n".join([header, *(cp.line() for cp in recent)])
