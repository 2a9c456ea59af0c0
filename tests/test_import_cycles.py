"""No two modules of the project import each other, directly or around a circle.

An import inside a function counts too (grimp reads every import statement): moving an import
into a function hides a cycle, it does not remove it. The layer contracts in pyproject.toml
([tool.importlinter]) say which way the packages point; this test catches the circles inside a
layer that they allow.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")

PACKAGES = ("acrb_web", "annotations", "generation", "scoring")

# No module may take part in an import circle; a known exception would be listed here, and the
# test fails when it is gone so the list stays true.
KNOWN_CIRCLES: list[set[str]] = []


def import_circles(graph) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    modules = sorted(graph.modules)
    imports = {
        m: sorted(graph.find_modules_directly_imported_by(m) & graph.modules) for m in modules
    }
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles = []
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            module, position = work.pop()
            if position == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            for offset, imported in enumerate(imports[module][position:], start=position):
                if imported not in index:
                    work += [(module, offset + 1), (imported, 0)]
                    break
                if imported in on_stack:
                    low[module] = min(low[module], index[imported])
            else:
                if low[module] == index[module]:
                    component = set()
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.add(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        circles.append(component)
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
    return circles


def test_import_circles_finder_finds_a_circle_and_a_line():
    class Graph:
        modules = {"a", "b", "c", "d"}
        edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}

        def find_modules_directly_imported_by(self, module):
            return self.edges.get(module, set())

    assert import_circles(Graph()) == [{"a", "b", "c"}]
    Graph.edges = {"a": {"b"}, "b": {"c"}, "d": {"a"}}
    assert import_circles(Graph()) == []


def test_no_module_imports_itself_around_a_circle():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    circles = import_circles(graph)
    new = [sorted(c) for c in circles if c not in KNOWN_CIRCLES]
    assert new == [], f"modules that import each other: {new}"
    gone = [sorted(c) for c in KNOWN_CIRCLES if c not in circles]
    assert gone == [], f"no longer a circle, remove it from KNOWN_CIRCLES: {gone}"
