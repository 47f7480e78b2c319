"""The house's shape, checked on its import graph (grimp, the graph behind import-linter)."""

import ast
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parent.parent
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
    # parasol too: its LLM backends' module and generation imported each other through a function's import.
    graph = grimp.build_graph("parasol", *APPS, include_external_packages=False, cache_dir=None)
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


def start_up_writes(source):
    """Assignments in an AppConfig's `ready()` to an attribute or item of anything but the config itself."""
    found = []
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, ast.FunctionDef) and function.name == "ready":
            for node in ast.walk(function):
                targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
                for target in targets:
                    if isinstance(target, ast.Attribute | ast.Subscript):
                        root = target
                        while isinstance(root, ast.Attribute | ast.Subscript):
                            root = root.value
                        if not (isinstance(root, ast.Name) and root.id == "self"):
                            found.append(f"line {node.lineno}: {ast.unparse(target)}")
    return found


def test_no_app_writes_into_another_module_when_django_starts():
    """A lower app learns nothing by being written into at start-up: it reads a setting or is imported."""
    found = {
        str(path.relative_to(ROOT)): writes
        for app in APPS
        if (path := ROOT / app / "apps.py").exists() and (writes := start_up_writes(path.read_text(encoding="utf-8")))
    }
    assert found == {}


def test_it_finds_a_start_up_write():
    source = (
        "class C:\n"
        "    def ready(self):\n"
        "        from campaigns import models\n"
        "        self.label = 'x'\n"
        "        models.CHOICES[:] = []\n"
        "        models.lookup = len\n"
        "        models.TABLE['k'] += 1\n"
    )
    expected = ["line 5: models.CHOICES[:]", "line 6: models.lookup", "line 7: models.TABLE['k']"]
    assert start_up_writes(source) == expected


# Django's own configuration names the apps: the URL confs, the WSGI and ASGI entry points, the settings.
DJANGO_ENTRY_POINTS = {"parasol.urls", "parasol.api_urls", "parasol.wsgi", "parasol.asgi", "parasol.settings"}


def test_parasol_imports_no_app_but_through_djangos_own_entry_points():
    """parasol/ (queues, backends, start-up, middleware) sits under the apps: only the metrics library is below it."""
    graph = grimp.build_graph("parasol", *APPS, include_external_packages=False, cache_dir=None)
    upward = {
        (module, imported)
        for module in graph.find_children("parasol") - DJANGO_ENTRY_POINTS
        for imported in graph.find_modules_directly_imported_by(module)
        if imported.split(".")[0] in set(APPS) - {"metrics"}
    }
    assert upward == set()
