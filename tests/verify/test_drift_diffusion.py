"""verify.drift_diffusion (DRIFT-4): drift coefficient 2; the printed drift and wrong limits fail.

The measurement runs once at small settings (the deterministic quantile grid and the continuum
quadrature); the assertions are held to it, to the printed claim and the wrong limits, and to
quantities a wrong kernel would give. The i.i.d. tiers at their calibrated sizes are the slow tier's.
"""

import dataclasses
import math

import numpy as np
import pytest

from verify import drift_diffusion as check
from verify.testing import (assert_fails, assert_passes, assert_refused, assert_round_trip, measured,
                            measurement_fixture, negative_controls)

CHECK = check.CHECK
small = measurement_fixture(CHECK, tiers=("circle_grid", "sphere_continuum"), grid_n=2000)
half = measurement_fixture(CHECK, tiers=("circle_grid",), grid_n=2000, a=0.5)  # the Coifman-Lafon kernel a = 0.5


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    coef = res.record("circle_grid_drift_coef")  # drift 2 in (1/2)(Delta + 2 <., .>): B = 1
    assert coef.expected == 1.0 and abs(coef.measured - 1.0) <= coef.tolerance
    assert res.record("sphere_continuum_remainder_slope").passed
    assert [r.name for r in res.records] == ["circle_grid_laplacian_coef", "circle_grid_drift_coef",
                                             "circle_grid_relative_rms", "circle_grid_truncation_bound_operator",
                                             "sphere_continuum_remainder_slope",
                                             "sphere_continuum_remainder_slope_interval",
                                             "sphere_continuum_remainder_slope_local_orders"]
    assert res.parameters["grid_n"] == 2000 and res.parameters["circle_grid_eps"] == 1e-3
    assert res.parameters["circle_iid_n"] == 8000 and res.parameters["mixture_mild_eps"] == 0.03


@pytest.mark.parametrize("change", [{"claim": "printed"}, {"wrong_limit": "no_drift"},
                                    {"wrong_limit": "missing_half"}, {"wrong_limit": "sign_flip"}])
def test_printed_and_wrong_limits_fail(small, change):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, **change), "circle_grid_relative_rms")
    assert res.record("circle_grid_relative_rms").measured > 0.3  # measured >= 0.35 for every wrong limit
    assert any("relative RMS" in f for f in res.failures)
    # the continuum tier sees only the Laplacian coefficient: O(eps) remainder (slope 1) for missing_half
    assert res.record("sphere_continuum_remainder_slope").passed is (change.get("wrong_limit") != "missing_half")


def test_coifman_lafon_family(half):
    p, q = half
    res = assert_passes(CHECK, q, p)
    assert res.record("circle_grid_drift_coef").expected == 0.5
    # drift (1-a) instead of 2(1-a): fails
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "circle_grid_drift_coef")


def test_a_wrong_kernel_fails(half):
    """The kernel normalised with a = 0.5 asserted as a = 0 (plain attention): the drift is half of it."""
    p, q = half
    res = assert_fails(CHECK, q, dataclasses.replace(p, a=0.0), "circle_grid_drift_coef", only=True)
    assert res.record("circle_grid_drift_coef").measured == pytest.approx(0.5, abs=0.005)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("tiers", "circle_grid", "laplacian_coef"): 0.99}, "circle_grid_laplacian_coef"),
    ({("tiers", "circle_grid", "drift_coef"): 0.99}, "circle_grid_drift_coef"),
    ({("tiers", "circle_grid", "relative_rms", "corrected"): 0.02}, "circle_grid_relative_rms"),
    (lambda q: {"continuum_slope": {k: 1.0 for k in q.continuum_slope}}, "sphere_continuum_remainder_slope"),
    ({("tiers", "circle_grid", "drift_coef"): math.nan}, "circle_grid_drift_coef"),
    (lambda q: {"continuum_slope": {k: math.nan for k in q.continuum_slope}}, "sphere_continuum_remainder_slope"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert isinstance(back.grid, check.Grid) and isinstance(back.grid.theta, np.ndarray)
    assert set(back.continuum_slope) == {1.0, 2.0} and back.tiers["circle_grid"] == q.tiers["circle_grid"]
    np.testing.assert_array_equal(back.grid.operator, q.grid.operator)


def test_streamed_tiers_compute_in_the_given_namespace(strict_xp):
    # the i.i.d. tiers' streamed kernel runs on arrays of the given namespace and gives numpy's quantities up
    # to summation order (measured: equal or 1 ulp apart)
    # n = 1000 is refused for a verdict (too noisy to decide); the measurement itself is compared here
    p = dataclasses.replace(CHECK.params(tiers=("sphere_iid",)), sphere_iid_n=1000)
    ref = CHECK.measure(p)
    ref = ref.tiers["sphere_iid"]
    got = CHECK.measure(p, xp=strict_xp).tiers["sphere_iid"]
    assert "asarray" in strict_xp.used
    assert got.drift_coef == pytest.approx(ref.drift_coef, rel=1e-12)
    assert got.laplacian_coef == pytest.approx(ref.laplacian_coef, rel=1e-12)
    assert got.relative_rms == pytest.approx(ref.relative_rms, rel=1e-12)


@pytest.mark.parametrize("kwargs, match", [({"a": 1.5}, "a must"), ({"grid_n": 100}, "grid_n"),
                                           ({"claim": "drift_x1"}, "claim"), ({"wrong_limit": "x"}, "wrong_limit"),
                                           ({"tiers": ("torus",)}, "tiers"), ({"tiers": ()}, "tiers"),
                                           ({"claim": "printed", "wrong_limit": "no_drift"}, "wrong_limit"),
                                           ({"circle_iid_eps": 1.0}, "circle_iid_eps"),
                                           # the i.i.d. tiers' noise ~ n^-1/2 eps^-(d+2)/4 and O(eps) bias
                                           ({"circle_iid_n": 1000}, "raise circle_iid_n to at least 6612"),
                                           ({"sphere_iid_eps": 0.01}, "sampling noise F = 4 x"),
                                           ({"mixture_fna_n": 1000}, "mixture_fna_n"),
                                           ({"sphere_iid_eps": 0.16}, "lower sphere_iid_eps below 0.0882"),
                                           ({"mixture_fna_eps": 0.08}, "O\\(eps\\) bias plus"),
                                           ({"sphere_iid_n": 1000, "sphere_iid_eps": 0.08}, "at least 12756"),
                                           # sphere_continuum alone has a uniform density: no_drift passed there
                                           ({"tiers": ("sphere_continuum",), "wrong_limit": "no_drift"},
                                            "cannot test the 'no_drift' limit"),
                                           ({"tiers": ("sphere_continuum",), "claim": "printed"},
                                            "cannot test the 'printed' limit")])
def test_bad_input(kwargs, match):
    assert_refused(CHECK.params, match, **kwargs)


def test_tiers_on_the_command_line(capsys):
    assert check.main(["--tiers", "sphere_continuum", "--quiet"]) == 0
    assert "on sphere_continuum" in capsys.readouterr().out
    assert check.main(["--tiers", "circle_grid,torus", "--quiet"]) == 2
    assert "tiers must be one of" in capsys.readouterr().err


def test_a_nan_point_of_the_kernel_fails(inject_nan):
    # one point of the mixture's heat kernel NaN (its degree and its operator row): "D_ii - 1 >= 50" is
    # false for NaN, so the point left with the sparse tails and the coefficients were fitted without it
    # n = 2000 is refused for a verdict (predicted drift error 0.2); its measurement passes (1.12, 20 % kept)
    p = dataclasses.replace(CHECK.params(tiers=("mixture_mild",)), mixture_mild_n=2000)
    inject_nan("spectral.heat_markov", field="_rows", at=7)
    poisoned = inject_nan("spectral.heat_markov", field="degrees", at=7)
    q = CHECK.measure(p)
    assert poisoned == [0]
    assert_fails(CHECK, q, p, "mixture_mild_drift_coef", only=True)


@pytest.mark.parametrize("eps", [4e-3, 2e-2])
def test_the_grid_tier_at_a_wider_bandwidth_passes_and_wrong_limits_fail(eps):
    # circle_grid's O(eps) bias: drift 1 - 1.85 eps (0.9926 at 4e-3 failed the 0.005 calibrated at eps = 1e-3);
    # its tolerances grow with the measured slope, and the printed and drift-free limits still fail
    res = check.run(tiers=("circle_grid",), grid_n=1400, circle_grid_eps=eps)
    assert res.passed, res.failures
    assert res.record("circle_grid_drift_coef").tolerance == pytest.approx(2.5 * 1.85 * eps)
    for kw in (dict(claim="printed"), dict(wrong_limit="no_drift")):
        wrong = check.run(tiers=("circle_grid",), grid_n=1400, circle_grid_eps=eps, **kw)
        assert not wrong.record("circle_grid_relative_rms").passed, kw
    assert check.grid_tolerance(check.CALIBRATION.get("circle_grid_drift_coef"), check.CHECK.params()).value == 0.005


def test_a_moved_iid_setting_within_the_rules_passes_and_the_printed_drift_fails():
    # circle_iid at n = 2000, eps = 0.16: predicted drift error 0.45 eps + 0.047 F = 0.105 (F = 0.71)
    p, q = measured(CHECK, tiers=("circle_iid",), circle_iid_n=2000, circle_iid_eps=0.16)
    assert check.predicted_drift_error("circle_iid", 2000, 0.16) == pytest.approx(0.105, abs=1e-3)
    assert_passes(CHECK, q, p)
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"), "circle_iid_drift_coef")
