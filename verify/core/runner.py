"""Run a selection of checks: one row per check and setting, errors captured, a summary by paper.

Used by ``python -m verify`` and by the report (:mod:`verify.core.report`). Each check runs once per
distinct setting its ledger claims are decided in (:func:`verify.core.claims.settings`: ``weyl`` at its
defaults on S^1 for FNA-10 and with ``manifold="sphere"`` for FNA-11), and each claim takes its outcome
from the run in its own setting. A check that raises gives an ERROR row and the others still run;
``full=True`` is passed to the checks whose ``run()`` has a ``full`` option (their heavier tier) and to
no other.
"""

from __future__ import annotations

import inspect
import sys
import traceback
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from spectral.floor.memory import DenseMemoryError
from spectral.floor.validation import ConvergenceError, InputError, UnavailableError
from verify.core.claims import (LEDGER, decided_by, load_check, outcome_category, run_label, setting,
                                setting_at_defaults, settings)
from verify.core.progress import progress
from verify.core.result import CheckResult

__all__ = ["CheckRow", "CATEGORIES", "run_checks", "summary_by_paper", "accepts", "row_of_claim"]


class CheckRow(NamedTuple):
    """One run of a check: its name, its result (None when it raised), the error text, and the setting it
    ran in (the parameters set for the claims it decides; empty at the defaults)."""

    name: str
    result: CheckResult | None
    error: str
    setting: Mapping[str, Any] = MappingProxyType({})

    @property
    def label(self) -> str:
        """``weyl`` or ``weyl[manifold=sphere]``: the check and the setting where it is not the default."""
        return run_label(self.name, self.setting) if self.setting else self.name


#: The categories of a run's summary by paper, in the order they are printed.
CATEGORIES = ("confirmed", "confirmed under stated assumptions", "refuted (corrected statement verified)",
              "partly refuted (corrected statement verified)", "check failed", "error", "not checked here")

_EXPECTED = (InputError, UnavailableError, DenseMemoryError, ConvergenceError)


def accepts(run, name: str) -> bool:
    """Whether a check's ``run`` takes the keyword ``name``."""
    return name in inspect.signature(run).parameters


def run_checks(names: Iterable[str], *, full: bool = False, quiet: bool | None = None, **extra) -> list[CheckRow]:
    """Run each check once per setting its claims need (plus ``extra`` keywords, ``full=True`` where the
    check has it); one row per run.

    The setting's parameters override ``extra`` (a claim is decided in its own setting). A check that
    raises gives a row with ``result=None`` and the message: expected failures (bad input, no GPU,
    memory refusal, non-convergence) print nothing more, anything else (a bug) prints its traceback on
    stderr. Progress goes to stderr (:func:`verify.core.progress.progress`; ``quiet`` silences it).
    """
    jobs = []
    for name in names:
        try:
            wanted = settings(name)
        except Exception:  # an unknown or broken check: its row says so below
            wanted = [{}]
        jobs += [(name, where) for where in wanted]
    rows: list[CheckRow] = []
    for name, where in progress(jobs, desc="verify", quiet=quiet, label=lambda job: _label(*job)):
        try:
            run = load_check(name).run
            kwargs = {**extra, **where}
            if full and accepts(run, "full"):
                kwargs["full"] = True
            rows.append(CheckRow(name, run(**kwargs), "", MappingProxyType(dict(where))))
        except _EXPECTED as exc:
            rows.append(CheckRow(name, None, f"{type(exc).__name__}: {' '.join(str(exc).split())}",
                                 MappingProxyType(dict(where))))
        except Exception as exc:  # a bug in one check must not hide the others' results
            traceback.print_exc(file=sys.stderr)
            rows.append(CheckRow(name, None, f"{type(exc).__name__}: {' '.join(str(exc).split())}",
                                 MappingProxyType(dict(where))))
    return rows


def _label(name: str, where: Mapping[str, Any]) -> str:
    try:
        return run_label(name, where)
    except Exception:
        return name


def row_of_claim(claim_id: str, rows: Iterable[CheckRow]) -> CheckRow | None:
    """The row of the run that decides ``claim_id`` (its check in the claim's setting), or None."""
    entry = next(c for c in LEDGER if c.id == claim_id)
    if entry.check is None:
        return None
    wanted = setting(claim_id)
    for row in rows:
        if row.name != entry.check:
            continue
        if row.result is not None:
            if decided_by(row.result, claim_id):
                return row
        elif all(k in row.setting and row.setting[k] == v for k, v in wanted.items()) or (
                not row.setting and wanted == setting_at_defaults(entry.check, wanted)):
            return row
    return None


def summary_by_paper(rows: Iterable[CheckRow]) -> dict[str, dict[str, list[str]]]:
    """paper -> category -> claim ids, over every ledger claim that has a check.

    Each claim is counted from the run of its check in its own setting (:func:`row_of_claim`); a claim
    whose check ran in other settings only is ``not checked here``.
    """
    rows = [r if isinstance(r, CheckRow) else CheckRow(*r) for r in rows]
    out: dict[str, dict[str, list[str]]] = {}
    for c in LEDGER:
        if c.check is None:
            continue
        row = row_of_claim(c.id, rows)
        if row is None:
            cat = "not checked here"
        elif row.result is None:
            cat = "error"
        else:
            cat = outcome_category(c.id, row.result.passed)
        out.setdefault(c.paper, {}).setdefault(cat, []).append(c.id)
    return out
