"""Assert the papers' claims in your own CI: :func:`assert_claims`, and a pytest option and fixture.

In a test file::

    from verify.testing import assert_claims

    def test_fna_rates_on_this_machine():
        assert_claims("FNA-10", "FNA-13")            # ledger ids or check names

    def test_drift_coefficient_at_a_larger_size():
        assert_claims("drift_diffusion", n=40000)    # keywords go to the checks that take them

From the command line, with no test file of your own: ``pytest --verify-claims FNA-10,DRIFT-4``
(or ``--verify-claims all``; ``--verify-full`` for the heavy tiers) adds one test per check to the
run. The option and the fixture ``verify_claims`` (which is :func:`assert_claims`) come from the
pytest plugin :mod:`verify.pytest_plugin`, registered when the package is installed.

A check that fails raises ``AssertionError`` listing what failed, with the ledger's verdict on the
paper; a check that cannot run (bad input, no GPU) raises its own error.
"""

from __future__ import annotations

from collections.abc import Iterable

from spectral.validation import InputError
from verify.core.claims import LEDGER, available_checks, load_check
from verify.core.result import CheckResult

__all__ = ["resolve_checks", "assert_claims", "assert_rate"]

_BY_ID = {c.id: c for c in LEDGER}


def resolve_checks(names_or_ids: Iterable[str]) -> list[str]:
    """Check names for ledger ids (``"FNA-10"`` -> ``"weyl"``), check names and ``"all"``; in order, once each.

    Raises :class:`~spectral.validation.InputError` for an unknown name, or an id that no check
    covers (the message names the test that covers it, if any).
    """
    available = available_checks()
    out: list[str] = []
    for token in names_or_ids:
        token = token.strip()
        if not token:
            continue
        if token == "all":
            names = available
        elif token.upper() in _BY_ID:
            entry = _BY_ID[token.upper()]
            if entry.check is None:
                covered = f"it is covered by the test {entry.test}" if entry.test else "nothing covers it yet"
                raise InputError(f"{entry.id} has no check ({covered})")
            if entry.check not in available:
                raise InputError(f"{entry.id} is covered by the check {entry.check!r}, which is not installed here")
            names = [entry.check]
        elif token in available:
            names = [token]
        else:
            raise InputError(f"unknown claim id or check {token!r}; checks: {', '.join(available)}; ledger ids "
                             f"look like FNA-10, DRIFT-4")
        out += [n for n in names if n not in out]
    if not out:
        raise InputError("name at least one ledger id or check (or 'all')")
    return out


def assert_claims(*names_or_ids: str, **params) -> list[CheckResult]:
    """Run the checks covering ``names_or_ids`` and raise AssertionError when one fails.

    Parameters
    ----------
    *names_or_ids : str
        Ledger ids (``"FNA-10"``), check names (``"weyl"``) or ``"all"``.
    **params
        Keyword arguments for the checks (``seed=3``, ``full=True``, ``n=4000``); each check gets the
        ones its ``run()`` takes, and a keyword that no selected check takes is an InputError.

    Returns
    -------
    list of CheckResult
        One result per check, in order, when all of them passed.

    Raises
    ------
    AssertionError
        One or more checks failed: the message has each one's final line and failed assertions.
    InputError
        An unknown id or check, an id with no check, or a keyword no selected check takes.
    """
    import inspect

    names = resolve_checks(names_or_ids)
    runs = {name: load_check(name).run for name in names}
    taken = {name: set(inspect.signature(run).parameters) for name, run in runs.items()}
    unused = [k for k in params if not any(k in t for t in taken.values())]
    if unused:
        raise InputError(f"no selected check takes {', '.join(map(repr, unused))} (checks: {', '.join(names)})")
    results = [run(**{k: v for k, v in params.items() if k in taken[name]}) for name, run in runs.items()]
    failed = [r for r in results if not r.passed]
    if failed:
        lines = [f"{len(failed)} of {len(results)} checks failed:"]
        for r in failed:
            lines.append(r.final_line())
            lines += [f"    {f}" for f in r.failures]
        raise AssertionError("\n".join(lines))
    return results


def assert_rate(error, sizes, *, claimed: float, kind: str = "equal", **options):
    """Assert in pytest that ``error(n)`` decays like ``n^claimed`` (or at least as fast, ``kind="bound"``).

    Runs :func:`verify.rates.check_rate` and raises ``AssertionError`` with its message and table
    unless the claim passed; an inconclusive, pre-asymptotic, round-off or non-finite run fails too,
    and says so first::

        from verify.testing import assert_rate

        def test_my_monte_carlo_converges_at_the_square_root_rate():
            assert_rate(my_error, [1000, 4000, 16000, 64000], claimed=-0.5, repeats=64, tolerance=0.15)

    Parameters
    ----------
    error, sizes, claimed, kind
        As in :func:`verify.rates.check_rate`.
    **options
        ``repeats``, ``seed``, ``confidence``, ``tolerance``, ``n_boot``, ``floor`` of
        :func:`~verify.rates.check_rate`.

    Returns
    -------
    RateResult
        The decision, when the claim holds.
    """
    from verify.rates import check_rate

    res = check_rate(error, sizes, claimed=claimed, kind=kind, **options)
    if not res.passed:
        raise AssertionError(f"rate {res.status}: {res.message}\n{res.summary()}")
    return res
