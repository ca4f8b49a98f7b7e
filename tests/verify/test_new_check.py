"""python -m verify.core.new_check: a new check, its test and its ledger entry from the template, in a copy.

The default tier generates into a temporary copy of the checkout and holds the generated check to what every
check must do (its small setting passes, the printed claim fails, every deciding record can fail); the slow
tier runs the generated test file, and the common tests (the contract, the controls) for it, in that copy.
"""

import ast
import dataclasses
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spectral.floor.validation import InputError
from verify.core import claims
from verify.core import new_check as scaffold
from verify.testing import assert_every_record_can_fail, assert_fails, assert_passes

ROOT = Path(__file__).resolve().parents[2]
NAME = "softmax_rows_example"


def _copy_checkout(dest: Path, tests=()) -> Path:
    """The packages, the pytest configuration and the conftests (and ``tests``, of tests/verify) in ``dest``."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for package in ("verify", "spectral", "manifolds", "graphs"):
        shutil.copytree(ROOT / package, dest / package, ignore=ignore)
    (dest / "tests" / "verify").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", dest)
    shutil.copy(ROOT / "tests" / "conftest.py", dest / "tests")
    for name in ("conftest.py", *tests):
        shutil.copy(ROOT / "tests" / "verify" / name, dest / "tests" / "verify")
    return dest


def _load(path: Path, name: str):
    """The module at ``path`` under ``name`` (in sys.modules: its dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    root = _copy_checkout(tmp_path_factory.mktemp("checkout"))
    before = (root / "verify" / "papers" / "pde.py").read_text(encoding="utf-8")
    out = scaffold.new_check(NAME, "PDE", root=root)
    return root, out, before


def test_writes_the_check_its_test_and_the_ledger_entry(generated):
    root, out, before = generated
    assert out["check"] == root / "verify" / f"{NAME}.py"
    assert out["test"] == root / "tests" / "verify" / f"test_{NAME}.py"
    assert out["ledger"] == root / "verify" / "papers" / "pde.py"
    ids = [int(m) for m in re.findall(r'Claim\("PDE-(\d+)"', before)]
    assert out["claim"] == f"PDE-{max(ids) + 1}"
    paper = _load(out["ledger"], "_copied_pde")
    sys.modules.pop("_copied_pde")
    ledger = claims.ledger_of([paper])  # the copied paper module is a valid ledger, the new entry in it
    entry = next(c for c in ledger.claims if c.id == out["claim"])
    assert entry.check == NAME and entry.paper == "pde-guided-attention" and entry.details is not None
    assert ledger.checks[NAME] == (out["claim"],)
    assert [c.id for c in ledger.claims[:-1]] == [c.id for c in claims.LEDGER if c.id.startswith("PDE-")]
    ast.parse(out["test"].read_text(encoding="utf-8"))
    # the rest of the ledger is as it was: only the entry was added
    after = out["ledger"].read_text(encoding="utf-8")
    assert len(after.splitlines()) == len(before.splitlines()) + 7
    assert "claims=" not in out["check"].read_text(encoding="utf-8")  # the link is written once, in the ledger


def test_the_generated_check_passes_fails_as_printed_and_every_record_can_fail(generated):
    root, out, _ = generated
    module = _load(out["check"], f"verify.{NAME}")
    try:
        check = module.CHECK
        p = check.params(n=64)
        q = check.measure(p)
        assert_passes(check, q, p)
        assert_fails(check, q, dataclasses.replace(p, claim="printed"), "printed_column_sum_error", only=True)
        assert_every_record_can_fail(check, q, p)
        assert module.main(["--n", "64", "--quiet"]) == 0
    finally:
        sys.modules.pop(f"verify.{NAME}", None)


def test_the_docs_show_the_template(generated):
    """docs/checks.md shows the template as the scaffolder writes it (for the name and claim it shows)."""
    text = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    name = re.search(r'CHECK = Check\("(\w+)",', block).group(1)
    title, claim_id = re.match(r'"""(.*) \(([A-Z]+-\d+)\)\.', block).groups()
    assert block == scaffold.render_check(name, claim_id, title)


@pytest.mark.parametrize("argv, match", [
    (["1bad", "--paper", "FNA"], "NAME must be"), (["class", "--paper", "FNA"], "NAME must be"),
    (["weyl", "--paper", "FNA"], "taken"), (["new_one", "--paper", "XYZ"], "--paper must be one of"),
])
def test_bad_names_and_papers_are_one_line_errors(argv, match, capsys, tmp_path):
    root = tmp_path / "root"
    (root / "verify").mkdir(parents=True)
    (root / "verify" / "weyl.py").write_text("")
    assert scaffold.main([*argv, "--root", str(root)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(match, err), err
    assert sorted(p.name for p in (root / "verify").iterdir()) == ["weyl.py"]  # nothing written


def test_a_taken_name_writes_nothing():
    with pytest.raises(InputError, match="taken"):
        scaffold.new_check("weyl", "FNA", root=ROOT)


@pytest.mark.slow
def test_the_generated_tests_and_the_common_tests_pass_in_the_copy(tmp_path):
    root = _copy_checkout(tmp_path / "checkout", tests=("test_contract.py", "test_controls.py"))
    assert scaffold.main([NAME, "--paper", "SA", "--root", str(root)]) == 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           f"tests/verify/test_{NAME}.py", "tests/verify/test_contract.py",
                           "tests/verify/test_controls.py", "-k", NAME],
                          cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert re.search(r"\b(1[5-9]|[2-9]\d) passed", proc.stdout), proc.stdout[-500:]
