"""The files generated from the code (``docs/api.md``, ``docs/claims.md``, the README's table): stale or rewritten.

:mod:`verify.core.api_doc` and :mod:`verify.core.claims_doc` each make their files' text from the code; this module
compares that text with the files of a source checkout, rewrites the files that differ, and runs the two commands'
``--check`` (exit 1 naming each stale file) and ``--write`` options (:func:`run_doc_command`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from spectral.floor.validation import InputError
from verify.core.cli import EXIT_FAIL, EXIT_PASS, OneLineParser, report_error

__all__ = ["source_root", "stale_files", "write_files", "check_or_write", "doc_parser", "run_doc_command"]


def _differs(path: Path, text: str) -> bool:
    return not path.is_file() or path.read_text(encoding="utf-8") != text


#: What a generated file's text is made by: the source checkout's root -> {file path: text}.
Targets = Callable[[Path], Mapping[Path, str]]


def source_root(root: str | os.PathLike | None = None) -> Path:
    """``root`` as a path, or this source checkout (the folder holding ``verify/``) when None."""
    return Path(root) if root is not None else Path(__file__).resolve().parents[2]


def stale_files(targets: Targets, root: str | os.PathLike | None = None) -> list[str]:
    """The paths of ``targets(root)`` (relative to ``root``, default :func:`source_root`) whose file is missing or
    differs from its text."""
    root = source_root(root)
    return [os.fspath(path.relative_to(root)) for path, text in targets(root).items() if _differs(path, text)]


def write_files(targets: Targets, root: str | os.PathLike | None = None) -> list[str]:
    """Write the text of each of ``targets(root)`` whose file is missing or differs; returns their paths (relative
    to ``root``, default :func:`source_root`)."""
    root = source_root(root)
    changed = []
    for path, text in targets(root).items():
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


def doc_parser(prog: str, doc: str, *, write_help: str, check_help: str):
    """The command line of a generator ``prog`` (its description: the first paragraph of ``doc``), with the options
    ``--write``, ``--check`` (exclusive) and ``--root DIR``."""
    parser = OneLineParser(prog=prog, description=doc.strip().split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=write_help)
    mode.add_argument("--check", action="store_true", help=check_help)
    parser.add_argument("--root", default=None, help="source checkout for --write/--check (default: this one)")
    return parser


def run_doc_command(parser, argv, *, stale_docs: Callable[[str | None], list[str]],
                    write_docs: Callable[[str | None], list[str]], source: str, show: Callable[[object], str],
                    validate: Callable[[object], None] | None = None) -> int:
    """Parse ``argv`` with ``parser`` (from :func:`doc_parser`) and run the command: ``validate(ns)`` first when
    given, then ``--check`` or ``--write`` (:func:`check_or_write`), else print ``show(ns)``.

    An :class:`~spectral.floor.validation.InputError` is one line on stderr and exit 2.
    """
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    try:
        if validate is not None:
            validate(ns)
        done = check_or_write(ns, parser.prog, stale_docs, write_docs, source)
        if done is not None:
            return done
        sys.stdout.write(show(ns))
    except InputError as exc:
        return report_error(parser.prog, exc)
    return EXIT_PASS
