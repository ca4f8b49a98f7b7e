"""verify.sk_generator (SK-2): Sinkhorn keeps half the softmax's drift; the scaling is p^(-1/2).

Measured once on the S^1 quantile grid at 800 points (a spectrally accurate quadrature: the sampled operators
equal the exact finite-eps continuum to 1e-11) and once on small S^2 and i.i.d. tiers (800 points: a setting with
calibration rows of its own); the assertions are held to those quantities, to each wrong Sinkhorn limit (the
Laplace-Beltrami "heat" reading, the softmax drift, a density time change), to a Sinkhorn normalisation replaced
by the row normalisation, and to altered quantities.
"""

import dataclasses

import numpy as np
import pytest

import spectral
from verify import sk_generator as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_records,
                            changed_fields, measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
small = measurement_fixture(CHECK, tiers=("circle_grid",), circle_grid_n=800)
others = measurement_fixture(CHECK, tiers=("sphere_grid", "circle_iid", "sphere_iid"), sphere_grid_n=800,
                             sphere_grid_eps=0.04, circle_iid_n=800, sphere_iid_n=800, sphere_iid_eps=0.05)


def test_grid_passes_with_the_langevin_limit(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert abs(res.measured["circle_grid_sinkhorn_drift_coef"] - 0.5) < 0.005
    assert abs(res.measured["circle_grid_softmax_drift_coef"] - 1.0) < 0.01
    assert res.measured["circle_grid_sinkhorn_continuum_rms"] < 1e-10  # the grid is the continuum


@pytest.mark.parametrize("limit", ["laplace_beltrami", "softmax_drift"])
def test_wrong_sinkhorn_limits_fail(small, others, limit):
    for p, q in (small, others):
        p = dataclasses.replace(p, sinkhorn_limit=limit)
        assert_fails(CHECK, q, p, {f"{t}_sinkhorn_drift_coef" for t in p.tiers})


def test_a_density_time_change_of_the_heat_operator_fails(small, others):
    for p, q in (small, others):
        p = dataclasses.replace(p, sinkhorn_limit="time_change")
        assert_fails(CHECK, q, p, {f"{t}_sinkhorn_limit_rms" for t in p.tiers})


def test_other_tiers_measure_half_the_drift(others):
    p, q = others
    for tier in p.tiers:
        sink, soft = q.tiers[tier].normalised["sinkhorn"], q.tiers[tier].normalised["softmax"]
        assert abs(sink.drift_coef - 0.5) < 0.15 and abs(soft.drift_coef - 1.0) < 0.25, (tier, sink, soft)
        assert abs(q.tiers[tier].scaling_law_slope + 1) < 0.15


def test_the_small_tiers_have_rows_of_their_own_and_another_setting_is_told_it_is_outside(others):
    p, q = others
    assert not assert_passes(CHECK, q, p).notes
    moved = dataclasses.replace(p, sphere_iid_eps=0.04)  # no row of its own: the default rows, calibrated at 0.03
    notes = CHECK.assess(q, moved).notes
    assert any("sphere_iid_eps = 0.04" in note and "outside the calibrated range" in note for note in notes), notes


def test_row_normalisation_in_place_of_sinkhorn_fails(monkeypatch):
    def row(W, **kw):
        A = W / W.sum(axis=1, keepdims=True)
        return spectral.SinkhornScaling(matrix=A, scaling=1 / np.sqrt(W.sum(axis=1)), log_scaling=np.zeros(len(W)),
                                        iterations=0, converged=True, residual=0.0, residuals=(0.0,))

    monkeypatch.setattr(spectral, "sinkhorn_normalize", row)
    p, q = measured(CHECK, tiers=("circle_grid",), circle_grid_n=800)
    assert_fails(CHECK, q, p, {"circle_grid_sinkhorn_drift_coef", "circle_grid_sinkhorn_continuum_rms"})


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({("tiers", "circle_grid", "normalised", "sinkhorn", "laplacian_coef"): 1.05}, "circle_grid_sinkhorn_laplacian_coef"),
    ({("tiers", "circle_grid", "normalised", "softmax", "drift_coef"): 0.9}, "circle_grid_softmax_drift_coef"),
    ({("tiers", "circle_grid", "normalised", "softmax", "limit_rms"): {"softmax": 0.05}},
     "circle_grid_softmax_limit_rms"),
    ({("tiers", "circle_grid", "normalised", "sinkhorn", "continuum_rms"): 1e-6}, "circle_grid_sinkhorn_continuum_rms"),
    ({("tiers", "circle_grid", "scaling_rms"): 1e-6}, "circle_grid_scaling_rms"),
    ({("tiers", "circle_grid", "scaling_law_slope"): -0.5}, "circle_grid_scaling_law_slope"),
])


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("tiers", "circle_grid", "normalised", "sinkhorn", "drift_coef"),
                     "circle_grid_sinkhorn_drift_coef")
    assert_nan_fails(CHECK, q, p, ("tiers", "circle_grid", "scaling_rms"), "circle_grid_scaling_rms")


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    assert back.tiers["circle_grid"].normalised["sinkhorn"].limit_rms.keys() == \
        q.tiers["circle_grid"].normalised["sinkhorn"].limit_rms.keys()


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"tiers": ("torus",)}, "tiers"), ({"sinkhorn_limit": "heat"}, "sinkhorn_limit"),
    ({"circle_grid_n": 10}, "circle_grid_n"), ({"sphere_iid_eps": 0.0}, "sphere_iid_eps"),
])


def test_cli_exit_codes(capsys):
    assert check.main(["--tiers", "circle_grid", "--circle-grid-n", "600", "--quiet"]) == 0
    assert check.main(["--tiers", "circle_grid", "--circle-grid-n", "600", "--sinkhorn-limit", "laplace_beltrami",
                       "--quiet"]) == 1
    capsys.readouterr()
    assert check.main(["--circle-grid-eps", "nan", "--quiet"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_computes_in_the_given_namespace(strict_xp):
    p, q = measured(CHECK, tiers=("circle_grid",), circle_grid_n=600)
    got = CHECK.assess(CHECK.measure(p, xp=strict_xp), p)
    assert_same_records(CHECK.assess(q, p), got)
