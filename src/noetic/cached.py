"""Data that is costly to build and read by every process, built once and cached by content hash.

A hook runs as a fresh process on every tool call an agent makes, so parsing a YAML file and
validating it on each run costs more than the hook's own work. :func:`load` builds the value
once (the caller's ``build``: parse, validate, merge) and keeps it under the user's cache
folder (:func:`cache_dir`: ``$NOETIC_CACHE_DIR``, else the platform's, ``~/.cache/noetic``) in
:mod:`marshal` form, named by a hash of everything the value is built from: the bytes of its
source files and of the code that builds it. An edited file, or a new version of the code,
is a new name, so a cached value is never stale; the next process reads it back in
microseconds. The value is plain data and the caller's frozen dataclasses and named tuples
(``types``), which are rebuilt through their constructors.

Caching is best effort: a cache folder that cannot be written, or a cached file that cannot be
read back, only means the value is built again. An error from ``build`` (a malformed file) is
raised as it is, every time: nothing invalid is ever cached.
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

try:  # hashlib's own BLAKE2: importing hashlib would load OpenSSL as well
    from _blake2 import blake2b as blake2b
except ImportError:  # pragma: no cover (a Python built without it)
    from hashlib import blake2b as blake2b
try:  # and its own SHA-256, for the same reason (the module's name since Python 3.12)
    from _sha2 import sha256 as sha256
except ImportError:
    try:
        from _sha256 import sha256 as sha256
    except ImportError:  # pragma: no cover (a Python built without it)
        from hashlib import sha256 as sha256

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    T = TypeVar("T")


# Raise it when the encoding below changes.
FORMAT = 1
_TYPE = "\x00type"


def cache_dir() -> Path:
    """``$NOETIC_CACHE_DIR``, else the platform's user cache directory's ``noetic``."""
    given = os.environ.get("NOETIC_CACHE_DIR")
    if given:
        return Path(given)
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = str(Path.home() / "Library" / "Caches")
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "noetic"


def source_files(root: str, suffixes: tuple[str, ...]) -> Iterator[tuple[str, os.stat_result]]:
    """Every file under ``root`` whose name ends in one of ``suffixes`` (``__pycache__`` and
    linked folders left out), with its ``stat``: what a cache keyed on code fingerprints."""
    folders = [root]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__":
                        folders.append(entry.path)
                elif entry.name.endswith(suffixes):
                    yield entry.path, entry.stat()


def key(kind: str, inputs: Iterable[bytes]) -> str:
    """The name of the value built from ``inputs``: a BLAKE2b digest of each input, in order."""
    digest = blake2b(f"{kind}\0{FORMAT}".encode(), digest_size=20)
    for data in inputs:
        digest.update(len(data).to_bytes(8, "little"))
        digest.update(data)
    return f"{kind}-{digest.hexdigest()}"


def load(
    kind: str,
    inputs: Sequence[bytes],
    build: Callable[[], T],
    types: Iterable[type] = (),
) -> T:
    """The value ``build()`` returns for ``inputs``: read from the cache when it holds it, else
    built and written there. ``types`` are the frozen dataclasses and named tuples the value may
    contain."""
    found = read(kind, inputs, types)
    if found is not MISSING:
        return found  # type: ignore[no-any-return]
    value = build()
    write(kind, inputs, value)
    return value


MISSING: Any = object()


def read(kind: str, inputs: Sequence[bytes], types: Iterable[type] = ()) -> Any:
    """The value cached for ``inputs``, or :data:`MISSING` (absent, unreadable, from other
    code)."""
    path = cache_dir() / f"{key(kind, inputs)}.marshal"
    known = {t.__qualname__: t for t in types}
    try:
        return _decode(marshal.loads(path.read_bytes()), known)
    except Exception:  # absent, unreadable or from other code: the caller builds it again
        return MISSING


def write(kind: str, inputs: Sequence[bytes], value: Any) -> None:
    """Keep ``value`` as the one built from ``inputs``; best effort (a folder that cannot be
    written only means the next process builds it again)."""
    path = cache_dir() / f"{key(kind, inputs)}.marshal"
    try:
        data = marshal.dumps(_encode(value))
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        temporary.write_bytes(data)
        os.replace(temporary, path)
    except (OSError, ValueError, TypeError):
        pass  # the value is still right; the next process builds it again


def _encode(value: Any) -> Any:
    fields = getattr(type(value), "__dataclass_fields__", None)
    if fields is None and isinstance(value, tuple):
        fields = getattr(type(value), "_fields", None)  # a named tuple
    if fields is not None:
        out = {name: _encode(getattr(value, name)) for name in fields}
        out[_TYPE] = type(value).__qualname__
        return out
    if isinstance(value, tuple):
        return tuple(_encode(v) for v in value)
    if isinstance(value, list):
        return [_encode(v) for v in value]
    if isinstance(value, dict):
        if _TYPE in value:
            raise ValueError("a mapping with the type marker cannot be cached")
        return {k: _encode(v) for k, v in value.items()}
    return value


_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def _decode(value: Any, types: dict[str, type]) -> Any:
    if isinstance(value, tuple):
        if _SCALARS.issuperset(map(type, value)):  # most of them: names, flags, patterns
            return value
        return tuple(_decode(v, types) for v in value)
    if isinstance(value, list):
        return [_decode(v, types) for v in value]
    if isinstance(value, dict):
        name = value.get(_TYPE)
        items = {k: _decode(v, types) for k, v in value.items() if k != _TYPE}
        return items if name is None else types[name](**items)
    return value


def validated(cls: type[T], data: Any) -> T:
    """``data`` validated as the dataclass ``cls`` by pydantic, which reads the constraints in
    its annotations (written with ``Annotated``, ``Field``, ``AfterValidator``, ``BeforeValidator``
    imported for type checking only); raises :class:`pydantic.ValidationError`. This imports
    pydantic: call it to build a value that :func:`load` then caches."""
    # pydantic reads the caller's names from here, and the module's: the class's module
    # imports these for the type checker only
    from typing import Annotated, Any, Literal  # noqa: F401

    from pydantic import AfterValidator, BeforeValidator, Field, TypeAdapter  # noqa: F401

    return TypeAdapter(cls).validate_python(data)


def first_error(exc: Any) -> tuple[str, str]:
    """Where the first error of a :class:`pydantic.ValidationError` is (dotted) and its message,
    worded as pydantic words it for a model with ``extra="forbid"``, so a dataclass validated
    by :func:`validated` explains a bad input as the model it replaced did."""
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err["loc"])
    if err["type"] == "unexpected_keyword_argument":
        return where, "Extra inputs are not permitted"
    if err["type"] == "dataclass_type":
        name = err.get("ctx", {}).get("class_name", "")
        return where, f"Input should be a valid dictionary or instance of {name}"
    return where, str(err["msg"])
