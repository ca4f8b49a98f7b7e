"""Check your own convergence rate: does error(n) decay like n^p, with a confidence interval?

``python -m verify.rate package.module:function --sizes 100,200,400,800 --claimed -0.5 --kind equal``
imports ``function`` (the current folder is on the path), measures ``function(n, rng)`` ``--repeats``
times per size with independent seeded streams (or ``function(n)`` once per size when it takes one
argument), and decides the claim by the rule of :mod:`verify.rates`: the least-squares order over
all repeats, its bootstrap interval at ``--confidence``, the local orders between successive sizes,
and ``--kind equal`` (the order is p within ``--tolerance``) or ``--kind bound`` (error = O(n^p)).

This is a declared check with no ledger claims (docs/checks.md): the table, the final line, ``--json``
and ``--plot`` (log-log errors, the fitted order with its confidence band, the claimed slope) are
those of every check. In code, :func:`verify.rates.check_rate` makes the same decision from the same
pieces (:func:`~verify.rates.measure_rate`, :func:`~verify.rates.decide_rate`,
:func:`~verify.rates.rate_records`), and :func:`verify.testing.assert_rate` asserts it in pytest.

Exit codes: 0 the claim holds; 1 it does not, or the run cannot establish it (``inconclusive``: the
interval straddles the band; ``pre-asymptotic``: the local orders are still moving; ``round-off``;
a non-finite error), each said in the final line; 2 bad input, including a function that cannot be
imported, raises, or returns something other than one real number (one line naming it). A
pre-asymptotic run exits 1, not 2: it is a complete run whose table, JSON and figure show why the
claim is not established at these sizes, and a CI job must not pass on it; 2 means no result.
"""

from __future__ import annotations

import importlib

from spectral.validation import InputError
from verify.core.check import Check, Context
from verify.core.params import Choice, Int, Ints, Real, Text
from verify.core.result import Recorder
from verify.rates import KINDS, RateQuantities, decide_rate, measure_rate, rate_records, takes_rng

__all__ = ["CHECK", "load_function", "main", "run"]

CHECK = Check("rate", claims=(), host_only="it runs the user's Python function")

_REQUIRED = "none: it must be given"


@CHECK.parameters
class Params:
    error: str = Text(None, "The error function as package.module:function (the module imported from the current "
                            "folder or the path): error(n, rng) -> float for a random error, error(n) -> float for a "
                            "deterministic one; also accepted as the first positional argument", auto=_REQUIRED)
    sizes: tuple = Ints(None, "Increasing sizes n (at least 3; 4 or more give the local orders room)", low=1,
                        min_len=3, auto=_REQUIRED)
    claimed: float = Real(None, "The claimed exponent p of error ~ n^p (e.g. -0.5 for a Monte Carlo mean)",
                          auto=_REQUIRED)
    kind: str = Choice("equal", KINDS, '"equal": the observed order is p within the tolerance; "bound": error = '
                                       "O(n^p), the order is p or steeper")
    repeats: int = Int(8, "Repeats per size of a random error (independent seeded streams)", low=2, high=10**6)
    confidence: float = Real(0.95, "Level of the bootstrap interval of the order", low=0.5, high=1.0, high_open=True)
    tolerance: float = Real(0.05, "Half-width of the accepted band around p; the local orders settle within half of "
                                  "it", low=0.0, low_open=True)
    n_boot: int = Int(2000, "Bootstrap resamples of the repeats", low=100, high=10**6)
    floor: float = Real(1e-13, "Errors at or below this are round-off: the run is refused rather than fitted",
                        low=0.0)

    def resolve(self):
        """The three required values, increasing sizes, and a function that can be imported."""
        for name in ("error", "sizes", "claimed"):
            if getattr(self, name) is None:
                raise InputError(f"{name} must be given (python -m verify.rate package.module:function --sizes "
                                 "100,200,400,800 --claimed -0.5)")
        if any(b <= a for a, b in zip(self.sizes, self.sizes[1:])):
            raise InputError(f"sizes must increase, got {','.join(map(str, self.sizes))}")
        load_function(self.error)
        return self


def load_function(name: str):
    """The callable named ``package.module:function`` (InputError naming it when it cannot be loaded)."""
    module, sep, attr = name.partition(":")
    if not sep or not module or not attr:
        raise InputError(f"error must be given as package.module:function, got {name!r}")
    try:
        fn = importlib.import_module(module)
        for part in attr.split("."):
            fn = getattr(fn, part)
    except Exception as exc:  # noqa: BLE001 - any import failure of the user's module is their input
        raise InputError(f"error function {name!r} cannot be loaded: {type(exc).__name__}: {exc}") from None
    if not callable(fn):
        raise InputError(f"error function {name!r} is not callable")
    return fn


@CHECK.measurement
def measure(p: Params, ctx: Context) -> RateQuantities:
    """The user's error at every size and repeat; an exception it raises becomes one line naming it."""
    from verify.core.implementation import ImplementationError

    try:
        fn = load_function(p.error)
    except InputError as exc:  # the user's module: one line naming it (exit 2)
        raise ImplementationError(str(exc)) from None
    random = takes_rng(fn)

    def guarded(n, *rng):
        try:
            return fn(n, *rng)
        except Exception as exc:  # noqa: BLE001 - the user's function: one line naming it (exit 2)
            raise ImplementationError(f"error function {p.error} raised {type(exc).__name__} at n = {n}: "
                                      f"{exc}") from None

    with ctx.timed("errors"):
        try:
            return measure_rate(guarded, p.sizes, repeats=p.repeats, seed=p.seed, random=random, label=p.error)
        except ImplementationError:
            raise
        except InputError as exc:  # what the user's function returned is not an error value: exit 2
            raise ImplementationError(str(exc)) from None


@CHECK.assertions
def assess(q: RateQuantities, p: Params, rec: Recorder) -> str:
    """The rule of verify.rates on the measured errors (its records: see verify.rates.rate_records)."""
    res = decide_rate(q, claimed=p.claimed, kind=p.kind, confidence=p.confidence, tolerance=p.tolerance,
                      seed=p.seed, n_boot=p.n_boot, floor=p.floor)
    return rate_records(rec, res)


run = CHECK.run


def main(argv=None) -> int:
    """``python -m verify.rate [package.module:function] --sizes ... --claimed ...`` (exit 0, 1 or 2)."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    if args and not args[0].startswith("-"):  # the function as the first positional argument
        args = ["--error", args[0], *args[1:]]
    return CHECK.main(args)


if __name__ == "__main__":
    raise SystemExit(main())
