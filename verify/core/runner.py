"""Run a selection of checks at their defaults: one row per check, errors captured, a summary by paper.

Used by ``python -m verify`` and by the report (:mod:`verify.core.report`). A check that raises gives an
ERROR row and the others still run; ``full=True`` is passed to the checks whose ``run()`` has a
``full`` option (their heavier tier) and to no other.
"""

from __future__ import annotations

import inspect
import sys
import traceback
from collections.abc import Iterable

from spectral.memory import DenseMemoryError
from spectral.validation import ConvergenceError, InputError, UnavailableError
from verify.core.claims import CHECKS, LEDGER, load_check, outcome_category
from verify.core.progress import progress
from verify.core.result import CheckResult

__all__ = ["CheckRow", "CATEGORIES", "run_checks", "summary_by_paper", "accepts"]

#: (check name, its result or None, the error text when it raised)
CheckRow = tuple[str, CheckResult | None, str]

#: The categories of a run's summary by paper, in the order they are printed.
CATEGORIES = ("confirmed", "confirmed under stated assumptions", "refuted (corrected statement verified)",
              "partly refuted (corrected statement verified)", "check failed", "error", "not checked here")

_EXPECTED = (InputError, UnavailableError, DenseMemoryError, ConvergenceError)


def accepts(run, name: str) -> bool:
    """Whether a check's ``run`` takes the keyword ``name``."""
    return name in inspect.signature(run).parameters


def run_checks(names: Iterable[str], *, full: bool = False, quiet: bool | None = None, **extra) -> list[CheckRow]:
    """Run each check (plus ``extra`` keywords, ``full=True`` where the check has it); one row per check.

    A check that raises gives ``(name, None, message)``: expected failures (bad input, no GPU, memory
    refusal, non-convergence) print nothing more, anything else (a bug) prints its traceback on
    stderr. Progress goes to stderr (:func:`verify.core.progress.progress`; ``quiet`` silences it).
    """
    names = list(names)
    rows: list[CheckRow] = []
    for name in progress(names, desc="verify", quiet=quiet, label=str):
        try:
            run = load_check(name).run
            kwargs = dict(extra)
            if full and accepts(run, "full"):
                kwargs["full"] = True
            rows.append((name, run(**kwargs), ""))
        except _EXPECTED as exc:
            rows.append((name, None, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
        except Exception as exc:  # a bug in one check must not hide the others' results
            traceback.print_exc(file=sys.stderr)
            rows.append((name, None, f"{type(exc).__name__}: {' '.join(str(exc).split())}"))
    return rows


def summary_by_paper(rows: Iterable[CheckRow]) -> dict[str, dict[str, list[str]]]:
    """paper -> category -> claim ids, over every ledger claim that has a check."""
    rows = list(rows)
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
