"""``docs/api.md``, the toolkit's public API, generated from what the packages export.

``python -m verify.core.api_doc`` prints ``docs/api.md`` as the exports make it; ``--write`` rewrites it
in a source checkout, and ``--check`` exits 1 when it differs from what the exports make (the tests run
it, so the page cannot go stale). One line per name: the name, its kind, the one-line summary of its
docstring (of a constant, its ``#:`` comment) and the module that defines it.

The API is what :data:`NAMESPACES` export (``__all__``): the packages ``spectral``, ``manifolds``
and ``graphs``, and the two submodules of ``manifolds`` that are namespaces of their own. A second
part lists what the other modules' ``__all__`` add: names supported when imported from their module
(the validators and the memory guard of ``spectral``'s floor, ...), which the package does not export.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import os
import pkgutil
from pathlib import Path

from spectral.floor.validation import InputError
from verify.core.generated_docs import doc_parser, run_doc_command, stale_files, write_files

__all__ = ["NAMESPACES", "ApiEntry", "api_entries", "module_entries", "api_markdown", "write_docs", "stale_docs",
           "main"]

#: The namespaces whose ``__all__`` is the public API, in the order of the page.
NAMESPACES = ("spectral", "manifolds", "manifolds.kernel_spectra", "manifolds.stable", "graphs")

#: The packages whose modules' ``__all__`` are read for the page's second part.
_PACKAGES = ("spectral", "manifolds", "graphs")
#: Subpackages whose modules are read with their package's (the floor of ``spectral``, which every layer imports).
_SUBPACKAGES = {"spectral": ("floor",)}

_DOC = Path("docs") / "api.md"


@dataclasses.dataclass(frozen=True)
class ApiEntry:
    """One line of the page: ``name`` imported from ``namespace``; ``module`` defines it."""

    namespace: str
    name: str
    kind: str
    summary: str
    module: str


def _kind(obj) -> str:
    if inspect.ismodule(obj):
        return "module"
    if isinstance(obj, type):
        if issubclass(obj, Warning):
            return "warning"
        if issubclass(obj, BaseException):
            return "exception"
        return "class"
    if callable(obj):
        return "function"
    return "constant"


def _first_paragraph(text: str | None) -> str:
    """The first paragraph of a docstring or comment, on one line."""
    if not text:
        return ""
    lines = []
    for line in inspect.cleandoc(text).splitlines():
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def _assignment(module, name: str):
    """``(node, source lines)`` of the top-level statement of ``module`` that assigns ``name``, or None."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    for node in ast.parse(source).body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return node, source.splitlines()
    return None


def _constant_comment(module, name: str) -> str:
    """The ``#:`` comment lines right above ``name = ...`` at the top level of ``module``."""
    found = _assignment(module, name)
    if found is None:
        return ""
    node, lines = found
    comment, i = [], node.lineno - 2
    while i >= 0 and lines[i].lstrip().startswith("#:"):
        comment.insert(0, lines[i].lstrip()[2:].strip())
        i -= 1
    return " ".join(comment)


def _defining_module(namespace, name: str, obj) -> str:
    """The module that defines ``obj``: ``__module__`` of a class or function, else the module among the
    namespace and its package's modules whose top-level code assigns ``name``."""
    module = getattr(obj, "__module__", None)
    if _kind(obj) != "constant" and isinstance(module, str):
        return module
    exports = getattr(namespace, "_EXPORTS", None)
    if isinstance(exports, dict) and name in exports:  # spectral: exported lazily from its module
        return exports[name]
    candidates = [namespace.__name__]
    if hasattr(namespace, "__path__"):
        candidates += [f"{namespace.__name__}.{m.name}" for m in pkgutil.iter_modules(namespace.__path__)
                       if not m.ispkg]
    for candidate in candidates:
        mod = importlib.import_module(candidate)
        if name in mod.__dict__ and mod.__dict__[name] is obj and _assignment(mod, name) is not None:
            return candidate
    return namespace.__name__


def _entry(namespace, name: str) -> ApiEntry:
    obj = getattr(namespace, name)
    kind = _kind(obj)
    module = _defining_module(namespace, name, obj)
    if kind == "constant":
        summary = _constant_comment(importlib.import_module(module), name)
        if not summary:
            summary = f"``{obj!r}``" if len(repr(obj)) <= 80 else ""
    else:
        summary = _first_paragraph(obj.__doc__)
    return ApiEntry(namespace.__name__, name, kind, summary, module)


def api_entries(namespace: str) -> list[ApiEntry]:
    """One entry per name of ``namespace.__all__``, sorted by name (case-insensitive)."""
    mod = importlib.import_module(namespace)
    return [_entry(mod, name) for name in sorted(mod.__all__, key=lambda n: (n.lower(), n))]


def module_entries() -> list[ApiEntry]:
    """The names the modules' ``__all__`` add to :data:`NAMESPACES`: supported when imported from their module.

    Every top-level module of the packages and of the subpackages in :data:`_SUBPACKAGES` (``spectral.floor``;
    others such as ``manifolds.references`` are not read) other than the namespaces themselves; a name its
    package exports (the same object) is left out.
    """
    out = []
    for package in _PACKAGES:
        pkg = importlib.import_module(package)
        names = [f"{package}.{info.name}" for info in pkgutil.iter_modules(pkg.__path__) if not info.ispkg]
        for sub in _SUBPACKAGES.get(package, ()):
            subpkg = importlib.import_module(f"{package}.{sub}")
            names += [f"{package}.{sub}.{info.name}" for info in pkgutil.iter_modules(subpkg.__path__)
                      if not info.ispkg]
        for name in sorted(names, key=lambda n: n.rpartition(".")[2]):
            if name in NAMESPACES:
                continue
            mod = importlib.import_module(name)
            for attr in sorted(getattr(mod, "__all__", ()), key=lambda n: (n.lower(), n)):
                if attr in pkg.__all__ and getattr(pkg, attr) is getattr(mod, attr):
                    continue
                out.append(_entry(mod, attr))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _table(entries, *, where: str = "module") -> list[str]:
    """Markdown rows; the last column is ``entry.module`` (``where="module"``) or ``entry.namespace``."""
    rows = [f"| name | kind | summary | {'module' if where == 'module' else 'import from'} |",
            "| --- | --- | --- | --- |"]
    rows += [f"| `{e.name}` | {e.kind} | {_cell(e.summary)} | `{getattr(e, where)}` |" for e in entries]
    return rows


def api_markdown() -> str:
    """The text of ``docs/api.md``."""
    out = ["# Public API", "",
           ("Generated from the exports by `python -m verify.core.api_doc --write`; do not edit by hand "
            "(`python -m verify.core.api_doc --check` exits 1 when this page is stale, and the tests run it)."), "",
           ("The API is what the packages export, their `__all__`: `from spectral import markov_spectrum`, "
            "`from manifolds import Sphere`, `from graphs import spectral_gap`, and the two namespaces "
            "`manifolds.kernel_spectra` and `manifolds.stable` (`from manifolds import stable`). "
            "Each line gives the name, its kind, the first paragraph of its docstring (of a constant, "
            "its comment or its value) and the module that defines it."), ""]
    for namespace in NAMESPACES:
        entries = api_entries(namespace)
        out += [f"## `{namespace}` ({len(entries)} names)", ""] + _table(entries) + [""]
    extra = module_entries()
    out += ["## Imported from their modules", "",
            ("What each module's `__all__` adds to the exports: names supported when imported from the module "
             "named in the last column (`from spectral.floor.validation import check_real`), mostly the floor of "
             "`spectral` that every layer uses. Any other name of a module is internal."), ""]
    out += _table(extra, where="namespace") + [""]
    return "\n".join(out)


def _targets(root: Path) -> dict[Path, str]:
    if not (root / "docs").is_dir():
        raise InputError(f"no docs/ under {os.fspath(root)!r}: --write and --check need a source checkout")
    return {root / _DOC: api_markdown()}


def stale_docs(root: str | os.PathLike | None = None) -> list[str]:
    """Paths (relative to ``root``) whose content differs from what the exports make."""
    return stale_files(_targets, root)


def write_docs(root: str | os.PathLike | None = None) -> list[str]:
    """Rewrite ``docs/api.md`` from the exports; returns the paths changed."""
    return write_files(_targets, root)


def main(argv=None) -> int:
    """``python -m verify.core.api_doc [--write | --check] [--root DIR]``."""
    parser = doc_parser("python -m verify.core.api_doc", __doc__, write_help="rewrite docs/api.md in place",
                        check_help="exit 1 when docs/api.md differs from the exports")
    return run_doc_command(parser, argv, stale_docs=stale_docs, write_docs=write_docs, source="the exports",
                           show=lambda ns: api_markdown())


if __name__ == "__main__":
    raise SystemExit(main())
