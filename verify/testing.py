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

For the tests of a check (the toolkit's, or one you declare with :class:`verify.core.check.Check`): the
module-scoped measurement (:func:`measurement_fixture`, :func:`measured`) and assertions on what it
measured: :func:`assert_passes`, :func:`assert_fails` (a negative control: altered quantities make a named
record fail), :func:`assert_nan_fails`, :func:`assert_round_trip` (JSON), :func:`assert_refused` (bad
input), the parametrized tests :func:`negative_controls` and :func:`refusals`, :func:`assert_every_record_can_fail`
(every deciding record fails under some negative control: the common test of every check), and
:func:`assert_same_quantities`, :func:`assert_same_records`, :func:`assert_printed_agrees`,
:func:`changed_fields`, :func:`failed_records` (docs/checks.md, "Tests"). :func:`measurement_fixture`
declares a check's small setting (:func:`small_settings`) and measures it once per session
(:func:`measured_once`).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from spectral.floor.validation import InputError
from verify.core.claims import (LEDGER, available_checks, claim_records, load_check, printed_disagreements, setting,
                                settings)
from verify.core.controls import controls
from verify.core.result import CheckResult
from verify.rates import check_rate

__all__ = ["resolve_checks", "resolve_runs", "assert_claims", "assert_rate", "measured", "measurement_fixture",
           "failed_records", "assert_passes", "assert_fails", "assert_nan_fails", "assert_same_quantities",
           "assert_round_trip", "assert_refused", "assert_same_records", "changed_fields", "negative_controls",
           "refusals", "assert_printed_agrees", "assert_every_record_can_fail", "measured_once", "small_settings"]

_BY_ID = {c.id: c for c in LEDGER}


def resolve_checks(names_or_ids: Iterable[str]) -> list[str]:
    """Check names for ledger ids (``"FNA-10"`` -> ``"weyl"``), check names and ``"all"``; in order, once each.

    Raises :class:`~spectral.floor.validation.InputError` for an unknown name, or an id that no check
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
            assert_rate(my_error, [1000 * 2**k for k in range(7)], claimed=-0.5, budget=120)

    Parameters
    ----------
    error, sizes, claimed, kind
        As in :func:`verify.rates.check_rate`.
    **options
        ``repeats`` (default ``"auto"``), ``budget``, ``seed``, ``confidence``, ``tolerance``, ``log_power``,
        ``correction``, ``floor``, ``roundoff``, ``timeout`` of :func:`~verify.rates.check_rate`.

    Returns
    -------
    RateResult
        The decision, when the claim holds.
    """
    res = check_rate(error, sizes, claimed=claimed, kind=kind, **options)
    if not res.passed:
        raise AssertionError(f"rate {res.status}: {res.message}\n{res.summary()}")
    return res


# -- testing a check of your own ---------------------------------------------------------------------
# A check's tests measure once at small settings and hold ``assess`` to those quantities, to the printed
# claim and to quantities a wrong implementation gives (docs/checks.md, "Tests"). The helpers below are
# that pattern, for the toolkit's checks and for a check a user declares with verify.core.check.Check.

def measured(check, /, *, xp=None, **params):
    """``(p, q)``: the parameters of ``check`` and the quantities measured with them, as ``run`` measures them.

    The parameters are validated and resolved (``check.params(**params)``), and the computing path is chosen
    the way ``run`` chooses it (``check.choose``: ``method="auto"`` resolved, a path that would not fit in
    memory refused before anything is allocated).

    Parameters
    ----------
    check : verify.core.check.Check
        The check (``verify.weyl.CHECK``, or one of your own).
    xp : array namespace, optional
        Another array namespace to measure in (``array_api_strict``), as ``Check.measure`` takes it.
    **params
        The check's parameters; the rest keep their defaults.

    Returns
    -------
    tuple
        ``(p, q)``: the resolved parameters (the path taken among them) and the typed quantities.

    Examples
    --------
    >>> from verify.appendix_c import CHECK
    >>> p, q = measured(CHECK, c=3.0)
    >>> res = assert_passes(CHECK, q, p)
    >>> sorted(failed_records(CHECK.assess(q, dataclasses.replace(p, claim="printed"))))
    ['coefficient_1d', 'coefficient_2d']
    """
    p = check.choose(check.params(**params))
    return p, check.measure(p, xp=xp)


def measurement_fixture(check, /, **params):
    """A module-scoped pytest fixture giving :func:`measured` ``(check, **params)``: one measurement per file.

    Assign it to the fixture's name at the top of a test file; every test asking for that name gets the
    same ``(p, q)``, measured once::

        from verify.testing import measurement_fixture

        small = measurement_fixture(CHECK, n=64, draws=3)

        def test_small_settings_pass(small):
            p, q = small
            assert_passes(CHECK, q, p)

    Parameters
    ----------
    check : verify.core.check.Check
        The check.
    **params
        Its (small) parameters.

    Returns
    -------
    function
        A pytest fixture with ``scope="module"``, named by the attribute it is assigned to.
    """
    import pytest

    _SMALL_SETTINGS.setdefault(check.name, [])
    if params not in _SMALL_SETTINGS[check.name]:
        _SMALL_SETTINGS[check.name].append(dict(params))

    @pytest.fixture(scope="module")
    def fixture():
        return measured_once(check, **params)

    fixture.__doc__ = f"``(p, q)`` of {check.name} measured once at {params or 'its defaults'}."
    return fixture


#: check name -> the small settings its tests declared with :func:`measurement_fixture` (in declaration order)
_SMALL_SETTINGS: dict[str, list[dict]] = {}
#: (check name, setting) -> (p, q) measured in this process by :func:`measured_once`
_MEASURED: dict[tuple, tuple] = {}


def small_settings(name: str) -> list[dict]:
    """The small settings of check ``name`` declared so far with :func:`measurement_fixture` (by the test modules
    imported in this process), in declaration order."""
    return [dict(s) for s in _SMALL_SETTINGS.get(name, [])]


def measured_once(check, /, **params):
    """:func:`measured` ``(check, **params)``, measured once per process: a later call with the same parameters
    gets a copy of the same ``(p, q)``.

    The module fixtures of :func:`measurement_fixture` share it, so the measurement of a small setting is made
    once per test session whichever test asks first (a check's own tests, or the common control test of every
    check, ``tests/verify/test_controls.py``). Use :func:`measured` where the measurement must be made again
    (under ``monkeypatch``, say).
    """
    key = (id(check), check.name, repr(sorted(params.items())))
    if key not in _MEASURED:
        _MEASURED[key] = measured(check, **params)
    return copy.deepcopy(_MEASURED[key])


def failed_records(result) -> set[str]:
    """The names of the records of ``result`` (a CheckResult) that failed.

    See :func:`measured` for an example.
    """
    return {r.name for r in result.records if r.passed is False}


def assert_passes(check, q, p, /):
    """Assess ``q`` measured with ``p``; assert that every deciding record held and return the result.

    The AssertionError lists the failed assertions (``result.failures``).
    """
    res = check.assess(q, p)
    assert res.passed, res.failures
    return res


def _names(record) -> set[str]:
    return {record} if isinstance(record, str) else set(record)


def assert_fails(check, q, p, record, /, *, only: bool = False, **changes):
    """Assess ``q`` with fields changed; assert that the run failed and that ``record`` failed.

    The negative control of one assertion: a quantity a wrong implementation would give must make that
    assertion (not merely some other one) fail.

    Parameters
    ----------
    check : verify.core.check.Check
        The check.
    q, p
        Quantities and the parameters they were measured with (``p`` may be altered too:
        ``dataclasses.replace(p, claim="printed")``).
    record : str or iterable of str
        The record(s) that must fail.
    only : bool
        Also assert that no other record failed.
    **changes
        Fields of ``q`` to replace (``dataclasses.replace(q, **changes)``); none to assess ``q`` as it is.

    Returns
    -------
    CheckResult
        The failed result, for further assertions (``result.failures`` says why).

    Examples
    --------
    >>> from verify.appendix_c import CHECK
    >>> p, q = measured(CHECK)
    >>> res = assert_fails(CHECK, q, p, "coefficient_2d", only=True, coefficient_2d=q.coefficient_2d * 1.01)
    >>> res = assert_nan_fails(CHECK, q, p, "coefficient_2d", "coefficient_2d")
    """
    res = check.assess(dataclasses.replace(q, **changes) if changes else q, p)
    names, failed = _names(record), failed_records(res)
    for name in names:
        res.record(name)  # KeyError naming the records when there is no such record
    assert not res.passed, f"{check.name} passed" + (f" with {', '.join(changes)} changed" if changes else "")
    assert names <= failed, f"{sorted(names - failed)} did not fail; failed: {sorted(failed)}"
    if only:
        assert failed == names, f"{sorted(failed - names)} failed too"
    return res


def assert_printed_agrees(check, q, p, /, *, holding=()):
    """Assess ``q`` as printed (``claim="printed"``); assert that the run agrees with the ledger's verdicts.

    The ledger says, claim by claim, whether the paper's printed statement holds; the printed run of a
    check must fail where a claim is false as printed and pass the assertions of a claim that holds
    (:func:`verify.core.claims.printed_disagreements` finds none). ``holding`` names claims whose
    assertions must all pass in that run (:func:`verify.core.claims.claim_records`).

    Returns
    -------
    CheckResult
        The printed run's result (``result.final_line()`` states the ledger's verdicts).
    """
    res = check.assess(q, dataclasses.replace(p, claim="printed"))
    disagreements = printed_disagreements(res)
    assert disagreements == [], disagreements
    for cid in holding:
        failed = [r.name for r in claim_records(res, cid) if r.passed is not True]
        assert not failed, f"{cid} holds as printed, but {', '.join(failed)} did not pass"
    return res


def _nan_in(value, at):
    if isinstance(value, np.ndarray):
        out = np.array(value, dtype=np.result_type(value.dtype, np.float64), copy=True)
        if at is None:
            out[...] = np.nan
        else:
            out.reshape(-1)[at] = np.nan
        return out
    if isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_)):
        return float("nan")
    raise TypeError(f"no NaN can be put in a {type(value).__name__}; pass the changed field to assert_fails")


def changed_fields(q, changes, /) -> dict:
    """The fields of ``q`` to replace (for :func:`assert_fails`) so that each value of ``changes`` stands at its path.

    A key of ``changes`` is a field name, or a path into the quantities: a tuple whose first entry is a
    field and whose later entries are dictionary keys (in a dictionary) or field names (in a dataclass).
    Nothing in ``q`` is modified: the dictionaries and dataclasses on the path are copied.

    Examples
    --------
    >>> import dataclasses
    >>> @dataclasses.dataclass(frozen=True)
    ... class Law:
    ...     exponent: float
    ...     mass: float
    >>> @dataclasses.dataclass(frozen=True)
    ... class Q:
    ...     laws: dict
    ...     gap: float
    >>> q = Q({1.2: Law(1.21, 0.5), 2.0: Law(2.0, 0.0)}, 0.01)
    >>> changed_fields(q, {("laws", 1.2, "exponent"): 1.5, "gap": 0.2})
    {'laws': {1.2: Law(exponent=1.5, mass=0.5), 2.0: Law(exponent=2.0, mass=0.0)}, 'gap': 0.2}
    """
    out: dict = {}
    for key, value in changes.items():
        path = (key,) if isinstance(key, str) else tuple(key)
        field = path[0]
        out[field] = _put(out[field] if field in out else getattr(q, field), path[1:], value)
    return out


def _put(obj, path, value):
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(obj, Mapping):
        return {**obj, head: _put(obj[head], rest, value)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return dataclasses.replace(obj, **{head: _put(getattr(obj, head), rest, value)})
    raise TypeError(f"cannot go into a {type(obj).__name__} at {head!r}: paths go through dictionaries and dataclasses")


def _at(obj, path):
    for step in path:
        obj = obj[step] if isinstance(obj, Mapping) else getattr(obj, step)
    return obj


def assert_nan_fails(check, q, p, field, record, /, *, at=None, only: bool = False):
    """Put a NaN into the quantity ``field`` of ``q``; assert that the run failed and that ``record`` failed.

    A non-finite measured value never passes (``Record.passed``): this holds a check to it for one
    quantity, so that a NaN cannot vanish on its way to the deciding record (``max(0.0, nan)`` is 0.0).

    Parameters
    ----------
    check, q, p
        As in :func:`assert_fails`.
    field : str or tuple
        The quantity: a field of ``q``, or a path to a value inside one (:func:`changed_fields`:
        ``("rates", 1.8, "bias")``). A number becomes NaN; an array gets NaN at every entry, or at the flat
        index ``at``.
    record : str or iterable of str
        The record(s) that must fail.
    at : int, optional
        The flat index of the one entry set to NaN; every entry when not given.
    only : bool
        Also assert that no other record failed.

    Returns
    -------
    CheckResult
        The failed result.

    See :func:`assert_fails` for an example.
    """
    path = (field,) if isinstance(field, str) else tuple(field)
    return assert_fails(check, q, p, record, only=only, **changed_fields(q, {path: _nan_in(_at(q, path), at)}))


def negative_controls(check, fixture: str, cases, /, *, only: bool = False):
    """A parametrized pytest test: each case's altered quantities make its record fail (:func:`assert_fails`).

    Every deciding assertion of a check must fail on a quantity a wrong implementation gives; this is that
    test, one parametrized case per assertion, on the measurement of a module fixture::

        small = measurement_fixture(CHECK, n=64)

        test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
            ({"slope": 1.3}, "slope_gap"),                                  # fields replaced
            ({("fits", 1.2, "exponent"): 1.5}, "exponent_a1.2"),           # a value inside a field
            (lambda q: {"errors": q.errors * 2}, "max_error"),              # computed from q
            ({"slope": float("nan")}, "slope_gap"),                         # a NaN never passes
        ], only=True)

    Parameters
    ----------
    check : verify.core.check.Check
        The check.
    fixture : str
        The name of the fixture giving ``(p, q)`` (:func:`measurement_fixture`).
    cases : list of tuple
        ``(change, record)``: ``change`` what to replace in ``q``, as a dictionary (keys: field names, or
        paths into the quantities as :func:`changed_fields` takes them) or as a function of ``q`` returning
        the fields to replace; ``record`` the record (or records) that must fail.
    only : bool
        Also assert that no other record failed.

    Returns
    -------
    function
        The test, to assign to a ``test_...`` name of the test module.
    """
    import pytest

    @pytest.mark.parametrize("change, record", cases)
    def test(request, change, record):
        p, q = request.getfixturevalue(fixture)
        assert_fails(check, q, p, record, only=only, **(change(q) if callable(change) else changed_fields(q, change)))

    test.__doc__ = f"{check.name}: each assertion fails on the quantity a wrong implementation gives."
    return test


def assert_every_record_can_fail(check, q, p, /, *, modes=None):
    """Assert that every deciding record of ``check.assess(q, p)`` fails under some negative control.

    The common test of every check (``tests/verify/test_controls.py`` runs it at each small setting the
    check's tests declare with :func:`measurement_fixture`): an assertion that no finite measurement could
    fail decides nothing. In each claim mode (``claim="corrected"``, ``"printed"``, ...) each deciding record
    must fail as measured (the printed claim's records) or under a finite alteration of the quantities (a
    number scaled or shifted, a flag flipped, an array reversed, a part replaced by its sibling; a NaN alone
    does not count), found by :func:`verify.core.controls.controls`; the run of the first mode must pass.

    Parameters
    ----------
    check : verify.core.check.Check
        The check.
    q, p
        Quantities of a small setting whose run passes, and its parameters.
    modes : sequence of str, optional
        The claim modes to assess (default: all of the check's).

    Returns
    -------
    verify.core.controls.Controls
        The control found for each record (``str(control)`` says what failed it).

    Examples
    --------
    >>> from verify.appendix_c import CHECK
    >>> p, q = measured(CHECK)
    >>> found = assert_every_record_can_fail(CHECK, q, p)
    >>> print(found.found[-1])
    coefficient_2d [printed]: fails as measured
    """
    found = controls(check, q, p, modes=modes)
    assert found.complete, found.summary()
    return found


def refusals(call, cases, /):
    """A parametrized pytest test: each case's parameters are refused (:func:`assert_refused`).

    ::

        test_bad_input = refusals(CHECK.run, [({"n": 1}, "n"), ({"alpha": 3.0}, "alpha")])

    Parameters
    ----------
    call : callable
        A check's ``run`` (or ``CHECK.params``, which validates without measuring).
    cases : list of tuple
        ``(kwargs, match)``: the parameters, and the words (a regular expression) the InputError must say.

    Returns
    -------
    function
        The test, to assign to a ``test_...`` name of the test module.
    """
    import pytest

    @pytest.mark.parametrize("kwargs, match", cases)
    def test(kwargs, match):
        assert_refused(call, match, **kwargs)

    test.__doc__ = "Bad input is refused with an InputError naming the parameter."
    return test


def assert_same_quantities(a, b, /) -> None:
    """Assert that two quantities are the same: types, dictionary keys, array shapes and every value.

    Dataclasses field by field (of the same class), dictionaries key by key, tuples and lists entry by
    entry, arrays by shape, kind of dtype and values, numbers by kind and value; a NaN equals a NaN.
    The AssertionError names the first difference by its path (``q.rates[1.8].exponent[0]``).
    """
    where = _difference(a, b, "q")
    assert where is None, where


def _kind(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "bool"
    if isinstance(x, (int, np.integer)):
        return "int"
    if isinstance(x, (float, np.floating)):
        return "float"
    if isinstance(x, (complex, np.complexfloating)):
        return "complex"
    if isinstance(x, tuple):
        return "(" + ",".join(_kind(v) for v in x) + ")"
    return type(x).__name__


def _difference(a, b, at: str):  # noqa: PLR0911 - one return per kind of value
    if dataclasses.is_dataclass(a) and not isinstance(a, type):
        if type(b) is not type(a):
            return f"{at}: {type(a).__name__} became {type(b).__name__}"
        for f in dataclasses.fields(a):
            found = _difference(getattr(a, f.name), getattr(b, f.name), f"{at}.{f.name}")
            if found:
                return found
        return None
    if isinstance(a, dict):
        if not isinstance(b, dict) or set(a) != set(b):
            return f"{at}: keys {sorted(map(repr, a))} became {sorted(map(repr, b)) if isinstance(b, dict) else b!r}"
        kinds = {k: _kind(k) for k in b}
        for k, v in a.items():
            if _kind(k) != kinds[k]:
                return f"{at}: key {k!r} ({_kind(k)}) became {kinds[k]}"
            found = _difference(v, b[k], f"{at}[{k!r}]")
            if found:
                return found
        return None
    if isinstance(a, (tuple, list)):
        if type(b) is not type(a) or len(a) != len(b):
            return f"{at}: {type(a).__name__} of {len(a)} became {b!r}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = _difference(x, y, f"{at}[{i}]")
            if found:
                return found
        return None
    if isinstance(a, np.ndarray):
        if not isinstance(b, np.ndarray) or a.shape != b.shape or a.dtype.kind != b.dtype.kind:
            got = f"{b.dtype} {b.shape}" if isinstance(b, np.ndarray) else type(b).__name__
            return f"{at}: array {a.dtype} {a.shape} became {got}"
        if not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
            return f"{at}: values differ"
        return None
    if _kind(a) != _kind(b):
        return f"{at}: {_kind(a)} became {_kind(b)}"
    if isinstance(a, (float, np.floating)) and math.isnan(a) and math.isnan(b):
        return None
    return None if a == b else f"{at}: {a!r} became {b!r}"


def assert_round_trip(check, q, p, /):
    """Write the result of ``q`` as JSON and read it back; assert that nothing changed and return it.

    The records read back equal the records written, and the quantities are the same
    (:func:`assert_same_quantities`: their types too, so a figure drawn from a saved result reads the
    same fields as one drawn from a fresh run).

    Returns
    -------
    CheckResult
        The result read back; ``.quantities`` are the typed quantities.

    Examples
    --------
    >>> from verify.appendix_c import CHECK
    >>> p, q = measured(CHECK)
    >>> back = assert_round_trip(CHECK, q, p)
    >>> type(back.quantities) is type(q)
    True
    """
    res = check.assess(q, p)
    back = CheckResult.from_json(res.to_json())
    assert back.records == res.records, "the records read back differ"
    assert_same_quantities(q, back.quantities)
    return back


def assert_refused(call, match: str, /, **kwargs):
    """Assert that ``call(**kwargs)`` refuses the input: an InputError whose message matches ``match``.

    ``call`` is a check's ``run`` (or ``CHECK.params``, which validates without measuring); ``match`` is a
    regular expression searched in the message, usually the parameter's name. Another exception
    propagates with its traceback.

    Returns
    -------
    InputError
        The error, for further assertions on its message.

    Examples
    --------
    >>> from verify import appendix_c
    >>> err = assert_refused(appendix_c.run, "eps_max", eps_max=0.5)
    >>> err = assert_refused(appendix_c.CHECK.params, "claim", claim="paper")
    """
    try:
        call(**kwargs)
    except InputError as exc:
        assert re.search(match, str(exc)), f"the InputError {str(exc)!r} does not match {match!r}"
        return exc
    raise AssertionError(f"{getattr(call, '__name__', call)}({kwargs}) did not refuse the input (expected {match!r})")


def assert_same_records(ref, got, /, *, rel: float = 1e-6, abs: float = 1e-12) -> None:  # noqa: A002 - pytest's names
    """Assert that two results of a check agree: the same records in the same order, each with the same
    outcome and measured value, and so the same verdict.

    Booleans, strings and integers must be equal; numbers (and sequences of numbers) agree within
    ``rel`` and ``abs`` (``pytest.approx``). For a check run in two array namespaces, on two devices
    (``CHECK.measure(p, xp=array_api_strict)`` against NumPy) or by two computing paths.
    """
    import pytest

    assert got.verdict == ref.verdict, (ref.verdict, got.verdict, got.failures)
    assert [r.name for r in got.records] == [r.name for r in ref.records]
    for rec in ref.records:
        assert got.record(rec.name).passed == rec.passed, rec.name
        other = got.record(rec.name).measured
        if isinstance(rec.measured, (bool, str, int)):
            assert other == rec.measured, rec.name
        else:
            assert other == pytest.approx(rec.measured, rel=rel, abs=abs), rec.name
