"""The layers of the house import one way: floor <- manifolds <- spectral <- graphs <- verify <- figures.

Read from the source with :mod:`ast` (nothing is imported), every import statement anywhere in a file
(also the lazy ones inside functions):

* ``spectral`` imports nothing of ``manifolds``, ``graphs``, ``verify``, ``figures``;
* the floor of ``spectral`` (:data:`FLOOR`: the array backend, validators, memory guard, array inputs,
  the squared-distance routine) imports no other module of ``spectral``;
* ``manifolds`` imports from ``spectral`` only the floor, and nothing of ``graphs``, ``verify``, ``figures``;
* ``graphs`` imports nothing of ``verify``, ``figures``; ``verify`` nothing of ``figures``;
* the tests of ``spectral``, ``graphs`` and ``manifolds`` import nothing of ``verify``.

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

#: The floor of ``spectral``: modules every layer may import, which import no other module of ``spectral``.
FLOOR = frozenset({
    "spectral.backend",
    "spectral.validation",
    "spectral.memory",
    "spectral.pairwise_memory",
    "spectral.arrays",
    "spectral.distance",
})


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def _spectral_exports() -> dict[str, str]:
    """``spectral._EXPORTS`` (public name -> defining module), read from the source."""
    tree = ast.parse((ROOT / "spectral" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "_EXPORTS" for t in targets) and node.value is not None:
            return ast.literal_eval(node.value)
    return {}


def _resolve(package: str, name: str) -> str:
    """What ``from package import name`` loads: the submodule ``package.name``, else the package itself
    (for ``spectral``: the module that defines the exported name)."""
    if (ROOT / Path(*package.split("."), name + ".py")).is_file() or (ROOT / Path(*package.split("."), name)).is_dir():
        return f"{package}.{name}"
    if package == "spectral":
        return _spectral_exports().get(name, package)
    return package


def imports_of(path: Path) -> list[tuple[int, str]]:
    """``(line, module)`` for every module an import statement of ``path`` loads, relative ones resolved."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module
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


def test_the_floor_modules_exist():
    missing = [m for m in FLOOR if not (ROOT / Path(*m.split("."))).with_suffix(".py").is_file()]
    assert not missing


def test_resolver_reads_relative_and_package_imports():
    # the resolver itself: relative imports, submodules imported from a package, exported names
    assert _resolve("spectral", "backend") == "spectral.backend"
    assert _resolve("spectral", "markov_spectrum") == "spectral.eigen"
    found = {mod for _, mod in imports_of(ROOT / "manifolds" / "sphere.py")}
    assert {"manifolds.spectra", "manifolds.base", "spectral.distance"} <= found


def test_spectral_imports_no_layer_above_or_beside():
    bad = _offenders(["spectral"], lambda _, mod: _in(mod, "manifolds", "graphs", "verify", "figures"))
    assert not bad, "spectral must not import manifolds/graphs/verify/figures: " + "; ".join(bad)


def test_the_floor_imports_only_the_floor():
    floor_files = [m.split(".")[1] + ".py" for m in FLOOR]
    bad = []
    for path in (ROOT / "spectral" / f for f in floor_files):
        for line, mod in imports_of(path):
            if _in(mod, "spectral") and mod != "spectral" and mod not in FLOOR:
                bad.append(f"spectral/{path.name}:{line} imports {mod}")
            if mod == "spectral":
                bad.append(f"spectral/{path.name}:{line} imports the package spectral")
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
    return sorted(m for m in loaded if _in(m, "spectral") and m != "spectral" and m not in FLOOR)


def test_importing_the_floor_loads_only_the_floor(loaded_after):
    loaded = loaded_after["floor"]
    assert "spectral.backend" in loaded and "spectral.distance" in loaded  # the floor was imported
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
