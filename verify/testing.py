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

Each claim is asserted by a run in its own setting (FNA-11 by ``weyl`` on S^2, FNA-10 by ``weyl`` on
S^1; :func:`verify.core.claims.setting`): a ledger id runs its check in that setting, a check name runs
it once per setting its claims need. A check that fails raises ``AssertionError`` listing what
failed, with the ledger's verdict on the paper; a check that cannot run (bad input, no GPU) raises
its own error.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from spectral.validation import InputError
from verify.core.claims import LEDGER, available_checks, load_check, setting, settings
from verify.core.result import CheckResult

__all__ = ["resolve_checks", "resolve_runs", "assert_claims", "assert_rate"]

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


def resolve_runs(names_or_ids: Iterable[str], params: Mapping[str, Any] | None = None) -> list[tuple[str, dict]]:
    """The runs ``(check, setting)`` that decide ``names_or_ids`` (ledger ids, check names or ``"all"``).

    A ledger id gives the run of its check in the claim's setting (:func:`verify.core.claims.setting`:
    FNA-11 is decided by ``weyl`` with ``manifold="sphere"``); a check name gives one run per setting
    its claims need. ``params`` that fix a setting's parameter select the settings they agree with;
    a ledger id whose setting they contradict is an InputError (it would not be decided by that run).
    """
    params = dict(params or {})
    out: list[tuple[str, dict]] = []
    for token in names_or_ids:
        token = token.strip()
        if not token:
            continue
        if token.upper() in _BY_ID:
            cid = token.upper()
            name = resolve_checks([cid])[0]
            where = setting(cid)
            clash = {k: params[k] for k, v in where.items() if k in params and params[k] != v}
            if clash:
                wanted = ", ".join(f"{k}={v!r}" for k, v in where.items() if k in clash)
                raise InputError(f"{cid} is decided by {name} with {wanted}; "
                                 f"{', '.join(f'{k}={v!r}' for k, v in clash.items())} was passed")
            runs = [(name, where)]
        else:
            runs = []
            for name in resolve_checks([token]):
                agree = [w for w in settings(name) if all(params.get(k, v) == v for k, v in w.items())]
                runs += [(name, w) for w in agree] or [(name, {})]
        out += [run for run in runs if run not in out]
    if not out:
        raise InputError("name at least one ledger id or check (or 'all')")
    return out


def assert_claims(*names_or_ids: str, **params) -> list[CheckResult]:
    """Run the checks covering ``names_or_ids``, each in the setting of the claims it decides, and raise
    AssertionError when one fails.

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
        One result per run, in order, when all of them passed: one per check, and one per setting for
        a check whose claims are decided in several (``weyl``: S^1 for FNA-10, S^2 for FNA-11).

    Raises
    ------
    AssertionError
        One or more checks failed: the message has each one's final line and failed assertions.
    InputError
        An unknown id or check, an id with no check, a keyword no selected check takes, or a keyword
        that contradicts the setting of a requested claim.
    """
    import inspect

    runs = resolve_runs(names_or_ids, params)
    funcs = {name: load_check(name).run for name, _ in runs}
    taken = {name: set(inspect.signature(run).parameters) for name, run in funcs.items()}
    unused = [k for k in params if not any(k in t for t in taken.values())]
    if unused:
        raise InputError(f"no selected check takes {', '.join(map(repr, unused))} (checks: {', '.join(funcs)})")
    results = [funcs[name](**{**{k: v for k, v in params.items() if k in taken[name]}, **where})
               for name, where in runs]
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
