"""List the checks and their claims, or run a selection and print one summary table.

``python -m verify`` lists the checks; ``python -m verify weyl levy`` or ``python -m verify --all``
runs them at their defaults (``--seed`` and ``--device`` are passed on), prints one line per check
with the ledger's verdict on the paper next to the check's outcome, and ends with a summary by paper.
A check that raises is an ERROR row and the others still run. Exit code 0 when every check passed,
1 when one failed or raised, 2 on bad input.
"""

from __future__ import annotations

import json
import sys
import traceback

from spectral.memory import DenseMemoryError
from spectral.validation import ConvergenceError, InputError, UnavailableError
from verify.claims import CHECKS, LEDGER, PAPERS, available_checks, claim, load_check, outcome_category
from verify.cli import EXIT_FAIL, EXIT_PASS, OneLineParser, check_output_path, report_error
from verify.provenance import toolkit_version, versions

_EXPECTED = (InputError, UnavailableError, DenseMemoryError, ConvergenceError)
_CATEGORIES = ("confirmed", "confirmed under stated assumptions", "refuted (corrected statement verified)",
               "check failed", "error", "not checked here")


def _listing() -> str:
    lines = []
    available = set(available_checks())
    for name, ids in CHECKS.items():
        if name not in available:
            continue
        titles = "; ".join(f"{cid} {claim(cid).title}" for cid in ids)
        lines.append(f"{name:<24} {titles}")
    return "\n".join(lines) if lines else "no checks installed"


def run_checks(names, **extra):
    """Run each check at its defaults (plus ``extra``); returns ``[(name, result or None, error text)]``.

    A check that raises gives ``(name, None, message)``; expected failures (bad input, no GPU, memory
    refusal, non-convergence) print one line, anything else (a bug) its traceback, on stderr.
    """
    rows = []
    for name in names:
        try:
            rows.append((name, load_check(name).run(**extra), ""))
        except _EXPECTED as exc:
            rows.append((name, None, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
        except Exception as exc:  # a bug in one check must not hide the others' results
            traceback.print_exc(file=sys.stderr)
            rows.append((name, None, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
    return rows


def summary_by_paper(rows) -> dict[str, dict[str, list[str]]]:
    """paper -> category -> claim ids, over every ledger claim that has a check."""
    outcome: dict[str, bool | None] = {}
    for name, result, _ in rows:
        for cid in CHECKS.get(name, ()):
            outcome[cid] = None if result is None else result.passed
    errors = {cid for name, result, _ in rows if result is None for cid in CHECKS.get(name, ())}
    out: dict[str, dict[str, list[str]]] = {}
    for c in LEDGER:
        if c.check is None:
            continue
        cat = "error" if c.id in errors else outcome_category(c.id, outcome.get(c.id))
        out.setdefault(c.paper, {}).setdefault(cat, []).append(c.id)
    return out


def _print_rows(rows, quiet: bool) -> None:
    width = max(len(n) for n, _, _ in rows)
    for name, result, error in rows:
        if result is None:
            print(f"ERROR {name:<{width}}  [{', '.join(CHECKS.get(name, ()))}]  {error}")
            continue
        print(f"{result.verdict:<5} {name:<{width}}  [{result.paper_reading()}]  {result.statement}")
        if not quiet:
            for failure in result.failures:
                print(f"      {failure}")


def _print_summary(summary) -> None:
    print("summary by paper (claims covered by a check):")
    short = {v: k for k, v in PAPERS.items()}
    for paper, cats in summary.items():
        parts = [f"{len(cats[c])} {c}" for c in _CATEGORIES if c in cats]
        print(f"  {short.get(paper, paper):<7} " + ", ".join(parts))


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m verify", description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="checks to run (default: list them)")
    parser.add_argument("--all", action="store_true", help="run every available check")
    parser.add_argument("--seed", type=int, default=None, help="seed passed to every check")
    parser.add_argument("--device", choices=("cpu", "gpu"), default=None, help="array device passed to every check")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="write every result, the errors and the summary by paper as JSON to PATH")
    parser.add_argument("--quiet", action="store_true", help="one line per check, no failure details")
    parser.add_argument("--version", action="version", version=f"attention-limits {toolkit_version()}")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    names = available_checks() if ns.all else ns.names
    if not names:
        print(_listing())
        return EXIT_PASS
    try:
        check_output_path("--json", ns.json)
        unknown = [n for n in names if n not in available_checks()]
        if unknown:
            raise InputError(f"unknown check {unknown[0]!r}; available: {', '.join(available_checks())}")
    except InputError as exc:
        return report_error("python -m verify", exc)
    extra = {k: v for k, v in (("seed", ns.seed), ("device", ns.device)) if v is not None}
    rows = run_checks(names, **extra)
    _print_rows(rows, ns.quiet)
    summary = summary_by_paper(rows)
    passed = sum(1 for _, r, _ in rows if r is not None and r.passed)
    failed = sum(1 for _, r, _ in rows if r is not None and not r.passed)
    errors = sum(1 for _, r, _ in rows if r is None)
    if ns.all:
        _print_summary(summary)
    print(f"{passed} passed, {failed} failed" + (f", {errors} errors" if errors else ""))
    if ns.json:
        data = {"versions": versions(), "results": [r.to_dict() for _, r, _ in rows if r is not None],
                "errors": {n: e for n, r, e in rows if r is None}, "summary_by_paper": summary}
        with open(ns.json, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=1)
            fh.write("\n")
    return EXIT_FAIL if (failed or errors) else EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main())
