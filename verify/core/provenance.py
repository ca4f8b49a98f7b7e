"""Provenance recorded with every result: versions, git commit, time and command line."""

from __future__ import annotations

import functools
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib import metadata

__all__ = ["toolkit_version", "versions"]

_LIBRARIES = ("numpy", "scipy", "matplotlib", "sympy", "scikit-learn")
_FALLBACK_VERSION = "0.1.0+source"


def toolkit_version() -> str:
    """The installed version of attention-limits (``0.1.0+source`` when run from a source tree)."""
    try:
        return metadata.version("attention-limits")
    except metadata.PackageNotFoundError:
        return _FALLBACK_VERSION


@functools.lru_cache(maxsize=1)
def _git_commit() -> str | None:
    """The commit of the source tree this module was imported from, if it is a git checkout."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    if not os.path.exists(os.path.join(root, ".git")):
        return None
    try:
        out = subprocess.run(["git", "-C", root, "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and commit else None


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
    from verify.core.cpu import cpu_class

    out = {"attention-limits": toolkit_version(), "python": platform.python_version()}
    out.update(_library_versions())
    out["cpu"] = cpu_class()
    commit = _git_commit()
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
