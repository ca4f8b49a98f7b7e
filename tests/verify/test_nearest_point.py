"""verify.nearest_point (DRIFT-11, DRIFT-12): Example 3 minimiser and the zeroth-order limit.

Measured once at a small setting; the printed formula and the regimes outside the calibrated one
(coarse lattice, large eps) are measured at small settings too (the measurement takes the asserted root).
"""

import math

import numpy as np
import pytest

from verify import nearest_point as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, assert_same_quantities, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
FAST = {"candidates": 20000, "n_lattice": 20000, "trials": 6, "eps_grid": (0.004, 0.008, 0.016, 0.032)}
fast = measurement_fixture(CHECK, **FAST)


def test_corrected_minimiser_passes(fast):
    p, q = fast
    res = assert_passes(CHECK, q, p)
    # the printed formula coincides with the argmax, not the argmin
    assert q.printed_minus_argmax <= res.record("example3_symmetric").tolerance


def test_printed_formula_fails_on_its_own_records():
    p, q = measured(CHECK, claim="printed", **FAST)
    # DRIFT-11 as printed: the formula is the argmax, at distance 2 from the minimiser (returns -x for Q = K = I);
    # the limit taken at the printed root does not converge
    res = assert_fails(CHECK, q, p, {"example3_symmetric", "example3_identity_case", "point_limit_slope",
                                     "point_limit_min_error"})
    assert q.example3_symmetric == pytest.approx(2.0, abs=1e-6)
    assert q.example3_identity_case == pytest.approx(2.0, abs=1e-6)
    # general M has no printed formula: still compared with M^T x/|M^T x|, and the circle limit is unaffected
    assert res.record("example3_general").passed and res.record("circle_limit_slope").passed
    assert not any("[" in f for f in res.failures)  # no regime hint on a wrong claim


def test_coarse_lattice_fails_and_says_why():
    # spacing sqrt(4 pi / 5000) = 0.050 > sqrt(2e-4) = 0.014: point slope -0.83 (seed 0)
    p, q = measured(CHECK, eps_grid=(1e-4, 2e-4, 4e-4, 8e-4), n_lattice=5000, candidates=5000, trials=2)
    res = CHECK.assess(q, p)
    assert not res.passed and all("raise n_lattice" in f for f in res.failures)


def test_large_eps_fails_and_says_why():
    p, q = measured(CHECK, eps_grid=(0.008, 0.016, 0.032, 0.064), n_lattice=20000, candidates=5000, trials=2)
    res = assert_fails(CHECK, q, p, "circle_limit_slope")
    assert "O(eps^2)" in res.failures[0]


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "fast", [
    ({"example3_symmetric": 1e-6}, "example3_symmetric"),
    ({"example3_general": 2.0}, "example3_general"),
    ({"example3_identity_case": math.nan}, "example3_identity_case"),
    ({"point_limit_slope": 0.0}, "point_limit_slope"),
    ({"circle_limit_slope": 1.2}, "circle_limit_slope"),
    ({"point_error": np.full(4, 0.1)}, "point_limit_min_error"),
    ({"circle_error": np.full(4, math.nan)}, "circle_limit_min_error"),
])


def test_limit_computes_in_the_given_namespace(fast, strict_xp):
    p, ref = fast
    got = CHECK.measure(p, xp=strict_xp)
    assert {"asarray", "exp", "sum"} <= strict_xp.used
    assert_same_quantities(ref, got)  # array_api_strict wraps numpy: the same numbers


def test_json_round_trip_gives_typed_quantities(fast):
    p, q = fast
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.point_limit_slope == q.point_limit_slope
    np.testing.assert_array_equal(back.circle_error, q.circle_error)


test_bad_input = refusals(CHECK.params, [
    ({"dim": 1}, "dim"), ({"claim": "x"}, "claim"), ({"trials": 1}, "trials"), ({"candidates": 10}, "candidates"),
    ({"n_lattice": 10}, "n_lattice"), ({"eps_grid": (1.0, 2.0, 3.0, 4.0)}, "eps_grid"),
    ({"eps_grid": (0.01, 0.02)}, "eps_grid"),
])


@pytest.mark.parametrize("call, name", [(2, "example3_symmetric"), (3, "example3_general"),
                                        (6, "example3_identity_case")])
def test_a_nan_minimiser_fails(fast, inject_nan, call, name):
    # trial 2 (symmetric) and 3 (general) come after finite distances: max(err, nan) kept err
    p, q = fast
    poisoned = inject_nan("verify.nearest_point._brute_force_min", call=call, at=0)
    err_sym, err_general, sanity, argmax = check._example3(p.claim, p.dim, p.trials, p.candidates, p.seed)
    assert poisoned == [call]
    assert_fails(CHECK, q, p, name, only=True, example3_symmetric=err_sym, example3_general=err_general,
                 example3_identity_case=sanity, printed_minus_argmax=argmax)
