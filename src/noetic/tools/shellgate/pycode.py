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

# Modules whose every public name computes, formats or reads only what the program was given.
_PURE_MODULES = frozenset(
    {
        "base64", "binascii", "bisect", "calendar", "collections", "colorsys", "copy", "csv",
        "dataclasses", "datetime", "decimal", "difflib", "enum", "fnmatch", "fractions",
        "functools", "glob", "hashlib", "heapq", "hmac", "html", "ipaddress", "itertools",
        "json", "keyword", "locale", "math", "numbers", "operator", "platform", "pprint",
        "random", "re", "secrets", "shlex", "statistics", "string", "struct", "sysconfig",
        "textwrap", "time", "tomllib", "typing", "unicodedata", "uuid", "zlib",
        "importlib.metadata",
    }
)  # fmt: skip
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
                full = f"{node.module}.{alias.name}"
                if alias.name == "*" or not (
                    _allowed_module(full) or _allowed_name(node.module, alias.name)
                ):
                    return f"imports {alias.name} from {node.module}"
                if _allowed_module(full):
                    modules[alias.asname or alias.name] = full
                else:
                    bound.add(alias.asname or alias.name)
        elif (name := _binds(node)) is not None:
            bound.add(name)
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            return f"uses the attribute {node.attr}"
        elif isinstance(node, ast.AsyncFunctionDef | ast.Await | ast.Global | ast.Nonlocal):
            return f"uses {type(node).__name__}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            root, chain = _chain(node)
            if root in modules and root not in bound:
                module = modules[root]
                if chain and not _allowed_name(module, chain[0]):
                    return f"uses {module}.{chain[0]}"
        elif (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in modules
            and node.id not in bound
            and node.id not in _BUILTINS
        ):
            return f"uses the name {node.id}"
    bases = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
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
    if isinstance(node, ast.FunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.ExceptHandler):
        return node.name
    return None


def _allowed_module(name: str) -> bool:
    return name in _PURE_MODULES or name in _PARTLY


def _allowed_name(module: str, name: str) -> bool:
    if module in _PURE_MODULES or f"{module}.{name}" in _PURE_MODULES:
        return True
    if f"{module}.{name}" in _PARTLY:
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
