"""The files generated from the code (``docs/api.md``, ``docs/claims.md``, the README's table): stale or rewritten.

:mod:`verify.core.api_doc` and :mod:`verify.core.claims_doc` each make their files' text from the code; this module
compares that text with the files of a source checkout, rewrites the files that differ, and runs the two commands'
``--check`` (exit 1 naming each stale file) and ``--write`` options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

__all__ = ["stale_files", "write_files", "check_or_write"]


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != text


def stale_files(targets: Mapping[Path, str], root: Path) -> list[str]:
    """The paths of ``targets`` (relative to ``root``) whose file is missing or differs from its text."""
    return [os.fspath(path.relative_to(root)) for path, text in targets.items() if _differs(path, text)]


def write_files(targets: Mapping[Path, str], root: Path) -> list[str]:
    """Write the text of each of ``targets`` whose file is missing or differs; returns their paths (relative to
    ``root``)."""
    changed = []
    for path, text in targets.items():
        if _differs(path, text):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            changed.append(os.fspath(path.relative_to(root)))
    return changed


def check_or_write(ns, prog: str, stale_docs: Callable[[str | None], list[str]],
                   write_docs: Callable[[str | None], list[str]], source: str) -> int | None:
    """Run the options ``--check`` and ``--write`` of the command ``prog`` (parsed in ``ns``, with ``ns.root``).

    ``--check`` names each stale file on stderr and returns exit 1 if there is one (0 otherwise); ``--write``
    rewrites them and prints their paths. ``source`` is what the files are made from (``"the ledger"``).
    Returns None when neither option was given.
    """
    from verify.core.cli import EXIT_FAIL, EXIT_PASS

    if ns.check:
        stale = stale_docs(ns.root)
        for path in stale:
            sys.stderr.write(f"{prog}: {path} is not what {source} makes; run {prog} --write\n")
        return EXIT_FAIL if stale else EXIT_PASS
    if ns.write:
        for path in write_docs(ns.root):
            print(f"wrote {path}")
        return EXIT_PASS
    return None
