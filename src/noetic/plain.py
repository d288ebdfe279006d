"""Plain data for the workflow commands: frozen dataclasses checked by their annotations, so a
command that builds assessments, decisions, profiles and events imports no pydantic.

A subclass of :class:`Plain` is a frozen, keyword-only dataclass. Building one checks each
field against its annotation — ``str``, ``int``, ``float``, ``bool``, ``X | None``,
``Literal[…]``, an enum, ``tuple[str, ...]``, ``list[X]``, ``dict[str, X]``, ``Any``, another
:class:`Plain` class (itself or a mapping of its fields), any other class (an instance; a
mapping where the class validates one, as a store record does) — or with the field's own check
in ``_custom``; then the bounds in ``_bounds`` (``{"field": (minimum, maximum,
minimum_excluded)}``) and the patterns in ``_patterns``, and last the class's ``_check`` for
rules across fields. A number is a number (a bool or a string is refused), an enum or a literal
takes its values, a mapping names only the class's fields and every required one. An error is
an :class:`~noetic.errors.InvalidValueError` naming the field (dotted for a nested one:
``investigation.max_rounds``), the problem and the value: ``field 'max_rounds': must be at least
1 (got 0)``.

A :class:`Plain` value answers what code asks of a model: ``model_dump`` (``mode="json"``:
enums as their values, tuples as lists, datetimes as ISO text), ``model_copy(update=…)``
(checked again), ``model_validate``, ``from_row``. Pydantic reads the classes as the standard
dataclasses they are wherever a model (an MCP result, the dashboard) holds one; the JSON
schema it makes says what the checks hold.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum

from noetic.errors import InvalidValueError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeAlias, TypeVar, dataclass_transform

    P = TypeVar("P", bound="Plain")
    V = TypeVar("V", bound="Value")
else:

    def dataclass_transform(**_: object) -> Callable[[type], type]:
        """What a type checker reads of a class (its fields make ``__init__``): nothing at run
        time."""
        return lambda cls: cls


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # a field without a default


class Factory:
    """A field's default made anew for each value: what :func:`field` declares."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], Any]) -> Any:
    """``dataclasses.field(default_factory=…)`` for plain classes, without importing
    ``dataclasses`` (and the ``inspect`` it brings): the class becomes a dataclass with the
    same field when pydantic asks for its schema."""
    return Factory(default_factory)


def _frozen(message: str) -> Exception:
    from dataclasses import FrozenInstanceError  # a frozen dataclass's error, loaded when raised

    return FrozenInstanceError(message)


Check: TypeAlias = "Callable[[Any, str], Any]"
_CHECKS: dict[type, dict[str, Check]] = {}
_SPECS: dict[type, list[tuple[str, Any, Callable[[], Any] | None]]] = {}


def refuse(field: str, problem: str, value: Any, fix: str | None = None) -> InvalidValueError:
    """The error for ``field``: ``field 'name': problem (got value)``."""
    return InvalidValueError(f"field {field!r}: {problem} (got {value!r})", field=field,
                             value=value, fix=fix)  # fmt: skip


class _Fields:
    """What :class:`Plain` and :class:`Value` share: frozen fields, shown, compared and hashed as
    a dataclass's are."""

    def __setattr__(self, name: str, value: Any) -> None:
        raise _frozen(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise _frozen(f"cannot delete field {name!r}")

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name, _, _ in _spec(type(self)))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n, _, _ in _spec(type(self)))

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, name) for name, _, _ in _spec(type(self))))


@dataclass_transform(kw_only_default=True, frozen_default=True)
class Plain(_Fields):
    """What plain data classes share: checking on construction, a model's dump, copy and
    validation. A subclass is a frozen, keyword-only dataclass, compared by value."""

    # The fields are read from the annotations and __init__, repr, comparison and freezing
    # are written once here: dataclasses would compile them for every class as its module
    # loads. A class becomes a standard dataclass when pydantic asks for its schema.
    if not TYPE_CHECKING:  # the type checker sees each class's own fields

        def __init__(self, **values: Any) -> None:
            _fill(self, values)
            self.__post_init__()

    _bounds: ClassVar[dict[str, tuple[float | None, float | None, bool]]] = {}
    _custom: ClassVar[dict[str, Check]] = {}  # a field's own check, instead of its type's
    _patterns: ClassVar[dict[str, str]] = {}  # text fields' regular expressions (^…$)
    _omit_none: ClassVar[tuple[str, ...]] = ()  # fields left out of a dump when None
    _closed: ClassVar[bool] = False  # say in the JSON schema that no other field is allowed

    def __post_init__(self) -> None:
        for name, check in _checks(type(self)).items():
            value = getattr(self, name)
            checked = check(value, name)
            if checked is not value:
                object.__setattr__(self, name, checked)
        self._check()

    def _check(self) -> None:
        """Rules across fields; a subclass overrides it."""

    # pydantic reads these where a model holds a plain value (MCP's results): the schema says
    # what the checks hold, and a dump leaves out what model_dump does
    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        as_dataclass(cls)
        schema = handler(source)
        if cls._omit_none:
            from pydantic_core import core_schema

            schema["serialization"] = core_schema.wrap_serializer_function_ser_schema(
                lambda value, _, info: value.model_dump(mode=info.mode), info_arg=True
            )
        return schema

    @classmethod
    def __get_pydantic_json_schema__(cls, core: Any, handler: Any) -> Any:
        ref = handler(core)
        schema = handler.resolve_ref_schema(ref)
        if cls._closed:
            schema["additionalProperties"] = False
        if cls.__doc__ and not cls.__doc__.startswith(f"{cls.__name__}("):
            from inspect import cleandoc

            schema.setdefault("description", cleandoc(cls.__doc__))
        for name, (low, high, open_low) in cls._bounds.items():
            prop = schema["properties"][name]
            prop = next((p for p in prop.get("anyOf", ()) if p.get("type") != "null"), prop)
            prop["exclusiveMinimum" if open_low else "minimum"] = low
            prop["maximum"] = high
        for name, pattern in cls._patterns.items():
            schema["properties"][name]["pattern"] = pattern
        return ref

    def model_dump(self, *, mode: str = "python", exclude: Any = ()) -> dict[str, Any]:
        return {
            name: dumped(getattr(self, name), mode)
            for name, _, _ in _spec(type(self))
            if name not in exclude and not (name in self._omit_none and getattr(self, name) is None)
        }

    def model_copy(self: P, *, update: Mapping[str, Any] | None = None) -> P:
        values = {name: getattr(self, name) for name, _, _ in _spec(type(self))}
        return type(self)(**{**values, **(update or {})})

    @classmethod
    def model_validate(cls: type[P], data: Any) -> P:
        return validated(cls, data, "")

    @classmethod
    def trusted(cls: type[P], **values: Any) -> P:
        """``cls`` of values that are already what its checks would make of them, built
        without checking them again: for a value made from values Noetic has checked itself
        (an event around a payload checked as it was built), never from input. Defaults and
        unknown or missing fields are handled as construction handles them."""
        made = object.__new__(cls)
        _fill(made, values)
        return made

    @classmethod
    def from_row(cls: type[P], row: Mapping[str, Any], **values: Any) -> P:
        """``cls`` of a row's columns that are its fields (the rest left out), and ``values``."""
        columns = set(row.keys())  # a sqlite3.Row's ``in`` looks at its values
        return cls(**{**{n: row[n] for n, _, _ in _spec(cls) if n in columns}, **values})


@dataclass_transform(frozen_default=True)
class Value(_Fields):
    """A frozen value with the fields its annotations name, built as a frozen dataclass is
    (positionally in field order, or by keyword; by keyword only for ``class R(Value,
    kw_only=True)``) and compared, hashed and shown as one, with nothing checked: for what the
    code builds itself (a store's rows, a fitted map). ``dataclasses`` would compile
    ``__init__``, ``repr``, comparison and freezing for every class as its module loads; these
    are written once here. ``as_dict`` is ``dataclasses.asdict``, ``replaced`` is
    ``dataclasses.replace``; a subclass becomes a standard dataclass when pydantic asks for
    its schema."""

    _kw_only: ClassVar[bool] = False

    def __init_subclass__(cls, *, kw_only: bool = False, **rest: Any) -> None:
        super().__init_subclass__(**rest)
        cls._kw_only = kw_only or cls._kw_only

    if not TYPE_CHECKING:  # the type checker sees each class's own fields

        def __init__(self, *args: Any, **values: Any) -> None:
            spec = _spec(type(self))
            if args:
                if self._kw_only:
                    raise TypeError(f"{type(self).__name__} takes its fields by keyword")
                if len(args) > len(spec):
                    raise TypeError(f"{type(self).__name__} takes {len(spec)} fields "
                                    f"({len(args)} given)")  # fmt: skip
                for (name, _, _), value in zip(spec, args, strict=False):
                    if name in values:
                        raise TypeError(f"{type(self).__name__} got {name!r} twice")
                    values[name] = value
            _fill(self, values)

    def _values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name, _, _ in _spec(type(self))}

    def as_dict(self) -> dict[str, Any]:
        """The fields as ``dataclasses.asdict`` gives them: nested values as dicts, lists,
        tuples and dicts rebuilt, anything else copied deeply."""
        return {name: _as_dict(value) for name, value in self._values().items()}

    def model_dump(self, *, mode: str = "python") -> dict[str, Any]:
        """The fields as a dict, nested values dumped (in ``mode="json"``: enums as values,
        tuples as lists, datetimes as ISO text): what prints a value as JSON."""
        return {name: dumped(value, mode) for name, value in self._values().items()}

    def replaced(self: V, **update: Any) -> V:
        """A copy with ``update``'s fields changed, as ``dataclasses.replace`` makes one."""
        return type(self)(**{**self._values(), **update})

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        as_dataclass(cls)
        return handler(source)


def _fill(made: Any, values: dict[str, Any]) -> None:
    """Set ``made``'s fields from ``values`` (keyword arguments, consumed), defaults and
    factories filling the rest."""
    for name, default, factory in _spec(type(made)):
        if name in values:
            value = values.pop(name)
        elif factory is not None:
            value = factory()
        elif default is MISSING:
            raise TypeError(f"{type(made).__name__} needs the field {name!r}")
        else:
            value = default
        object.__setattr__(made, name, value)
    if values:
        raise TypeError(f"{type(made).__name__} has no field {next(iter(values))!r}")


def _as_dict(value: Any) -> Any:
    if isinstance(value, Value):
        return value.as_dict()
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*[_as_dict(v) for v in value])
    if isinstance(value, list | tuple):
        return type(value)(_as_dict(v) for v in value)
    if isinstance(value, dict):
        return type(value)((_as_dict(k), _as_dict(v)) for k, v in value.items())
    if isinstance(value, str | int | float | bool | type(None)):
        return value
    import copy

    return copy.deepcopy(value)


def validated(cls: type[P], data: Any, at: str) -> P:
    """``data`` (an instance, or a mapping of its fields) as ``cls``; ``at`` prefixes the
    fields named in an error (``investigation.``)."""
    if isinstance(data, cls):
        return data
    if not isinstance(data, Mapping):
        raise refuse(at.rstrip(".") or cls.__name__, f"must be an object of {cls.__name__}'s "
                     f"fields, not {type(data).__name__}", data)  # fmt: skip
    names = field_names(cls)
    unknown = sorted(str(k) for k in data if k not in names)
    if unknown:
        raise refuse(at + unknown[0], "unknown field: extra fields are not permitted",
                     data[unknown[0]], f"fields: {', '.join(sorted(names))}")  # fmt: skip
    missing = [n for n, default, factory in _spec(cls)
               if n not in data and default is MISSING and factory is None]  # fmt: skip
    if missing:
        raise refuse(at + missing[0], "field required", None)
    if not at:
        return cls(**data)
    try:
        return cls(**data)
    except InvalidValueError as exc:  # about a field of the nested value: named from the outer
        inner = exc.field or ""
        message = exc.message.replace(f"field {inner!r}", f"field {at + inner!r}", 1)
        raise InvalidValueError(message, field=at + inner, value=exc.value, fix=exc.fix) from None


_SCALARS = frozenset((str, int, float, bool))


def dumped(value: Any, mode: str) -> Any:
    """``value`` as a model's dump holds it: nested plain values (and store records) dumped,
    and in ``mode="json"`` enums as values, tuples as lists and datetimes as ISO text."""
    if value is None or type(value) in _SCALARS:  # most fields: nothing to dump
        return value
    dump = getattr(value, "model_dump", None)
    if dump is not None and not isinstance(value, type):
        return dump(mode=mode)
    if isinstance(value, dict):
        return {k: dumped(v, mode) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [dumped(v, mode) for v in value]
        return items if mode == "json" or isinstance(value, list) else tuple(items)
    if mode == "json":
        if isinstance(value, Enum):
            return value.value
        if isinstance(value, datetime):
            return value.isoformat().replace("+00:00", "Z")
    return value


def _spec(cls: type) -> list[tuple[str, Any, Callable[[], Any] | None]]:
    """Each field's name, default (``MISSING``: none) and default factory (None: none), in the
    order a dataclass gives them: the base classes' first."""
    found = _SPECS.get(cls)
    if found is None:
        fields: dict[str, tuple[str, Any, Any]] = {}
        for klass in reversed(cls.__mro__):
            for name, kind in _annotations(klass).items():
                if str(kind).startswith(("ClassVar", "typing.ClassVar")):
                    continue
                default = vars(klass).get(name, MISSING)
                # field(default_factory=…), or a field of a class made a dataclass already
                declared = vars(klass).get("__dataclass_fields__", {}).get(name, default)
                known = sys.modules.get("dataclasses")  # a Field exists only once it is loaded
                if isinstance(declared, Factory):
                    fields[name] = (name, MISSING, declared.make)
                elif known is not None and isinstance(declared, known.Field):
                    given, factory = declared.default, declared.default_factory
                    fields[name] = (
                        name,
                        MISSING if given is known.MISSING else given,
                        None if factory is known.MISSING else factory,
                    )
                else:
                    fields[name] = (name, default, None)
        found = _SPECS[cls] = list(fields.values())
    return found


def _annotations(klass: type) -> dict[str, Any]:
    return vars(klass).get("__annotations__", {})  # type: ignore[no-any-return]


def field_names(cls: type[Plain] | type[Value]) -> tuple[str, ...]:
    return tuple(name for name, _, _ in _spec(cls))


def as_dataclass(cls: type[Plain] | type[Value]) -> None:
    """``cls`` (and its plain bases) made a standard dataclass, for pydantic to read, each
    class's annotations made evaluable in its module first (:func:`evaluable`)."""
    for klass in reversed(cls.__mro__):
        if not issubclass(klass, Plain | Value):
            continue
        evaluable(klass)
        if klass in (Plain, Value):
            continue
        if "__dataclass_fields__" not in vars(klass):
            import dataclasses

            for name, value in list(vars(klass).items()):
                if isinstance(value, Factory):
                    setattr(klass, name, dataclasses.field(default_factory=value.make))
            kw_only = issubclass(klass, Plain) or getattr(klass, "_kw_only", False)
            dataclasses.dataclass(kw_only=kw_only, init=False, repr=False, eq=False)(klass)


_QUOTED = r"'[^']*'|\"[^\"]*\""  # compiled by re at its first use


def evaluable(klass: type) -> None:
    """Make ``klass``'s annotations evaluable in its module's namespace, where pydantic
    evaluates them: the names of :mod:`typing` they use (``Any``, ``Literal``, ``ClassVar``…),
    which the modules the hooks and workflow commands load import for the type checker only,
    are given to the module, and an alias written as text (``Basis: TypeAlias =
    'Literal[…]'``) becomes the type it names (the checks read either). Nothing that loads
    pydantic avoids typing: it is loaded here, not on the hot paths."""
    import typing

    namespace = vars(sys.modules[klass.__module__])
    texts = [kind for kind in _annotations(klass).values() if isinstance(kind, str)]
    aliases: list[str] = []
    while texts:
        for name in re.findall(r"[A-Za-z_]\w*", re.sub(_QUOTED, "", texts.pop())):
            found = namespace.get(name, MISSING)
            if found is MISSING and name in typing.__all__:
                namespace[name] = getattr(typing, name)
            elif isinstance(found, str) and name not in aliases:  # an alias written as text
                aliases.append(name)
                texts.append(found)
    for name in reversed(aliases):  # an alias named inside another is evaluated first
        namespace[name] = eval(namespace[name], namespace)  # the module's own text


def _checks(cls: type) -> dict[str, Check]:
    """Each field's check, read from the class's annotations once."""
    found = _CHECKS.get(cls)
    if found is None:
        spaces = [vars(sys.modules[k.__module__]) for k in cls.__mro__ if k is not object]
        kinds = {n: k for c in reversed(cls.__mro__) for n, k in _annotations(c).items()}
        found = {}
        for name, _, _ in _spec(cls):
            if name in cls._custom:  # type: ignore[attr-defined]
                found[name] = cls._custom[name]  # type: ignore[attr-defined]
                continue
            kind = kinds[name]
            check = _check_of(kind if isinstance(kind, str) else kind.__name__, spaces)
            bounds = cls._bounds.get(name)  # type: ignore[attr-defined]
            found[name] = check if bounds is None else _bounded(check, *bounds)
            if name in cls._patterns:  # type: ignore[attr-defined]
                found[name] = _matching(found[name], cls._patterns[name])  # type: ignore[attr-defined]
        _CHECKS[cls] = found
    return found


def _split(text: str, sep: str) -> list[str]:
    """``text`` split at ``sep`` outside brackets."""
    parts, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += (char in "[(" and 1) or (char in "])" and -1) or 0
        if depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i].strip())
            start = i + len(sep)
    return [*parts, text[start:].strip()]


def _check_of(text: str, spaces: list[dict[str, Any]]) -> Check:
    text = text.strip()
    options = _split(text, "|")
    if len(options) > 1:
        return _union([_check_of(o, spaces) for o in options])
    if text == "None":
        return _none
    if text in _SIMPLE:
        return _SIMPLE[text]
    head, _, inner = text.partition("[")
    inner = inner[:-1]
    if head == "Literal":
        return _literal(tuple(v[1:-1] for v in _split(inner, ",")))  # quoted text only
    if head in ("tuple", "list"):
        item = _check_of(_split(inner, ",")[0], spaces)
        return _sequence(tuple if head == "tuple" else list, item)
    if head == "dict":
        return _mapping(_check_of(_split(inner, ",")[1], spaces))
    if head == "ClassVar":
        return _anything
    found = next((s[text] for s in spaces if text in s), None)
    if found is None:  # a name only the type checker sees: taken as given
        return _anything
    if isinstance(found, str):  # an alias written as text: Verdict: TypeAlias = "Literal[…]"
        return _check_of(found, spaces)
    if not isinstance(found, type):  # an alias: Verdict = Literal[…]
        return _check_of(repr(found).replace("typing.", ""), spaces)
    if issubclass(found, Enum):
        return _enum(found)
    if issubclass(found, Plain):
        kind: type[Plain] = found
        return lambda value, name: validated(kind, value, name + ".")
    return _instance(found, getattr(found, "model_validate", None))


def _anything(value: Any, name: str) -> Any:
    return value


def _of(kind: type, problem: str) -> Check:
    """An instance of ``kind``, else ``problem``."""

    def check(value: Any, name: str) -> Any:
        if not isinstance(value, kind):
            raise refuse(name, problem, value)
        return value

    return check


_none = _of(type(None), "must be empty (None)")
text = _of(str, "must be text")
_boolean = _of(bool, "must be true or false")


def _integer(value: Any, name: str) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not hasattr(value, "__index__"):  # numpy's integers have it
        raise refuse(name, "must be a whole number", value)
    return value if type(value) is int else int(value)


def _number(value: Any, name: str) -> Any:
    if isinstance(value, bool | str) or not hasattr(value, "__float__"):
        raise refuse(name, "must be a number", value)
    return value if type(value) is float else float(value)


_SIMPLE: dict[str, Check] = {"Any": _anything, "str": text, "bool": _boolean, "int": _integer,
                             "float": _number, "object": _anything}  # fmt: skip


def _union(checks: list[Check]) -> Check:
    def check(value: Any, name: str) -> Any:
        if value is None and _none in checks:
            return None
        first = None
        for one in checks:
            try:
                return one(value, name)
            except InvalidValueError as exc:
                if one is not _none:
                    first = first or exc
        raise first or refuse(name, "has no allowed form", value)

    return check


def _literal(allowed: tuple[Any, ...]) -> Check:
    def check(value: Any, name: str) -> Any:
        if isinstance(value, bool) or value not in allowed:
            raise refuse(name, f"must be one of: {', '.join(map(repr, allowed))}", value)
        return value

    return check


def _enum(kind: type[Enum]) -> Check:
    def check(value: Any, name: str) -> Any:
        try:
            return kind(value)
        except ValueError:
            shown = ", ".join(repr(m.value) for m in kind)
            raise refuse(name, f"must be one of: {shown}", value) from None

    return check


def _sequence(kind: type, item: Check) -> Check:
    def check(value: Any, name: str) -> Any:
        if not isinstance(value, list | tuple):
            raise refuse(name, "must be a list", value)
        items = kind(item(v, f"{name}.{i}") for i, v in enumerate(value))
        return value if items == value and type(value) is kind else items

    return check


def _mapping(item: Check) -> Check:
    def check(value: Any, name: str) -> Any:
        if not isinstance(value, Mapping):
            raise refuse(name, "must be an object", value)
        out = {}
        for key, v in value.items():
            if not isinstance(key, str):
                raise refuse(name, "must name its entries with text", key)
            out[key] = item(v, f"{name}.{key}")
        return out

    return check


def _instance(kind: Any, load: Callable[[Any], Any] | None) -> Check:
    """An instance of ``kind``; or, where it validates data (a store record), a mapping."""

    def check(value: Any, name: str) -> Any:
        if load is not None and isinstance(value, Mapping):
            return load(value)
        if not isinstance(value, kind):
            raise refuse(name, f"must be a {getattr(kind, '__name__', kind)}", value)
        return value

    return check


def _matching(check: Check, pattern: str) -> Check:
    whole = re.compile(pattern.removeprefix("^").removesuffix("$"))

    def matching(value: Any, name: str) -> Any:
        value = check(value, name)
        if not whole.fullmatch(value):
            raise refuse(name, f"must match the pattern {pattern!r}", value)
        return value

    return matching


def _bounded(check: Check, low: float | None, high: float | None, open_low: bool) -> Check:
    def bounded(given: Any, name: str) -> Any:
        value = check(given, name)
        if isinstance(value, int | float) and not isinstance(value, bool):
            if low is not None and (not value > low if open_low else not value >= low):
                raise refuse(name, f"must be {'above' if open_low else 'at least'} {low}", given)
            if high is not None and not value <= high:
                raise refuse(name, f"must be at most {high}", given)
        return value

    return bounded
