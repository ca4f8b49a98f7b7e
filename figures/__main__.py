"""Regenerate the papers' figures from the checks' data.

``python -m figures NAME [NAME...] | all --out DIR [--format png|pdf]``. Every module
``figures/<paper>_*.py`` exports ``FIGURES = {"fna-1": function, ...}``; each function takes
``(out_dir, *, formats)`` and returns the list of files written. Figures take their numbers from
``verify`` runs and do no numerics of their own; settings a paper left unstated are stated in the
caption.
"""

from __future__ import annotations

import sys

from figures import registry
from verify.cli import OneLineParser


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m figures", description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="figure names, or 'all' (default: list them)")
    parser.add_argument("--out", default=None, help="output directory (required to draw)")
    parser.add_argument("--format", action="append", choices=("png", "pdf", "svg"), default=None,
                        help="file format; repeat for several (default png)")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    reg = registry()
    if not ns.names:
        print("\n".join(reg) if reg else "no figures installed")
        return 0
    names = list(reg) if ns.names == ["all"] else ns.names
    unknown = [n for n in names if n not in reg]
    if unknown:
        sys.stderr.write(f"python -m figures: error: unknown figure {unknown[0]!r}; available: {', '.join(reg)}\n")
        return 2
    if not ns.out:
        sys.stderr.write("python -m figures: error: --out DIR is required to draw figures\n")
        return 2
    formats = tuple(ns.format or ["png"])
    for name in names:
        for path in reg[name](ns.out, formats=formats):
            print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
