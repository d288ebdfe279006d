"""The package's import graph, beyond the layer contract: no interface imports another (the MCP
server and the dashboard never reach into the CLI), and no module imports a module that imports
it back, directly or around a circle (``docs/architecture.md``)."""

from __future__ import annotations

import grimp

GRAPH = grimp.build_graph("noetic")

#: Circles still to be broken, each inside one package: none is left. A new one fails the test;
#: a known one listed here that is gone must leave this list.
KNOWN: frozenset[frozenset[str]] = frozenset()


def circles() -> set[frozenset[str]]:
    """The import graph's strongly connected components of more than one module (Tarjan)."""
    modules = GRAPH.modules
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in GRAPH.find_modules_directly_imported_by(module):
            if imported not in modules:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == module:
                    break
            if len(component) > 1:
                found.add(frozenset(component))

    for module in sorted(modules):
        if module not in index:
            visit(module)
    return found


def test_no_interface_imports_another():
    for interface in ("noetic.mcp", "noetic.dashboard"):
        chains = GRAPH.find_shortest_chains(importer=interface, imported="noetic.cli")
        direct = [c for c in chains if len(c) == 2]
        assert not direct, f"{interface} imports the CLI: {sorted(direct)}"


def test_no_new_import_circle():
    now = circles()
    new = [sorted(c) for c in now - KNOWN]
    assert not new, f"import circles: {new}"
    gone = [sorted(c) for c in KNOWN - now]
    assert not gone, f"no longer circles, remove them from KNOWN: {gone}"
