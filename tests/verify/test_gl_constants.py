"""verify.gl_constants (GL-1, GL-2): the graph Laplacians' constants against quadrature and the exact continuum.

Measured once at a small setting; the assertions are held to those quantities, to wrong constructions (a
wrong sigma_eta, a wrong m_2, the wrong dimension m) measured at the same small setting, and to altered
quantities.
"""

import dataclasses

import numpy as np
import pytest

import spectral.graph_laplacians as gl
from verify import gl_constants as check
from verify.testing import assert_passes, failed_records, measurement_fixture, refusals

CHECK = check.CHECK
SMALL = {"n": 2000, "repeats": 1}
TINY = {"n": 600, "repeats": 1}  # the wrong constructions are off by factors, visible at any n


small = measurement_fixture(CHECK, **SMALL)


def test_small_setting_passes(small):
    p, q = small
    assert_passes(CHECK, q, p)
    assert q.constants_error < 1e-13
    assert q.bias_order["indicator unnormalized S^2"] == pytest.approx(2.0, abs=0.01)
    assert q.bias_order["gaussian random_walk S^1"] == pytest.approx(1.0, abs=0.01)
    # the k-NN graph sits above the continuum at eps_k (max(r_i, r_j) symmetrisation), the eps-graphs below
    assert np.mean(q.sampled_deviation["knn S^2 unnormalized"]) > 0.02
    assert np.mean(q.sampled_deviation["eps S^2 unnormalized"]) < 0.0


def test_wrong_sigma_eta_fails(monkeypatch):
    """sigma_eta = alpha_m / m instead of alpha_m / (m + 2): the constants and every sampled eps/k-NN graph fail."""
    monkeypatch.setattr(gl, "indicator_moment", lambda m: gl.ball_volume(m) / m)
    p = CHECK.params(**TINY)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"constants_relative_error", "GL-1_sampled_vs_continuum", "GL-1_knn_sampled_vs_continuum"} <= failed_records(res)
    assert res.record("GL-1_sampled_vs_continuum").measured > 0.4  # a factor (m + 2) / m


def test_wrong_m2_fails(monkeypatch):
    monkeypatch.setattr(gl, "gaussian_moments", lambda m: (1.0, 1.0))
    p = CHECK.params(**TINY)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"constants_relative_error", "GL-2_sampled_vs_continuum"} <= failed_records(res)
    assert res.record("GL-2_sampled_vs_continuum").measured > 0.9  # eigenvalues doubled


def test_wrong_dimension_fails(monkeypatch):
    """The library told m + 1 for points on S^m: every construction is off by a power of eps."""
    real = check._laplacian
    monkeypatch.setattr(check, "_laplacian", lambda x, **kw: real(x, **{**kw, "m": kw["m"] + 1}))
    p = CHECK.params(**TINY)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"GL-1_sampled_vs_continuum", "GL-1_knn_sampled_vs_continuum", "GL-2_sampled_vs_continuum"} <= failed_records(res)


@pytest.mark.parametrize("field, change, name", [
    ("constants_error", lambda q: 0.5, "constants_relative_error"),
    ("constants_error", lambda q: float("nan"), "constants_relative_error"),
    ("bias_order", lambda q: {**q.bias_order, "indicator unnormalized S^2": 1.0},
     "GL-1_bias_order indicator unnormalized S^2"),
    ("bias_order", lambda q: {**q.bias_order, "gaussian random_walk S^1": float("nan")},
     "GL-2_bias_order gaussian random_walk S^1"),
    ("sampled_deviation", lambda q: {**q.sampled_deviation, "eps S^1 unnormalized": np.full((1, 3), 0.2)},
     "GL-1_sampled_vs_continuum"),
    ("sampled_deviation", lambda q: {**q.sampled_deviation, "knn S^2 unnormalized": np.full((1, 3), np.nan)},
     "GL-1_knn_sampled_vs_continuum"),
    ("sampled_deviation", lambda q: {**q.sampled_deviation, "gaussian S^2 density_corrected": np.full((1, 3), -0.1)},
     "GL-2_sampled_vs_continuum"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, field, change, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **{field: change(q)}), p)
    assert not res.passed and res.record(name).passed is False


test_bad_input = refusals(check.run, [({"n": 100}, "n"), ({"repeats": 0}, "repeats"), ({"n": True}, "n")])


@pytest.mark.parametrize("name", ["eps S^2 unnormalized", "gaussian S^2 random_walk"])
def test_a_nan_sampled_deviation_fails_whatever_follows_it(small, name):
    # the worst per tolerance kept a NaN only while no later Laplacian sharing it was finite
    p, q = small
    dev = dict(q.sampled_deviation)
    dev[name] = np.full_like(dev[name], np.nan)
    res = CHECK.assess(dataclasses.replace(q, sampled_deviation=dev), p)
    assert not res.passed and any("sampled_vs_continuum" in r for r in failed_records(res))
