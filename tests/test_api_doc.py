"""docs/api.md is what the exports make; the exports, the modules' ``__all__`` and ``dir()`` agree."""

import importlib
import pkgutil
from pathlib import Path

import pytest

from verify.core import api_doc

ROOT = Path(__file__).resolve().parents[1]
REGENERATE = "run python -m verify.core.api_doc --write and commit docs/api.md"
PACKAGES = ("spectral", "manifolds", "graphs")


@pytest.fixture(scope="module")
def page():
    """``api_doc.api_markdown()``, made once (it parses the modules' sources: about 0.1 s a call)."""
    return api_doc.api_markdown()


@pytest.fixture
def made_once(page, monkeypatch):
    """The command line's --check and --write compare with and write :func:`page` (made once per module)."""
    monkeypatch.setattr(api_doc, "api_markdown", lambda: page)
    return page


def test_committed_page_is_what_the_exports_make(made_once):
    assert api_doc.stale_docs(ROOT) == [], REGENERATE


def test_the_command_checks_the_committed_page(made_once):
    assert api_doc.main(["--check"]) == 0, REGENERATE


def test_check_and_write_on_a_stale_page(tmp_path, capsys, made_once):
    (tmp_path / "docs").mkdir()
    assert api_doc.main(["--check", "--root", str(tmp_path)]) == 1  # missing
    (tmp_path / "docs" / "api.md").write_text("# stale\n", encoding="utf-8")
    assert api_doc.main(["--check", "--root", str(tmp_path)]) == 1
    assert "docs/api.md is not what the exports make" in capsys.readouterr().err
    assert api_doc.main(["--write", "--root", str(tmp_path)]) == 0
    assert (tmp_path / "docs" / "api.md").read_text(encoding="utf-8") == made_once
    assert api_doc.main(["--check", "--root", str(tmp_path)]) == 0
    assert api_doc.write_docs(tmp_path) == []  # nothing left to rewrite
    assert api_doc.main(["--check", "--root", str(tmp_path / "nowhere")]) == 2  # not a checkout: one line, exit 2


def test_one_line_per_exported_name_with_a_summary(page):
    text = page
    for namespace in api_doc.NAMESPACES:
        mod = importlib.import_module(namespace)
        entries = api_doc.api_entries(namespace)
        assert sorted(e.name for e in entries) == sorted(mod.__all__)
        section = text.split(f"## `{namespace}` (")[1].split("\n## ")[0]
        for e in entries:
            assert section.count(f"| `{e.name}` |") == 1, (namespace, e.name)
            assert e.summary, f"{namespace}.{e.name} has no docstring summary (or #: comment)"
            assert e.kind in ("function", "class", "exception", "warning", "constant")
            assert importlib.import_module(e.module) is not None


def test_kinds_and_modules():
    by_name = {e.name: e for e in api_doc.api_entries("spectral")}
    assert (by_name["markov_spectrum"].kind, by_name["markov_spectrum"].module) == ("function", "spectral.eigen")
    assert by_name["DenseMemoryError"].kind == "exception"
    assert by_name["DisconnectedGraphWarning"].kind == "warning"
    assert by_name["Spectrum"].kind == "class"
    graphs = {e.name: e for e in api_doc.api_entries("graphs")}
    assert (graphs["WEIGHTS"].kind, graphs["WEIGHTS"].module) == ("constant", "graphs.paths")
    manifolds = {e.name: e for e in api_doc.api_entries("manifolds")}
    assert manifolds["pairwise_sq_distance"].module == "spectral.floor.distance"  # the floor's routine, shared
    assert "Initial conditions" in manifolds["DRIFT_PDE_INITIALS"].summary  # a constant's #: comment


@pytest.mark.parametrize("package", PACKAGES)
def test_every_module_all_names_exist_and_exports_are_in_their_module_all(package):
    pkg = importlib.import_module(package)
    for info in pkgutil.iter_modules(pkg.__path__):
        if info.ispkg:
            continue
        mod = importlib.import_module(f"{package}.{info.name}")
        names = getattr(mod, "__all__", None)
        assert names is not None, f"{mod.__name__} has no __all__"
        assert len(set(names)) == len(names), f"{mod.__name__}.__all__ repeats a name"
        missing = [n for n in names if not hasattr(mod, n)]
        assert not missing, f"{mod.__name__}.__all__ names missing attributes: {missing}"
    for name in pkg.__all__:
        obj = getattr(pkg, name)
        home = api_doc._defining_module(pkg, name, obj)
        assert name in importlib.import_module(home).__all__, f"{package}.{name} is exported but not in {home}.__all__"


def test_dir_lists_the_exports_only():
    import graphs
    import manifolds
    import spectral

    assert dir(spectral) == sorted(spectral.__all__)
    assert dir(graphs) == sorted(graphs.__all__)
    assert dir(manifolds) == sorted([*manifolds.__all__, "kernel_spectra", "stable"])
    assert {n.partition(".")[2] for n in api_doc.NAMESPACES if n.startswith("manifolds.")} == {"kernel_spectra", "stable"}
    for pkg in (spectral, graphs, manifolds):
        assert not {"annotations", "importlib"} & set(dir(pkg))
    assert manifolds.stable.stable_pdf and manifolds.kernel_spectra.profile  # the namespaces load with the package
