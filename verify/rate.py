"""Check your own convergence rate: does error(n) decay like n^p as n grows, at a stated confidence?

``python -m verify.rate package.module:function --sizes 1000,2000,4000,8000 --claimed -0.5`` imports
``function`` (the current folder is on the path), measures ``function(n, rng)`` with independent
seeded streams (or ``function(n)`` once per size when it takes one argument) and decides the claim
by the rule of :mod:`verify.rates`: an interval for the *asymptotic* order from windows of the
largest sizes (each bracketed between its fitted order and its extrapolation with the slowest
admitted correction), ``--kind equal`` (the order is p within ``--tolerance``) or ``--kind bound``
(error = O(n^p)), ``--log-power k`` for error ~ n^p (log n)^k.

Repeats: ``--repeats N`` fixes them; without it (``auto``) a pilot of 64 repeats measures the noise and
the repeats the decision needs are added within ``--budget`` (seconds, default 60, or ``"5000 calls"``),
the error rate split between the looks; ``--extend-sizes`` also adds larger sizes along the ladder
when the local orders, not the noise, are what is undecided. The final line says what was spent and
what would still be needed.

``python -m verify.rate --operating-characteristics [--runs 200]`` prints the rule's measured
operating characteristics instead: on a library of errors with known orders (:mod:`verify.rate_cases`),
the shares of pass / fail / undecided of the true claim and of claims off by 0.15 and 0.3
(:mod:`verify.rate_oc`), then ``--repeats auto``'s on the noisy cases.

This is a declared check with no ledger claims (docs/checks.md): the table, the final line, ``--json``
and ``--plot`` (log-log errors, the interval of the asymptotic order as a wedge from the largest size,
the claimed slope) are those of every check. In code, :func:`verify.rates.check_rate` makes the same
decision, and :func:`verify.testing.assert_rate` asserts it in pytest.

Exit codes: 0 the claim holds; 1 it does not, or the run cannot establish it (``inconclusive``: the
noise is wider than the band, more repeats decide; ``pre-asymptotic``: the local orders still move,
larger sizes decide; ``round-off``; a non-finite error), each said in the final line; 2 bad input,
including a function that cannot be imported, has the wrong signature, raises, runs past
``--timeout``, ignores its random stream, or returns something other than one real number (one line
naming it). An undecided run exits 1, not 2: it is a complete run whose table, JSON and figure show
why the claim is not established, and a CI job must not pass on it; 2 means no result.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping

from spectral.floor.validation import InputError
from verify import rate_oc
from verify.core.check import Check, Context
from verify.core.implementation import load
from verify.core.params import Choice, Flag, Int, Ints, Real, Text
from verify.core.result import Recorder
from verify.rate_rule import Q_MIN
from verify.rates import (DEFAULT_BUDGET, DEFAULT_ROUNDOFF, DEFAULT_TOLERANCE, KINDS, RateQuantities, auto_result,
                          check_rate, decide_rate, parse_budget, rate_records)

__all__ = ["CHECK", "load_function", "main", "run", "decision", "operating_characteristics"]

CHECK = Check("rate", host_only="it runs the user's Python function")

_REQUIRED = "none: it must be given"


@CHECK.parameters
class Params:
    error: str = Text(None, "The error function as package.module:function (the module imported from the current "
                            "folder or the path): error(n, rng) -> float for a random error, error(n) -> float for a "
                            "deterministic one; also accepted as the first positional argument", auto=_REQUIRED)
    sizes: tuple = Ints(None, "Increasing sizes n along a ladder (at least 3; 5 or more give the windows room)", low=2,
                        min_len=3, auto=_REQUIRED)
    claimed: float = Real(None, "The claimed exponent p of error ~ n^p (e.g. -0.5 for a Monte Carlo mean)",
                          auto=_REQUIRED)
    kind: str = Choice("equal", KINDS, '"equal": the asymptotic order is p within the tolerance; "bound": error = '
                                       "O(n^p), the order p or steeper")
    log_power: float = Real(0.0, "k in error ~ n^p (log n)^k (the errors are divided by (log n)^k)", low=-20.0,
                            high=20.0)
    repeats: int = Int(None, "Repeats per size of a random error (independent seeded streams)", low=2, high=10**7,
                       auto="as many as the decision needs within --budget (a pilot of 64, then what its noise "
                            "says)")
    budget: str = Text(str(DEFAULT_BUDGET), "What the automatic repeats may spend: seconds (60, 60s) or calls (5000 "
                                            "calls)")
    extend_sizes: bool = Flag(False, "With the automatic repeats, also add larger sizes along the ladder (the ratio of "
                                     "the last two) while the local orders are still moving")
    confidence: float = Real(0.95, "Level of the interval of the asymptotic order", low=0.5, high=1.0, high_open=True)
    tolerance: float = Real(DEFAULT_TOLERANCE, "Half-width of the accepted band around p (0.1: a claim off by 0.15 "
                                               "never passes unless the interval misses the truth by 0.05)",
                            low=0.0, low_open=True)
    correction: float = Real(Q_MIN, "The slowest correction n^-q the extrapolation allows for (1 narrows the "
                                    "interval when the next term is known to be a full order smaller)",
                             low=0.05, high=10.0)
    floor: float = Real(1e-13, "Errors at or below this are round-off: those sizes are left out", low=0.0)
    roundoff: float = Real(DEFAULT_ROUNDOFF, "Below this, errors whose local orders leave their trend at the largest "
                                             "sizes are a round-off floor and left out (float32: about 1e-5)",
                           low=0.0)
    timeout: float = Real(None, "Seconds one call of the error function may take", low=0.0, low_open=True,
                          unit="s", auto="no limit (the automatic repeats stop a call at the end of --budget)")

    def resolve(self):
        """The three required values, increasing sizes, a budget that parses, and a function that can be imported."""
        for name in ("error", "sizes", "claimed"):
            if getattr(self, name) is None:
                raise InputError(f"{name} must be given (python -m verify.rate package.module:function --sizes "
                                 "1000,2000,4000,8000,16000 --claimed -0.5)")
        if any(b <= a for a, b in zip(self.sizes, self.sizes[1:])):
            raise InputError(f"sizes must increase, got {','.join(map(str, self.sizes))}")
        parse_budget(self.budget)
        if self.extend_sizes and self.repeats is not None:
            raise InputError("--extend-sizes needs the automatic repeats (leave out --repeats)")
        load_function(self.error)
        return self


def load_function(name: str):
    """The callable named ``package.module:function`` (InputError naming it when it cannot be loaded)."""
    return load(name, parameter="error").function


@CHECK.measurement
def measure(p: Params, ctx: Context) -> RateQuantities:
    """The user's error at every size and repeat (an automatic run decides as it measures: its looks are recorded)."""
    fn = load_function(p.error)
    sizes = list(p.sizes) + (["auto"] if p.extend_sizes else [])
    with ctx.timed("errors"):
        res = check_rate(fn, sizes, claimed=p.claimed, kind=p.kind, log_power=p.log_power,
                         repeats="auto" if p.repeats is None else p.repeats, seed=p.seed, confidence=p.confidence,
                         tolerance=p.tolerance, correction=p.correction, floor=p.floor, roundoff=p.roundoff,
                         budget=_budget(p.budget), timeout=p.timeout, label=p.error)
    return res.quantities


def _budget(text: str):
    try:
        return float(text)
    except ValueError:
        return text


@CHECK.assertions
def assess(q: RateQuantities, p: Params, rec: Recorder) -> str:
    """The rule of verify.rates on the measured errors (its records: see verify.rates.rate_records)."""
    return rate_records(rec, decision(q, p))


def decision(q: RateQuantities, p):
    """The decision on measured errors and a run's parameters (``Params`` or the mapping of a result's JSON).

    An automatic run is decided again at the level of its last look (recorded in ``q.spent``), so
    the table, the JSON and the figure show the decision the run made.
    """
    defaults = {"log_power": 0.0, "correction": Q_MIN, "floor": 1e-13, "roundoff": DEFAULT_ROUNDOFF, "seed": 0,
                "tolerance": DEFAULT_TOLERANCE, "confidence": 0.95, "kind": "equal"}

    def get(name):
        value = p.get(name) if isinstance(p, Mapping) else getattr(p, name, None)
        return defaults.get(name) if value is None else value

    options = {name: get(name) for name in ("claimed", "kind", "log_power", "tolerance", "correction", "floor",
                                            "roundoff", "seed")}
    if q.spent:
        res = decide_rate(q, confidence=q.spent["last_confidence"], **options)
        return auto_result(res, q.spent, get("confidence"), random=not q.deterministic)
    return decide_rate(q, confidence=get("confidence"), **options)


run = CHECK.run


def operating_characteristics(runs: int = 200, auto_runs: int | None = None, seed: int = 0) -> str:
    """The two tables of :mod:`verify.rate_oc` and their summary, as printed by ``--operating-characteristics``."""
    rows = rate_oc.characteristics(runs=runs, seed=seed)
    auto = rate_oc.auto_characteristics(runs=auto_runs or max(runs // 4, 10), seed=seed)
    return "\n".join([
        f"Operating characteristics of verify.rates (tolerance {DEFAULT_TOLERANCE:g}, confidence 0.95, corrections "
        f"n^-q with q >= {Q_MIN:g}; {runs} runs per case; cells: pass/fail/undecided in % of runs)", "",
        rate_oc.table(rows), "", rate_oc.summary(rows), "",
        f"repeats='auto' (budget {DEFAULT_BUDGET:g} s at a simulated cost of {rate_oc.CALL_COST[0] * 1e6:g} us + "
        f"{rate_oc.CALL_COST[1] * 1e9:g} ns x n per call; {auto[0].runs} runs per case):", "",
        rate_oc.auto_table(auto)])


def main(argv=None) -> int:
    """``python -m verify.rate [package.module:function] --sizes ... --claimed ...`` (exit 0, 1 or 2)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if "--operating-characteristics" in args:
        return _oc_main([a for a in args if a != "--operating-characteristics"])
    if args and not args[0].startswith("-"):  # the function as the first positional argument
        args = ["--error", args[0], *args[1:]]
    return CHECK.main(args)


def _oc_main(args) -> int:
    parser = argparse.ArgumentParser(prog="python -m verify.rate --operating-characteristics",
                                     description="The measured operating characteristics of the rate rule.")
    parser.add_argument("--runs", type=int, default=200, help="runs per case (default 200)")
    parser.add_argument("--auto-runs", type=int, default=None, help="runs per case of repeats='auto' (default runs/4)")
    parser.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    try:
        ns = parser.parse_args(args)
    except SystemExit as exc:
        return int(exc.code or 0) if exc.code in (0, None) else 2
    if ns.runs < 10 or (ns.auto_runs is not None and ns.auto_runs < 1) or ns.seed < 0:
        print("error: --runs must be at least 10, --auto-runs at least 1 and --seed >= 0", file=sys.stderr)
        return 2
    print(operating_characteristics(ns.runs, ns.auto_runs, ns.seed))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
