"""verify.core.provenance: a result records the toolkit's version and commit wherever the code runs from.

From the checkout (any working directory), from an installed build (the commit written by setup.py next to
provenance.py), and not from a copy that is neither.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from verify.core.git_commit import BUILD_COMMIT_FILE, source_commit, write_build_commit
from verify.core.provenance import toolkit_commit

ROOT = Path(__file__).resolve().parents[2]
HEAD = source_commit(ROOT)
needs_checkout = pytest.mark.skipif(HEAD is None, reason="the tests run from a git checkout only")


def _run_json(cwd, pythonpath, out):
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    proc = subprocess.run([sys.executable, "-m", "verify.neural_cost", "--json", str(out), "--quiet"], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text(encoding="utf-8"))["versions"]


@needs_checkout
def test_a_check_run_from_another_folder_records_version_and_commit(tmp_path):
    versions = _run_json(tmp_path, ROOT, tmp_path / "result.json")
    assert versions["git_commit"] == HEAD
    assert versions["attention-limits"] and versions["command"].startswith("python -m verify.neural_cost --json")


@needs_checkout
def test_an_installed_copy_reads_the_commit_its_build_wrote(tmp_path):
    site = tmp_path / "site"
    module = site / "verify" / "core" / "provenance.py"
    module.parent.mkdir(parents=True)
    shutil.copy(ROOT / "verify" / "core" / "provenance.py", module)
    assert toolkit_commit(module) is None  # no checkout above it and no build file: nothing to report
    assert write_build_commit(site, ROOT) == HEAD
    assert (module.parent / BUILD_COMMIT_FILE).read_text(encoding="utf-8").strip() == HEAD
    assert toolkit_commit(module) == HEAD
    assert write_build_commit(tmp_path / "elsewhere", tmp_path) is None  # an sdist: not a checkout, nothing written
    assert not (tmp_path / "elsewhere").exists()


def _setuptools_builds_this_project() -> bool:
    try:
        import setuptools
    except ImportError:
        return False
    return int(setuptools.__version__.split(".")[0]) >= 77  # pyproject's build-system requirement


@pytest.mark.slow
@needs_checkout
@pytest.mark.skipif(not _setuptools_builds_this_project(), reason="needs setuptools >= 77 to build the wheel offline")
def test_a_wheel_installed_outside_the_checkout_records_the_commit(tmp_path):
    wheels, site = tmp_path / "wheels", tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
                            str(wheels), str(ROOT)], capture_output=True, text=True, timeout=600, check=False)
    assert build.returncode == 0, build.stderr
    wheel = next(wheels.glob("attention_limits-*.whl"))
    install = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--target", str(site), str(wheel)],
                             capture_output=True, text=True, timeout=600, check=False)
    assert install.returncode == 0, install.stderr
    versions = _run_json(tmp_path, site, tmp_path / "result.json")
    assert versions["git_commit"] == HEAD and versions["attention-limits"]


def test_the_build_hook_needs_only_the_standard_library(tmp_path):
    """setup.py loads verify/core/git_commit.py by path inside pip's isolated build environment, where neither
    NumPy nor the toolkit can be imported (an import of verify.core.cpu there broke `pip install .`): loaded with
    -I -S (no site-packages, no working directory on the path) it still writes the commit."""
    code = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('g', sys.argv[1]); "
            "m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m); "
            "print(m.write_build_commit(sys.argv[2], sys.argv[3]))")
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(ROOT / "verify" / "core" / "git_commit.py"),
                           str(tmp_path), str(ROOT)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == str(HEAD)

