"""``NamedTuple`` as :class:`typing.NamedTuple` declares it, built for a fraction of its cost.

The modules every workflow command and hook loads declare about twenty named tuples (the CLI's
options, the configuration's sections, the store's location, the input limits…), each built as
its module loads. :class:`typing.NamedTuple` checks every field's annotation as it builds the
class, which under ``from __future__ import annotations`` compiles each annotation's text: about
0.4 ms for a class of nine fields, three times what :func:`collections.namedtuple` takes for
the same fields. Here the class is built by :func:`collections.namedtuple` directly, with the
same fields, defaults, methods, docstring and module, and the annotations kept as written
(text, as :func:`typing.get_type_hints` reads them). Type checkers see :class:`typing.NamedTuple`
itself::

    from noetic.named import NamedTuple

    class Opt(NamedTuple):
        dest: str
        flags: tuple[str, ...] = ()

What it does not do is what no class here needs: generic named tuples, and the functional form
``NamedTuple("Name", [...])``.
"""

from __future__ import annotations

TYPE_CHECKING = False

__all__ = ["NamedTuple"]

if TYPE_CHECKING:
    from typing import NamedTuple
else:
    from collections import namedtuple

    # as typing's NamedTuple (3.11): what a class body may not set, and what it sets that is
    # not copied
    _PROHIBITED = frozenset(("__new__", "__init__", "__slots__", "__getnewargs__", "_fields",
                             "_field_defaults", "_make", "_replace", "_asdict",
                             "_source"))  # fmt: skip
    _SPECIAL = frozenset(("__module__", "__name__", "__annotations__"))

    class _Named(type):
        def __new__(cls, typename, bases, namespace):
            annotations = namespace.get("__annotations__", {})
            defaulted = []
            for name in annotations:
                if name in namespace:
                    defaulted.append(name)
                elif defaulted:
                    raise TypeError(
                        f"Non-default namedtuple field {name} cannot follow default field"
                        f"{'s' if len(defaulted) > 1 else ''} {', '.join(defaulted)}"
                    )
            made = namedtuple(typename, list(annotations),
                              defaults=[namespace[n] for n in defaulted],
                              module=namespace["__module__"])  # fmt: skip
            made.__annotations__ = dict(annotations)
            for key, value in namespace.items():
                if key in _PROHIBITED:
                    raise AttributeError("Cannot overwrite NamedTuple attribute " + key)
                if key not in _SPECIAL and key not in made._fields:
                    setattr(made, key, value)
            return made

    _Base = type.__new__(_Named, "NamedTuple", (), {})

    def NamedTuple(*args, **kwargs):
        raise TypeError("only the class form of NamedTuple is supported here")

    NamedTuple.__mro_entries__ = lambda bases: (_Base,)
