"""The house's shape, checked on its import graph (grimp, the graph behind import-linter)."""

import grimp

APPS = ("metrics", "campaigns", "annotation", "scoring", "generation", "reports", "demo")


def strongly_connected_groups(graph):
    """Tarjan's algorithm over every module of the apps; groups of two or more modules are import circles."""
    index, lowlink, on_stack, stack, groups = {}, {}, set(), [], []
    counter = [0]

    def visit(module):
        index[module] = lowlink[module] = counter[0]
        counter[0] += 1
        stack.append(module)
        on_stack.add(module)
        for imported in graph.find_modules_directly_imported_by(module):
            if imported not in index:
                visit(imported)
                lowlink[module] = min(lowlink[module], lowlink[imported])
            elif imported in on_stack:
                lowlink[module] = min(lowlink[module], index[imported])
        if lowlink[module] == index[module]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == module:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return groups


def test_it_has_no_import_circle_between_or_inside_apps():
    graph = grimp.build_graph(*APPS, include_external_packages=False, cache_dir=None)
    assert strongly_connected_groups(graph) == []


def test_it_finds_a_circle_when_there_is_one(tmp_path, monkeypatch):
    package = tmp_path / "circular"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from circular import b\n")
    (package / "b.py").write_text("def f():\n    from circular import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    graph = grimp.build_graph("circular", include_external_packages=False, cache_dir=None)
    assert strongly_connected_groups(graph) == [["circular.a", "circular.b"]]
