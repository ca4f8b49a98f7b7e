"""Modules of ``spectral`` import no other module's private names and form no import circle.

Read from the source with :mod:`ast` (every import statement, the lazy ones inside functions too). The fused
tiles once imported ``spectral.fna._profile_owned`` and ``spectral.distance._numpy_sq_distance``, and
``spectral.heat -> spectral.operators -> spectral.tiles -> spectral.heat`` was a circle (issue 30); the kernels
now declare their profiles (:mod:`spectral.profiles`) and the tiles read them.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _module(path: Path) -> str:
    return "spectral" if path.name == "__init__.py" else f"spectral.{path.stem}"


def _imports(path: Path):
    """``(line, module, name)`` of every ``from spectral.X import name`` and ``import spectral.X`` (name None)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("spectral") and not node.level:
            for alias in node.names:
                yield node.lineno, node.module, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("spectral."):
                    yield node.lineno, alias.name, None


def _graph():
    modules = {_module(p): p for p in sorted((ROOT / "spectral").glob("*.py"))}
    edges = {m: set() for m in modules}
    for mod, path in modules.items():
        for _, source, name in _imports(path):
            target = f"{source}.{name}" if source == "spectral" and f"spectral.{name}" in modules else source
            if target in modules and target != mod and target != "spectral":
                edges[mod].add(target)
    return edges


def test_no_private_names_of_other_modules():
    bad = [f"{_module(p)}:{line} imports {source}.{name}"
           for p in sorted((ROOT / "spectral").glob("*.py"))
           for line, source, name in _imports(p)
           if name and name.startswith("_") and source != _module(p)]
    assert not bad, "; ".join(bad)


def test_no_import_circles():
    edges = _graph()
    state, circles = {}, []

    def visit(mod, trail):
        state[mod] = "open"
        for nxt in sorted(edges[mod]):
            if state.get(nxt) == "open":
                circles.append(" -> ".join(trail[trail.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, trail + [nxt])
        state[mod] = "done"

    for mod in sorted(edges):
        if mod not in state:
            visit(mod, [mod])
    assert not circles, "import circles in spectral: " + "; ".join(circles)


def test_the_reader_sees_the_imports_it_checks():
    # the graph holds the edges this test file's docstring is about (the check can fail)
    edges = _graph()
    assert "spectral.operators" in edges["spectral.heat"] and "spectral.tiles" in edges["spectral.operators"]
    assert "spectral.profiles" in edges["spectral.tiles"] and "spectral.heat" not in edges["spectral.tiles"]


def test_numba_is_imported_only_when_a_tile_is_fused():
    # the optional dependency is lazy: importing the library (operators, tiles, kernels) loads no Numba
    import subprocess
    import sys

    code = ("import sys, spectral, spectral.operators, spectral.tiles, spectral.fna, spectral.heat\n"
            "from spectral import KernelOperator, fna_kernel\n"
            "print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.split() == ["False"]
