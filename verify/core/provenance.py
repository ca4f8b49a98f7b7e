"""Provenance recorded with every result: versions, git commit, time and command line.

The commit is found wherever the code runs from: the git checkout this module lives in (a source tree or an
editable install, whatever the working directory); else the file :data:`BUILD_COMMIT_FILE` that a build of the
package writes next to this module (``pip install .`` or a wheel built from a checkout: ``setup.py`` calls
:func:`verify.core.git_commit.write_build_commit`); else the commit pip recorded for ``pip install git+URL``
(PEP 610 ``direct_url.json``).
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from verify.core.cpu import cpu_class
from verify.core.git_commit import BUILD_COMMIT_FILE, source_commit, write_build_commit

__all__ = ["toolkit_version", "toolkit_commit", "versions", "source_commit", "write_build_commit",
           "BUILD_COMMIT_FILE"]

_LIBRARIES = ("numpy", "scipy", "matplotlib", "sympy", "scikit-learn")
_FALLBACK_VERSION = "0.1.0+source"
_DISTRIBUTION = "attention-limits"


def toolkit_version() -> str:
    """The installed version of attention-limits (``0.1.0+source`` when run from a source tree)."""
    try:
        return metadata.version(_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return _FALLBACK_VERSION


def _here() -> Path:
    return Path(__file__).resolve()


def _built_commit(here: Path) -> str | None:
    """The commit in the :data:`BUILD_COMMIT_FILE` beside ``here`` (an installed build), or None."""
    path = here.with_name(BUILD_COMMIT_FILE)
    try:
        commit = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return commit or None


def _pip_vcs_commit(here: Path) -> str | None:
    """The commit pip recorded for ``pip install git+URL`` (PEP 610), if the installed distribution is this file's."""
    try:
        dist = metadata.distribution(_DISTRIBUTION)
        if Path(dist.locate_file("verify/core/provenance.py")).resolve() != here:
            return None  # another copy is installed: its commit says nothing about this code
        info = json.loads(dist.read_text("direct_url.json") or "{}")
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None
    commit = info.get("vcs_info", {}).get("commit_id")
    return commit if isinstance(commit, str) and commit else None


def toolkit_commit(here=None) -> str | None:
    """The git commit of the toolkit's code (module docstring: checkout, build file, pip's record), or None.

    ``here`` is the path of this module (default: this file); the tests point it at a copy.
    """
    here = _here() if here is None else Path(here).resolve()
    root = here.parents[2]  # .../verify/core/provenance.py -> the folder holding verify/
    return source_commit(root) or _built_commit(here) or _pip_vcs_commit(here)


@functools.lru_cache(maxsize=1)
def _commit() -> str | None:
    return toolkit_commit()


@functools.lru_cache(maxsize=1)
def _library_versions() -> dict[str, str]:
    out = {}
    for name in _LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def versions() -> dict[str, str]:
    """Provenance of a result: Python, the libraries, the CPU class, the toolkit, git commit, UTC time, command line.

    The CPU class (:func:`verify.core.cpu.cpu_class`) is what rounding depends on: a number measured on an
    AVX-512 machine can differ in its last digits from the same run on an AVX2 one.
    """
    out = {"attention-limits": toolkit_version(), "python": platform.python_version()}
    out.update(_library_versions())
    out["cpu"] = cpu_class()
    commit = _commit()
    if commit:
        out["git_commit"] = commit
    out["timestamp"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out["command"] = _command_line()
    return out


def _command_line() -> str:
    """The command that produced the result, as typed (``python -m verify.weyl --alpha 1.2``)."""
    if not sys.argv or not sys.argv[0]:
        return ""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    head = ["python", "-m", spec.name.removesuffix(".__main__")] if spec is not None else ["python", sys.argv[0]]
    return " ".join(head + sys.argv[1:])
