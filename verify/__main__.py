"""List the checks and their claims, or run a selection and print one summary table.

``python -m verify`` lists the checks; ``python -m verify weyl levy`` or ``python -m verify --all``
runs them at their defaults (``--seed`` and ``--device`` are passed on, ``--full`` selects the heavy
tier of the checks that have one), once per setting their ledger claims are decided in (``weyl`` also
runs with ``manifold=sphere``, for FNA-11), prints one line per run with the ledger's verdict on the
claims it decides next to its outcome, and ends with a summary by paper. A check that raises is an
ERROR row and the others still run. ``--report DIR`` also writes ``DIR/index.html`` (one row per
claim, the figures embedded), ``DIR/report.json`` and ``DIR/claims.md``; output paths are tried before
any check runs. Progress goes to stderr (``--quiet`` silences it). Exit code 0 when every check
passed, 1 when one failed or raised, 2 on bad input.
"""

from __future__ import annotations

import json

from spectral.floor.validation import InputError, UnavailableError
from verify.core.claims import CHECKS, CONTRACT_CHECKS, PAPERS, available_checks, claim, claims_in, paper_reading
from verify.core.cli import EXIT_FAIL, EXIT_PASS, OneLineParser, add_execution_options, execution, report_error
from verify.core.progress import silenced
from verify.core.provenance import toolkit_version
from verify.core.report import check_output_dir, check_output_file, report_data, write_report
from verify.core.runner import CATEGORIES, run_checks, summary_by_paper

__all__ = ["main", "run_checks", "summary_by_paper"]


def _listing() -> str:
    lines = []
    available = set(available_checks())
    for name, ids in CHECKS.items():
        if name not in available:
            continue
        titles = "; ".join(f"{cid} {claim(cid).title}"
                           + (f" (run with {', '.join(f'{k}={v}' for k, v in claim(cid).setting)})"
                              if claim(cid).setting else "") for cid in ids)
        lines.append(f"{name:<24} {titles}")
    for name in CONTRACT_CHECKS:
        if name in available:
            lines.append(f"{name:<24} (a contract a user's implementation is held to; decides no ledger claim)")
    return "\n".join(lines) if lines else "no checks installed"


def _print_rows(rows, quiet: bool) -> None:
    width = max(len(row.label) for row in rows)
    for row in rows:
        ids = claims_in(row.name, row.setting) if row.setting else CHECKS.get(row.name, ())
        if row.result is None:
            print(f"ERROR {row.label:<{width}}  [{', '.join(ids)}]  {row.error}")
            continue
        result = row.result
        printed = result.parameters.get("claim") == "printed"
        reading = paper_reading(ids, printed=printed) if ids else result.paper_reading()
        tag = f"[{reading}]  " if reading else ""  # a contract check decides no ledger claim: no bracket
        print(f"{result.verdict:<5} {row.label:<{width}}  {tag}{result.statement}")
        if not quiet:
            for failure in result.failures:
                print(f"      {failure}")


def _print_summary(summary) -> None:
    print("summary by paper (claims covered by a check):")
    short = {v: k for k, v in PAPERS.items()}
    for paper, cats in summary.items():
        parts = [f"{len(cats[c])} {c}" for c in CATEGORIES if c in cats]
        print(f"  {short.get(paper, paper):<7} " + ", ".join(parts))


def main(argv=None) -> int:
    parser = OneLineParser(prog="python -m verify", description=__doc__.strip().split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="checks to run (default: list them)")
    parser.add_argument("--all", action="store_true", help="run every available check")
    parser.add_argument("--full", action="store_true",
                        help="run the heavy tier (full=True) of the checks that have one (minutes)")
    parser.add_argument("--seed", type=int, default=None, help="seed passed to every check")
    parser.add_argument("--device", choices=("cpu", "gpu"), default=None, help="array device passed to every check")
    parser.add_argument("--json", metavar="PATH", default=None,
                        help="write every result, the errors and the summary by paper as JSON to PATH")
    parser.add_argument("--report", metavar="DIR", default=None,
                        help="write DIR/index.html (one row per claim, figures embedded), DIR/report.json and "
                             "DIR/claims.md; DIR is created if missing")
    parser.add_argument("--quiet", action="store_true", help="one line per check, no failure details, no progress")
    add_execution_options(parser)
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
        unknown = [n for n in names if n not in available_checks()]
        if unknown:
            raise InputError(f"unknown check {unknown[0]!r}; available: {', '.join(available_checks())}")
        check_output_file("--json", ns.json)
        check_output_dir("--report", ns.report)
    except InputError as exc:
        return report_error("python -m verify", exc)
    extra = {k: v for k, v in (("seed", ns.seed), ("device", ns.device)) if v is not None}
    options = {"checks": list(names), "full": ns.full, **extra}
    try:
        with silenced(ns.quiet):  # --quiet: no line about a local cluster either
            context = execution(ns)
    except (InputError, UnavailableError) as exc:
        return report_error("python -m verify", exc)
    with silenced(ns.quiet), context:
        rows = run_checks(names, full=ns.full, **extra)
        _print_rows(rows, ns.quiet)
        summary = summary_by_paper(rows)
        passed = sum(1 for row in rows if row.result is not None and row.result.passed)
        failed = sum(1 for row in rows if row.result is not None and not row.result.passed)
        errors = sum(1 for row in rows if row.result is None)
        if ns.all:
            _print_summary(summary)
        try:
            if ns.json:
                with open(ns.json, "w", encoding="utf-8") as fh:
                    json.dump(report_data(rows, options=options), fh, indent=1)
                    fh.write("\n")
            if ns.report:
                print(f"report: {write_report(ns.report, rows, options=options)}")
        except OSError as exc:
            return report_error("python -m verify", InputError(str(exc)))
        print(f"{passed} passed, {failed} failed" + (f", {errors} errors" if errors else ""))
    return EXIT_FAIL if (failed or errors) else EXIT_PASS


if __name__ == "__main__":
    raise SystemExit(main())
