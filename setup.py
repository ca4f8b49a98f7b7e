"""Build hook: a built package records the git commit of the checkout it was built from.

The metadata is in pyproject.toml. ``build_py`` writes ``verify/core/build_commit.txt`` into the built package
(never into the source tree), so a result's ``versions["git_commit"]`` names the commit also when the toolkit
runs from an installed copy (``pip install .``, a wheel) outside the checkout (verify.core.provenance,
verify.core.git_commit).
"""

import importlib.util
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent


#: The build hook's module: standard library only (pip's build environment has neither NumPy nor the toolkit).
GIT_COMMIT = ROOT / "verify" / "core" / "git_commit.py"


def _git_commit():
    """verify/core/git_commit.py loaded by path (tests/verify/test_provenance.py checks it needs only the stdlib)."""
    spec = importlib.util.spec_from_file_location("_attention_limits_git_commit", GIT_COMMIT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class BuildWithCommit(build_py):
    """``build_py`` that also writes the commit of the source checkout into the built package."""

    def run(self):
        super().run()
        if not self.editable_mode:  # an editable install runs from the checkout itself: git answers there
            _git_commit().write_build_commit(self.build_lib, ROOT)


setup(cmdclass={"build_py": BuildWithCommit})
