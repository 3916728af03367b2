"""The core's modules import one another without a circle, counting imports inside functions too.

Each module of `caffe_core` and `caffe` is parsed (never imported). An edge runs from a module to every
module it names in `import x.y`, `from x import y` (to `x.y` when that is a module, else to `x`), a relative
`from . import y`, or `importlib.import_module("x.y")`, wherever the statement stands. The packages a named
module lies in are not counted: importing `caffe_core.blob` runs `caffe_core/__init__.py` first, and a
package's `__init__` gathering its modules' names is no circle among the modules themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE_ROOT = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("caffe_core", "caffe")


def module_files() -> dict[str, Path]:
    """Every module of the two packages by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((SOURCE_ROOT / package).rglob("*.py")):
            parts = path.relative_to(SOURCE_ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _literal_import_module(node: ast.AST) -> str | None:
    """The module an `importlib.import_module("literal")` call names, if node is one."""
    if not (isinstance(node, ast.Call) and len(node.args) == 1 and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)):
        return None
    function = node.func
    if isinstance(function, ast.Attribute) and function.attr == "import_module" \
            and isinstance(function.value, ast.Name) and function.value.id == "importlib":
        return node.args[0].value
    return None


def imported_modules(module: str, path: Path, modules: set[str]) -> set[str]:
    """The modules among `modules` that a module's import statements, anywhere in it, name."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor[:len(anchor) - node.level + (path.name == "__init__.py")]
                base = ".".join(anchor + ([base] if base else []))
            found.update(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                         for alias in node.names)
        elif (name := _literal_import_module(node)) is not None:
            found.add(name)
    return (found & modules) - {module}


def import_graph() -> dict[str, set[str]]:
    """Each module of the two packages and the modules of the two packages it imports."""
    files = module_files()
    return {module: imported_modules(module, path, set(files)) for module, path in files.items()}


def circles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Each group of modules that import one another (Tarjan's components), with one circle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(start: str) -> None:
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return [(sorted(component), _circle_within(graph, set(component))) for component in components]


def _circle_within(graph: dict[str, set[str]], members: set[str]) -> list[str]:
    """A shortest path from the component's first module back to itself, through its members only."""
    start = min(members)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & members):
                if target == start:
                    return paths[node] + [start]
                if target not in paths:
                    paths[target] = paths[node] + [target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no circle through {start}")


def test_every_kind_of_import_is_an_edge(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from . import a\nfrom .m import VALUE\n")
    module = package / "m.py"
    module.write_text("import pkg.a\nfrom pkg import VALUE, b\nimport numpy\n\ndef f():\n"
                      "    from .sub import q\n    importlib.import_module('pkg.c')\n")
    modules = {"pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.m", "pkg.sub"}
    assert imported_modules("pkg", package / "__init__.py", modules) == {"pkg.a", "pkg.m"}
    assert imported_modules("pkg.m", module, modules) == {"pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.sub"}


def test_cycles_are_found_and_shown_as_a_path() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": set()}
    assert circles(graph) == [(["a", "b", "c"], ["a", "b", "c", "a"])]


def test_the_core_has_no_import_circle() -> None:
    graph = import_graph()
    assert "caffe_core.net" in graph and "caffe.pycaffe" in graph
    found = circles(graph)
    assert not found, "import circles:\n" + "\n".join(
        f"{len(group)} modules ({', '.join(group)}), one circle: {' -> '.join(circle)}"
        for group, circle in found)
