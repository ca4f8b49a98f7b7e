"""List the checks and their claims, or run a selection and print one summary table.

``python -m verify`` lists the checks; ``python -m verify weyl levy`` or ``python -m verify --all``
runs them with their defaults (``--seed`` and ``--device`` are passed on) and exits 1 if any fails,
2 on bad input.
"""

from __future__ import annotations

import argparse
import sys

from verify.claims import CHECKS, available_checks, claim, load_check
from verify.cli import EXIT_ERROR, EXIT_FAIL, EXIT_PASS, OneLineParser


def _listing() -> str:
    lines = []
    available = set(available_checks())
    for name, ids in CHECKS.items():
        if name not in available:
            continue
        titles = "; ".join(f"{cid} {claim(cid).title}" for cid in ids)
        lines.append(f"{name:<22} {titles}")
    return "\n".join(lines) if lines else "no checks installed"


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m verify", description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="checks to run (default: list them)")
    parser.add_argument("--all", action="store_true", help="run every available check")
    parser.add_argument("--seed", type=int, default=None, help="seed passed to every check")
    parser.add_argument("--device", choices=("cpu", "gpu"), default=None, help="array device")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    names = available_checks() if ns.all else ns.names
    if not names:
        print(_listing())
        return EXIT_PASS
    extra = {k: v for k, v in (("seed", ns.seed), ("device", ns.device)) if v is not None}
    rows = []
    try:
        modules = [load_check(name) for name in names]
        for name, module in zip(names, modules):
            result = module.run(**extra)
            rows.append((name, result))
    except (ValueError, TypeError, MemoryError, RuntimeError) as exc:
        sys.stderr.write(f"python -m verify: error: {' '.join(str(exc).split())}\n")
        return EXIT_ERROR
    width = max(len(n) for n, _ in rows)
    for name, result in rows:
        print(f"{result.verdict}  {name:<{width}}  [{', '.join(result.claims)}]  {result.statement}")
        for failure in result.failures:
            print(f"      {failure}")
    failed = [n for n, r in rows if not r.passed]
    print(f"{len(rows) - len(failed)} passed, {len(failed)} failed")
    return EXIT_FAIL if failed else EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main())
