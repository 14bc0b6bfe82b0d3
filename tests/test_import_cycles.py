"""No import cycle in the package: every module's imports (function-local ones included, read with
ast) form a graph without a cycle, so no lazy import hides one. Imports under `if TYPE_CHECKING:`
are left out: they never run (annotations only)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "triton_sre"
ROOT = Path(__file__).resolve().parents[1] / PACKAGE


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _resolve(name: str, known: dict[str, Path]) -> str | None:
    """The package module `name` refers to (a module, or the module defining an imported name)."""
    while name:
        if name in known:
            return name
        name = name.rpartition(".")[0]
    return None


def _is_type_checking(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(module: str, path: Path, known: dict[str, Path]) -> set[str]:
    """Every package module `module` imports anywhere in its body (a package's own __init__ not
    counted when importing one of its submodules: Python runs it, but it is not an edge of ours)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), str(path))
    typing_only = {id(n) for block in ast.walk(tree) if _is_type_checking(block) for n in ast.walk(block)}
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if id(node) in typing_only:  # `if TYPE_CHECKING:` imports never run
            continue
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's package
                base = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    base = base.rpartition(".")[0]
                prefix = f"{base}.{node.module}" if node.module else base
            else:
                prefix = node.module or ""
            names = [f"{prefix}.{a.name}" for a in node.names] or [prefix]
        for name in names:
            if name.split(".")[0] != PACKAGE:
                continue
            target = _resolve(name, known)
            if target and target != module:
                found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    """Every module's imports, and the command modules cli.py imports by name (its COMMAND_PARSERS table)."""
    from triton_sre.cli import COMMAND_PARSERS

    known = modules()
    graph = {name: imports_of(name, path, known) for name, path in known.items()}
    graph["triton_sre.cli"] |= {module for module, _ in COMMAND_PARSERS.values()}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle as [a, b, ..., a], or None."""
    state: dict[str, int] = {}  # 1 visiting, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                return [*stack[stack.index(dep) :], dep]
            if dep not in state:
                cycle = visit(dep)
                if cycle:
                    return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            cycle = visit(node)
            if cycle:
                return cycle
    return None


def test_the_package_has_no_import_cycle() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_the_walk_sees_function_local_imports_and_reports_a_cycle() -> None:
    graph = import_graph()
    # collector.py imports capacity_families at the top; a function-local import back would be a
    # cycle the test must name
    assert "triton_sre.exporter.capacity_families" in graph["triton_sre.exporter.collector"]
    assert "triton_sre.triton.client" in graph["triton_sre.diagnosis.api"]  # imported inside a function
    assert "triton_sre.generate.command" in graph["triton_sre.cli"]  # imported by name (COMMAND_PARSERS)
    graph["triton_sre.exporter.capacity_families"].add("triton_sre.exporter.collector")
    cycle = find_cycle(graph)
    assert cycle is not None and "triton_sre.exporter.collector" in cycle


def test_generate_modules_stay_small() -> None:
    """generate/ is split by rule family and dashboard: no module over ~500 lines."""
    sizes = {p.name: len(p.read_text().splitlines()) for p in (ROOT / "generate").glob("*.py")}
    assert {name: n for name, n in sizes.items() if n > 500} == {}
