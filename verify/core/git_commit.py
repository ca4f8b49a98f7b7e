"""The git commit of a checkout, and the file a build of the package writes it into.

Standard library only, and nothing of the toolkit: ``setup.py`` loads this file by path at build time (in
pip's isolated build environment, where neither NumPy nor the toolkit is importable);
:mod:`verify.core.provenance` reads the commit back when results record their versions.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["BUILD_COMMIT_FILE", "source_commit", "write_build_commit"]

#: Written by a build next to verify/core/provenance.py: the commit of the checkout the package was built from.
BUILD_COMMIT_FILE = "build_commit.txt"


def source_commit(root) -> str | None:
    """The commit ``git rev-parse HEAD`` of the checkout at ``root``; None when it is not one (or git is missing)."""
    root = os.fspath(root)
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and commit else None


def write_build_commit(package_dir, root) -> str | None:
    """Write the commit of the checkout at ``root`` into ``package_dir/verify/core/`` :data:`BUILD_COMMIT_FILE`.

    Called by ``setup.py`` on the built package (``build_lib``), never on the source tree; nothing is written
    when ``root`` is not a git checkout (an sdist). Returns the commit written, or None.
    """
    commit = source_commit(root)
    if commit is not None:
        target = Path(package_dir) / "verify" / "core" / BUILD_COMMIT_FILE
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(commit + "\n", encoding="utf-8")
    return commit
