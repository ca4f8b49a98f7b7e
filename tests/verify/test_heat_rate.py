"""verify.heat_rate (DRIFT-3): Singer's bias and variance exponents on S^1 and S^2.

Measured once with 12 repeats of 16 test points (seed 0); the wrong exponents are asserted on the same
quantities, and a wrong continuum operator is measured at 4 x 4.
"""

import dataclasses
import math

import numpy as np
import pytest

from verify import heat_rate as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"repeats": 12, "test_points": 16}
TINY = {"repeats": 4, "test_points": 4}
small = measurement_fixture(CHECK, **SMALL)


def test_singer_rates_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    for d, want in ((1, -0.75), (2, -1.0)):
        rec = res.record(f"S{d}_variance_eps_slope")
        assert rec.expected == want and abs(rec.measured - want) <= rec.tolerance
        assert rec.tolerance == pytest.approx(0.1 + 2 * q.manifolds[d].variance_eps_slope.stderr)
    assert q.manifolds[1].variance_rms.shape == (4, 5) and q.manifolds[2].variance_rms.shape == (4, 4)


def test_wrong_variance_law_fails(small):
    p, q = small
    # the true exponents miss it by >= 0.2
    res = assert_fails(CHECK, q, dataclasses.replace(p, variance_law="d_over_2"),
                       {"S1_variance_eps_slope", "S2_variance_eps_slope"}, only=True)
    assert sum("sampling-error exponent in eps" in f for f in res.failures) == 2


def test_wrong_bias_order_fails(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, bias_order=2.0), {"S1_bias_slope", "S2_bias_slope"}, only=True)


def test_a_wrong_continuum_operator_fails(monkeypatch):
    """The exact finite-eps eigenvalue off by a factor 1 + eps leaves an O(1) bias: the bias slopes fail."""
    import manifolds

    true = manifolds.heat_kernel_eigenvalue
    monkeypatch.setattr(manifolds, "heat_kernel_eigenvalue", lambda d, mode, e: true(d, mode, e) * (1 + e))
    p, q = measured(CHECK, **TINY)
    assert_fails(CHECK, q, p, {"S1_bias_slope", "S2_bias_slope"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("manifolds", 1, "bias_slope", "slope"): 0.5}, "S1_bias_slope"),
    ({("manifolds", 2, "variance_eps_slope", "slope"): -1.5}, "S2_variance_eps_slope"),
    ({("manifolds", 1, "variance_N_slope", "slope"): -1.0}, "S1_variance_N_slope"),
    ({("manifolds", 2, "variance_N_slope", "slope"): math.nan}, "S2_variance_N_slope"),
])


def test_computes_in_the_given_namespace(strict_xp):
    p, ref = measured(CHECK, **TINY)
    got = CHECK.measure(p, xp=strict_xp)
    assert {"asarray", "exp", "atan2", "sum"} <= strict_xp.used
    for d in (1, 2):  # array_api_strict wraps numpy: the same numbers
        np.testing.assert_array_equal(got.manifolds[d].variance_rms, ref.manifolds[d].variance_rms)
        assert got.manifolds[d].variance_eps_slope == ref.manifolds[d].variance_eps_slope


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert set(back.manifolds) == {1, 2}
    m = back.manifolds[2]
    assert isinstance(m, check.Manifold) and isinstance(m.bias_slope, check.Fit) and m.optimal_eps is None
    np.testing.assert_array_equal(m.variance_rms, q.manifolds[2].variance_rms)


test_bad_input = refusals(CHECK.params, [
    ({"variance_law": "x"}, "variance_law"), ({"test_points": 1}, "test_points"), ({"repeats": 1}, "repeats"),
    ({"bias_order": 0.0}, "bias_order"),
])


@pytest.mark.slow
def test_optimal_eps_exponent():
    res = check.run(full=True)
    assert res.passed, res.failures
    assert res.record("S1_optimal_eps_slope").deciding and res.record("S2_optimal_eps_slope").deciding
    assert res.quantities.manifolds[1].optimal_eps.shape[0] == 2


def test_a_nan_error_gives_a_nan_optimal_eps(monkeypatch):
    # --full: eps* from a parabola through the total error around its minimum; a NaN error gives NaN
    # coefficients, and "c[0] > 0 else the grid point" replaced the NaN by a finite eps* (the fit then passed)
    def errors(rng, xt, ft, d, mode, n_grid, eps_grid, repeats, xp, *, target):
        le = np.log(eps_grid)
        sq = np.exp(2 * (le - le[8]) ** 2)[None, :] * np.ones((len(n_grid), 1)) * (repeats * 4)
        sq[2, 8] = np.nan  # one sample size's error at the minimum
        return sq

    monkeypatch.setattr(check, "_squared_errors", errors)
    n, stars = check._optimal_eps(1, 2, -2.0, np.random.default_rng(0), np, 4, 5)
    assert np.isnan(stars[2]) and np.allclose(np.delete(stars, 2), np.geomspace(0.005, 0.5, 16)[8])
