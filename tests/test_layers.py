"""The layers of the house import one way: floor <- manifolds <- spectral <- graphs <- verify <- figures.

Read from the source with :mod:`ast` (nothing is imported), every import statement anywhere in a file
(also the lazy ones inside functions):

* the floor, the subpackage :mod:`spectral.floor` (the array backend, validators and error types, array
  inputs, the memory guard, the squared-distance routine, short reprs), imports no other module of ``spectral``
  (nor the package ``spectral`` itself);
* ``spectral`` imports nothing of ``manifolds``, ``graphs``, ``verify``, ``figures``;
* ``manifolds`` imports from ``spectral`` only the floor, and nothing of ``graphs``, ``verify``, ``figures``;
* ``graphs`` imports nothing of ``verify``, ``figures``; ``verify`` nothing of ``figures``;
* the tests of ``spectral``, ``graphs`` and ``manifolds`` import nothing of ``verify``;
* no import circle anywhere in the five packages (the graph of every import statement, lazy ones too, with a
  name imported from a package resolved to the module that defines it);
* no module of the five packages imports another module's private (``_underscore``) name, or reads one as an
  attribute of another module (what two modules share is public in its module); the tests may test a module's
  own private helpers.

* imports are at module level: an import statement inside a function names a module of :data:`LAZY_IMPORTS`
  (optional heavy dependencies, and modules whose import cost every start-up would pay), each with its reason,
  sits in a ``try:`` of its function that catches ImportError (an availability probe), or is in a file of :data:`LAZY_FILES` (with its
  reason); nothing else.

At run time, in a fresh interpreter: importing the floor or ``manifolds`` (all its modules) loads no
other module of ``spectral``, and ``import verify.weyl`` loads neither ``matplotlib`` nor ``figures``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("spectral", "manifolds", "graphs", "verify", "figures")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


#: The floor of ``spectral``: every module of the subpackage ``spectral.floor`` (which every layer may import).
FLOOR = frozenset(_module_name(p) for p in (ROOT / "spectral" / "floor").glob("*.py"))


@cache
def _spectral_exports() -> dict[str, str]:
    """``spectral._EXPORTS`` (public name -> defining module), read from the source."""
    tree = ast.parse((ROOT / "spectral" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


@cache
def _is_module(dotted: str) -> bool:
    path = ROOT / Path(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _resolve(package: str, name: str) -> str:
    """What ``from package import name`` loads: the submodule ``package.name``, else the package itself
    (for ``spectral``: the module that defines the exported name)."""
    if _is_module(f"{package}.{name}"):
        return f"{package}.{name}"
    if package == "spectral":
        return _spectral_exports().get(name, package)
    return package


def _package_of(path: Path) -> str:
    module = _module_name(path)
    return module if path.name == "__init__.py" else module.rpartition(".")[0]


def _source_of(node: ast.ImportFrom, path: Path) -> str:
    """The module ``from <source> import ...`` reads, relative imports resolved."""
    if not node.level:
        return node.module
    base = _package_of(path).split(".")
    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
    return ".".join(base + ([node.module] if node.module else []))


@cache
def _tree(path: Path) -> ast.Module:
    """The parsed source (read once per session: the scans below walk every file several times)."""
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def imports_of(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every module an import statement of ``path`` loads, relative ones resolved."""
    out = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            source = _source_of(node, path)
            out += [(node.lineno, _resolve(source, a.name)) for a in node.names]
    return out


def _files(*dirs: str):
    for d in dirs:
        yield from sorted((ROOT / d).rglob("*.py"))


def _offenders(dirs, forbidden) -> list[str]:
    """``file:line imports module`` for every import in ``dirs`` that ``forbidden(importer, module)`` refuses."""
    bad = []
    for path in _files(*dirs):
        importer = _module_name(path)
        for line, mod in imports_of(path):
            if forbidden(importer, mod):
                bad.append(f"{path.relative_to(ROOT).as_posix()}:{line} imports {mod}")
    return bad


def _in(mod: str, *packages: str) -> bool:
    return any(mod == p or mod.startswith(p + ".") for p in packages)


def test_the_floor_is_a_subpackage_with_its_modules():
    expected = {"backend", "validation", "arrays", "memory", "pairwise_memory", "distance", "display"}
    assert {f"spectral.floor.{m}" for m in expected} <= FLOOR
    for m in expected:  # no module of the floor is left at its old place beside the layers above it
        assert not (ROOT / "spectral" / f"{m}.py").exists(), f"spectral/{m}.py: the floor lives in spectral/floor/"


def test_resolver_reads_relative_and_package_imports():
    # the resolver itself: relative imports, submodules imported from a package, exported names
    assert _resolve("spectral.floor", "backend") == "spectral.floor.backend"
    assert _resolve("spectral", "markov_spectrum") == "spectral.eigen"
    assert _resolve("spectral", "InputError") == "spectral.floor.validation"
    found = {mod for _, mod in imports_of(ROOT / "manifolds" / "sphere.py")}
    assert {"manifolds.spectra", "manifolds.base", "spectral.floor.distance"} <= found


def test_spectral_imports_no_layer_above_or_beside():
    bad = _offenders(["spectral"], lambda _, mod: _in(mod, "manifolds", "graphs", "verify", "figures"))
    assert not bad, "spectral must not import manifolds/graphs/verify/figures: " + "; ".join(bad)


def test_the_floor_imports_only_the_floor():
    def forbidden(_, mod):
        return mod == "spectral" or (_in(mod, "spectral") and mod not in FLOOR)

    bad = _offenders(["spectral/floor"], forbidden)
    assert not bad, "the floor of spectral imports only the floor: " + "; ".join(bad)


def test_manifolds_import_only_the_floor_of_spectral():
    def forbidden(_, mod):
        if _in(mod, "graphs", "verify", "figures"):
            return True
        return _in(mod, "spectral") and mod not in FLOOR

    bad = _offenders(["manifolds"], forbidden)
    assert not bad, "manifolds may import only the floor of spectral (and no graphs/verify/figures): " + "; ".join(bad)


def test_graphs_import_no_checks_or_figures():
    bad = _offenders(["graphs"], lambda _, mod: _in(mod, "verify", "figures"))
    assert not bad, "graphs must not import verify/figures: " + "; ".join(bad)


def test_verify_imports_no_figures():
    bad = _offenders(["verify"], lambda _, mod: _in(mod, "figures"))
    assert not bad, "verify must not import figures (figures draw verify's data): " + "; ".join(bad)


def test_tests_of_the_libraries_import_no_checks():
    bad = _offenders(["tests/spectral", "tests/graphs", "tests/manifolds"], lambda _, mod: _in(mod, "verify"))
    assert not bad, "tests of spectral/graphs/manifolds must not import verify (tests/verify tests it): " + "; ".join(bad)


# -- no import circle ------------------------------------------------------------------------------

def import_graph() -> dict[str, set[str]]:
    """module -> the modules of the five packages its import statements load (every statement, lazy ones too).

    A package's parents are not edges (Python imports them first, whatever the statement); ``from spectral import
    name`` is an edge to the module that defines ``name``.
    """
    graph: dict[str, set[str]] = {}
    for path in _files(*PACKAGES):
        importer = _module_name(path)
        targets = set()
        for _, mod in imports_of(path):
            if not _in(mod, *PACKAGES):
                continue
            while not _is_module(mod) and "." in mod:  # `import a.b.name`: the module a.b
                mod = mod.rpartition(".")[0]
            if mod != importer:
                targets.add(mod)
        graph[importer] = targets
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_circle_finder_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_anywhere():
    graph = import_graph()
    assert "verify.core.check" in graph and "spectral.floor.backend" in graph["spectral.floor.memory"]
    found = circles(graph)
    assert not found, "import circles (every import statement, lazy ones too): " + "; ".join(
        " <-> ".join(c) for c in found)


# -- nothing private crosses modules ------------------------------------------------------------------

def private_uses(path: Path) -> list[str]:
    """Where ``path`` takes another module's private name: ``from m import _x`` (``_x`` not a submodule of ``m``)
    or ``m._x`` with ``m`` a module of the five packages bound by an import."""
    module = _module_name(path)
    tree = _tree(path)
    bound: dict[str, str] = {}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if _in(a.name, *PACKAGES):
                    bound[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            source = _source_of(node, path)
            if not _in(source, *PACKAGES):
                continue
            for a in node.names:
                if _is_module(f"{source}.{a.name}"):
                    bound[a.asname or a.name] = f"{source}.{a.name}"
                elif a.name.startswith("_") and not a.name.startswith("__") and source != module:
                    out.append(f"{node.lineno}: from {source} import {a.name}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            chain, value = [], node.value
            while isinstance(value, ast.Attribute):
                chain.append(value.attr)
                value = value.value
            if isinstance(value, ast.Name) and value.id in bound:
                owner = ".".join([bound[value.id], *reversed(chain)])
                if owner != module and _is_module(owner):
                    out.append(f"{node.lineno}: {ast.unparse(node)}")
    return out


def test_the_private_finder_reads_imports_and_attributes(tmp_path):
    assert private_uses(ROOT / "spectral" / "__init__.py") == []
    probe = ROOT / "verify" / "_probe_private_uses.py"
    try:
        probe.write_text("from verify.core.cli import _x\nfrom verify.core import cli\ncli._y\n", encoding="utf-8")
        assert private_uses(probe) == ["1: from verify.core.cli import _x", "3: cli._y"]
    finally:
        probe.unlink()


def test_no_module_takes_another_modules_private_name():
    bad = [f"{path.relative_to(ROOT).as_posix()}:{use}" for path in _files(*PACKAGES) for use in private_uses(path)]
    assert not bad, "make the shared name public in its module (or move it where both use it): " + "; ".join(bad)


#: The modules that may be imported inside a function, and why (a top-level module covers its submodules).
#: Everything else is imported at module level (struct_tools' hoist script reads this dict too).
LAZY_IMPORTS = {
    "matplotlib": "drawing only (figures, --figure, the report): a check that draws nothing never loads it",
    "dask": "optional extra [dask]: --scheduler and Context.map on a cluster",
    "distributed": "optional extra [dask]",
    "cupy": "optional extra [gpu]: --device gpu",
    "cupyx": "optional extra [gpu]: --device gpu",
    "torch": "optional: a user's implementation written in PyTorch",
    "numba": "optional extra [fast]: the compiled tiles",
    "tqdm": "optional extra [progress]: a progress bar on a terminal",
    "array_api_compat": "optional extra [gpu]: the array namespace of a device array",
    "array_api_strict": "test extra: the strict namespace a test passes",
    "pytest": "test extra: verify.testing and the pytest plugin need it only under pytest",
    "hypothesis": "test extra",
    "scipy": "start-up: its subpackages cost 100-600 ms each to import (scipy.stats about 600 ms, "
             "scipy.sparse.linalg 400, scipy.linalg 300, scipy.special 250); import spectral, a check's --help "
             "and the start of python -m verify.weyl load none of them",
    "sklearn": "start-up: about 900 ms to import; used by one estimator path and a few checks",
    "sympy": "start-up: about 200 ms to import; only verify.conformal's symbolic algebra",
    "networkx": "start-up: about 90 ms to import; only graph-distance references",
    "resource": "POSIX only: the peak-memory probes (no such module on Windows)",
}

#: Files whose imports inside functions stay there whatever the module (``"path"``), or one module in one file
#: (``"path:module"``), and why.
LAZY_FILES = {
    "verify/core/cpu.py:numpy": "import verify loads this module (the version), and so does the pytest plugin in "
                                "every pytest session: NumPy would add about 100 ms to both",
    "spectral/__init__.py": "the package's exports load their module when first used: import spectral loads none",
    "verify/pytest_plugin.py": "an entry point loaded by every pytest session where the toolkit is installed: it "
                               "loads the toolkit only when a test uses the plugin's options or fixtures",
}


def function_level_imports(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` of every import statement inside a function of ``path``, but those in a ``try:`` of
    the function that catches ImportError (availability probes) and those under ``if TYPE_CHECKING``."""
    tree = _tree(path)
    parents = {c: n for n in ast.walk(tree) for c in ast.iter_child_nodes(n)}
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        a, in_function, probe = node, False, False
        while a in parents:
            a = parents[a]
            if isinstance(a, ast.Try) and not in_function and any(
                    h.type is not None and any(isinstance(x, ast.Name) and x.id in ("ImportError", "ModuleNotFoundError")
                                               for x in ast.walk(h.type)) for h in a.handlers):
                probe = True  # an availability probe: a try that catches ImportError
            if isinstance(a, ast.If) and "TYPE_CHECKING" in ast.unparse(a.test):
                probe = True
            if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)):
                in_function = True
        if in_function and not probe:
            module = _source_of(node, path) if isinstance(node, ast.ImportFrom) else node.names[0].name
            out.append((node.lineno, module))
    return out


def _lazy(module: str) -> bool:
    return any(_in(module, m) for m in LAZY_IMPORTS)


def test_the_import_finder_reads_function_level_imports(tmp_path):
    probe = ROOT / "verify" / "_probe_function_imports.py"
    try:
        probe.write_text("import os\n\n\ndef f():\n    import json\n    from scipy import stats\n    try:\n"
                         "        import cupy\n    except ImportError:\n        pass\n    return json, stats\n",
                         encoding="utf-8")
        assert function_level_imports(probe) == [(5, "json"), (6, "scipy")]
        assert not _lazy("json") and _lazy("scipy.stats") and not _lazy("scipyx")
    finally:
        probe.unlink()


def test_imports_are_at_module_level():
    bad = [f"{path.relative_to(ROOT).as_posix()}:{line} imports {module}" for path in _files(*PACKAGES)
           if path.relative_to(ROOT).as_posix() not in LAZY_FILES
           for line, module in function_level_imports(path)
           if not _lazy(module) and f"{path.relative_to(ROOT).as_posix()}:{module}" not in LAZY_FILES]
    assert not bad, ("import at module level (or add the module to LAZY_IMPORTS with its reason): "
                     + "; ".join(bad))


#: One fresh interpreter at the repository root imports, in this order, the floor, every module of ``manifolds``
#: and ``verify.weyl``, and prints ``sys.modules`` after each step. Each step's assertion forbids modules the
#: earlier steps do not load (the floor loads no other spectral module, manifolds none of graphs/verify/figures),
#: so running them in one interpreter hides nothing that three interpreters would show.
_STEPS = {
    "floor": "; ".join(f"import {m}" for m in sorted(FLOOR)),
    "manifolds": ("import importlib, pkgutil, manifolds\n"
                  "for m in pkgutil.walk_packages(manifolds.__path__, 'manifolds.'):\n"
                  "    importlib.import_module(m.name)"),
    "verify.weyl": "import verify.weyl",
}


@pytest.fixture(scope="module")
def loaded_after():
    """step of :data:`_STEPS` -> the names in ``sys.modules`` after it, in one fresh interpreter."""
    code = "import sys\n" + "".join(f"{text}\nprint('\\n'.join(sorted(sys.modules)))\nprint('--- step')\n"
                                      for step, text in _STEPS.items()
                                      if step != "verify.weyl" or (ROOT / "verify" / "weyl.py").is_file())
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                         timeout=120)
    parts = out.stdout.split("--- step")[:-1]
    return {step: set(part.split()) for step, part in zip(_STEPS, parts)}


def _spectral_beyond_the_floor(loaded) -> list[str]:
    return sorted(m for m in loaded if _in(m, "spectral") and m not in ("spectral", "spectral.floor")
                  and m not in FLOOR)


def test_importing_the_floor_loads_only_the_floor(loaded_after):
    loaded = loaded_after["floor"]
    assert "spectral.floor.backend" in loaded and "spectral.floor.distance" in loaded  # the floor was imported
    assert not _spectral_beyond_the_floor(loaded)
    assert not [m for m in loaded if _in(m, "manifolds", "graphs", "verify", "figures", "scipy")]


def test_importing_manifolds_loads_only_the_floor_of_spectral(loaded_after):
    loaded = loaded_after["manifolds"]
    assert "manifolds.kernel_spectra" in loaded and "manifolds.references.neural" in loaded  # all were imported
    assert not _spectral_beyond_the_floor(loaded), _spectral_beyond_the_floor(loaded)
    assert not [m for m in loaded if _in(m, "graphs", "verify", "figures")]


@pytest.mark.skipif(not (ROOT / "verify" / "weyl.py").is_file(), reason="verify.weyl is not in this checkout")
def test_a_check_loads_no_plotting(loaded_after):
    loaded = loaded_after["verify.weyl"]
    assert "verify.weyl" in loaded
    assert not [m for m in loaded if _in(m, "matplotlib", "figures")]
