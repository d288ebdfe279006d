"""What a one-line Python program handed to ``python3 -c`` can do, read from its syntax tree.

``python3 -c 'import json,sys; print(json.load(sys.stdin)["v"])'`` computes and prints; the gate
can tell, because every name it uses is one that only computes: modules that neither write,
run, nor reach the network, builtins other than ``open``/``exec``/``eval``/``__import__``/
``getattr``…, and no attribute beginning with ``_`` (the road to ``__subclasses__`` and
``__builtins__``). Anything else — an import of ``os`` beyond ``os.path``, ``subprocess``,
``pathlib``, ``open(…)`` — is something the gate cannot bound, and :func:`undetermined` names it.
"""

from __future__ import annotations

import ast
import importlib
from functools import cache
from types import ModuleType

# Modules whose every public name computes, formats or reads only what the program was given.
_PURE_MODULES = frozenset(
    {
        "base64", "binascii", "bisect", "calendar", "collections", "colorsys", "copy", "csv",
        "datetime", "decimal", "difflib", "enum", "fnmatch", "fractions", "functools", "glob",
        "hashlib", "heapq", "hmac", "html", "ipaddress", "itertools", "json", "keyword",
        "locale", "math", "numbers", "platform", "pprint", "random", "re", "secrets", "shlex",
        "statistics", "struct", "sysconfig", "textwrap", "time", "tomllib", "unicodedata",
        "uuid", "zlib",
    }
)  # fmt: skip
# Left out on purpose: `operator` (attrgetter reaches any attribute by a string), `typing`
# (get_type_hints evaluates strings), `string` beyond its constants (Formatter.get_field walks
# attributes by a string), `importlib.metadata` beyond reading versions (entry points load code).
# Modules of which only some names are pure.
_PARTLY = {
    "sys": frozenset(
        {
            "argv", "version", "version_info", "platform", "executable", "prefix", "base_prefix",
            "exec_prefix", "path", "stdin", "stdout", "stderr", "maxsize", "byteorder",
            "implementation", "getrecursionlimit", "getsizeof", "getdefaultencoding",
            "getfilesystemencoding", "exit", "float_info", "int_info", "hexversion", "flags",
            "stdlib_module_names", "builtin_module_names", "orig_argv", "api_version",
        }
    ),
    "os": frozenset(
        {
            "path", "getcwd", "sep", "linesep", "pathsep", "name", "cpu_count", "getpid",
            "environ", "getenv", "listdir", "getuid", "getgid", "uname", "curdir", "pardir",
        }
    ),
    "os.path": None,  # every name of os.path is pure
    "string": frozenset(
        {
            "ascii_letters", "ascii_lowercase", "ascii_uppercase", "digits", "hexdigits",
            "octdigits", "punctuation", "printable", "whitespace", "capwords", "Template",
        }
    ),
    "importlib.metadata": frozenset({"version", "metadata", "requires", "PackageNotFoundError"}),
}  # fmt: skip
_BUILTINS = frozenset(
    {
        "print", "len", "range", "sum", "min", "max", "sorted", "list", "dict", "set", "tuple",
        "str", "int", "float", "bool", "abs", "round", "enumerate", "zip", "map", "filter",
        "any", "all", "repr", "hex", "oct", "bin", "ord", "chr", "isinstance", "issubclass",
        "reversed", "divmod", "pow", "format", "hash", "iter", "next", "frozenset", "bytes",
        "bytearray", "complex", "slice", "callable", "ascii", "type", "object", "exit", "quit",
        "True", "False", "None", "Exception", "ValueError", "KeyError", "TypeError",
        "IndexError", "SystemExit", "StopIteration", "ZeroDivisionError", "RuntimeError",
    }
)  # fmt: skip


def undetermined(code: str) -> str | None:
    """None when ``code`` only computes and prints; else what the gate cannot bound in it."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "does not parse as Python"
    modules: dict[str, str] = {}  # local name -> module it stands for
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if not _allowed_module(alias.name):
                    return f"imports {alias.name}"
                local = alias.asname or alias.name.split(".")[0]
                modules[local] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            if node.level or node.module is None:
                return "imports relatively"
            for alias in node.names:
                local = alias.asname or alias.name
                if alias.name == "*" or not _allowed_module(node.module):
                    return f"imports {alias.name} from {node.module}"
                problem = _reach(node.module, [alias.name], outermost=False)
                if problem is not None:
                    return problem
                value = getattr(_module(node.module), alias.name, None)
                if isinstance(value, ModuleType):
                    modules[local] = _known()[id(value)]
                else:
                    bound.add(local)
        elif (name := _binds(node)) is not None:
            bound.add(name)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            return f"uses the attribute {node.attr}"
        elif isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.Global | ast.Nonlocal):
            return f"uses {type(node).__name__}"
    bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            root, chain = _chain(node)
            if root in modules and root not in bound:
                problem = _reach(modules[root], chain, outermost=id(node) not in bases)
                if problem is not None:
                    return problem
        elif (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in modules
            and node.id not in bound
            and node.id not in _BUILTINS
        ):
            return f"uses the name {node.id}"
    for node in ast.walk(tree):  # a module itself handed around can be used for anything
        if (
            isinstance(node, ast.Name)
            and node.id in modules
            and node.id not in bound
            and id(node) not in bases
        ):
            return f"hands the module {modules[node.id]} around"
    return None


def _binds(node: ast.AST) -> str | None:
    """The name ``node`` binds, if it binds one (an assignment, a parameter, a definition)."""
    if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
        return node.id
    if isinstance(node, ast.arg):
        return node.arg
    if isinstance(node, ast.FunctionDef | ast.ClassDef | ast.ExceptHandler):
        return node.name
    return None


@cache
def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


@cache
def _known() -> dict[int, str]:
    """The modules the gate vouches for, by identity (``os.path`` is ``posixpath``)."""
    found: dict[int, str] = {}
    for name in sorted([*_PURE_MODULES, *_PARTLY]):
        module = _module(name)
        if module is not None:
            found.setdefault(id(module), name)
    return found


def _reach(module: str, chain: list[str], *, outermost: bool = True) -> str | None:
    """What is wrong with ``module.a.b…``, followed through the real modules: a pure module
    still holds the modules it imported (``platform.os``), whose names are judged in turn."""
    value: object = _module(module)
    where = module
    for attr in chain:
        if not isinstance(value, ModuleType):
            return None  # past the modules: attributes of a value
        key = _known().get(id(value))
        if key is None and _allowed_module(f"{where}.{attr}"):  # `import importlib.metadata`
            value, where = _module(f"{where}.{attr}"), f"{where}.{attr}"
            continue
        if key is None or not _allowed_name(key, attr):
            return f"uses {where}.{attr}"
        value, where = getattr(value, attr, None), f"{where}.{attr}"
        if value is None:
            return f"uses {where}"
    if isinstance(value, ModuleType) and (outermost or id(value) not in _known()):
        if outermost and chain:
            return f"hands the module {where} around"
        if id(value) not in _known():
            return f"uses {where}"
    return None


def _allowed_module(name: str) -> bool:
    return name in _PURE_MODULES or name in _PARTLY


def _allowed_name(module: str, name: str) -> bool:
    if module in _PURE_MODULES or _allowed_module(f"{module}.{name}"):
        return True
    names = _PARTLY.get(module, frozenset())
    return names is None or name in names


def _chain(node: ast.Attribute) -> tuple[str | None, list[str]]:
    """``a.b.c`` as ("a", ["b", "c"])."""
    names: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        names.append(current.attr)
        current = current.value
    names.reverse()
    if isinstance(current, ast.Name):
        return current.id, names
    return None, names
