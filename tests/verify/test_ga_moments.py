"""verify.ga_moments (GA-1 .. GA-4): Gaussian tokens against the moment ODEs, at small sizes.

One measurement (two cases and the sigmoid contrast, n = 16 .. 128); the assertions held to it, to a steeper
claim, to a wrong ODE, to a wrong particle system and to altered quantities.
"""

import dataclasses

import numpy as np

from verify import ga_moments as check
from verify.testing import assert_fails, assert_passes, changed_fields, failed_records, measurement_fixture, refusals

CHECK = check.CHECK
SMALL = {"cases": ("softmax", "sinkhorn"), "sizes": (16, 32, 64, 128), "repeats": 32}

small = measurement_fixture(CHECK, **SMALL)


def test_small_sizes_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    for c in p.cases:
        for kind in ("mean", "cov", "gaussian"):
            assert -0.7 < res.measured[f"{c}_{kind}_order"] < -0.3
    assert res.measured["softmax_kappa_max"] < 1.0  # inside the finite-variance regime (GA-6)


def test_a_steeper_claim_fails(small):
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, claimed_order=-1.0))
    assert {f"{c}_{k}_order_deviation" for c in p.cases for k in ("mean", "cov", "gaussian")} <= failed_records(res)


def test_a_wrong_ode_fails(monkeypatch):
    """The mean ODE without its attention term (alpha' = V alpha): the errors plateau at the missing motion."""
    from manifolds.references import gaussian_attention as ga

    real = ga.moment_rhs

    def wrong(spec, mean, cov):
        dm, dS = real(spec, mean, cov)
        return spec.head(0)[3] @ np.asarray(mean), dS * 0.8
    monkeypatch.setattr(ga, "moment_rhs", wrong)
    p = CHECK.params(cases=("softmax",), sizes=(16, 32, 64, 128), repeats=8, contrast=False)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"softmax_mean_order_deviation", "softmax_cov_order_deviation"} <= failed_records(res)


def test_a_wrong_particle_system_fails(monkeypatch):
    """Sigmoid weights instead of softmax (same Q, K, V, beta): the particles leave the Gaussian solution."""
    real = check._kwargs
    monkeypatch.setattr(check, "_kwargs", lambda c: {**real(c), "normalisation": "sigmoid"})
    p = CHECK.params(cases=("softmax",), sizes=(16, 32, 64, 128), repeats=8, contrast=False)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"softmax_mean_order_deviation", "softmax_cov_order_deviation"} <= failed_records(res)


def test_each_assertion_fails_on_a_wrong_quantity(small):
    p, q = small
    plateau = {c: np.broadcast_to(v[:1], v.shape).copy() for c, v in q.gaussianity.items()}
    assert_fails(CHECK, q, p, {"softmax_gaussian_order_deviation", "sinkhorn_gaussian_order_deviation"},
                 gaussianity=plateau)
    assert_fails(CHECK, q, p, "sinkhorn_integrator_share",
                 **changed_fields(q, {("integrator_error", "sinkhorn"): 0.2 * float(np.median(q.cov_errors["sinkhorn"][-1]))}))
    assert_fails(CHECK, q, p, "softmax_motion", **changed_fields(q, {("motion", "softmax"): 1e-3}))
    gauss = dict(q.gaussianity, sigmoid=q.gaussianity["softmax"])
    assert_fails(CHECK, q, p, "sigmoid_gaussianity_ratio", only=True, gaussianity=gauss)
    nan = {c: v.copy() for c, v in q.cov_errors.items()}
    nan["softmax"][2, 3] = np.nan
    assert "softmax_cov_order_deviation" in failed_records(CHECK.assess(dataclasses.replace(q, cov_errors=nan), p))


def test_moment_errors_and_gaussianity_statistic_on_exact_samples():
    rng = np.random.default_rng(0)
    X = check.MEAN0 + rng.standard_normal((4, 4096, 2)) @ np.linalg.cholesky(check.COV0).T
    e_mean, e_cov = check.moment_errors(X, check.MEAN0, check.COV0)
    assert np.all(e_mean < 0.05) and np.all(e_cov < 0.08)  # n^-1/2 = 0.016, a few standard deviations
    g = check.gaussianity_statistic(X)
    assert np.all(g < 0.04)  # a few times the n^-1/2 fluctuation (about 0.01 here)
    U = rng.uniform(-1, 1, (4, 4096, 2))  # a uniform square: its characteristic function is 0.09 away at |w| = 1.5
    assert np.all(check.gaussianity_statistic(U) > 0.07)


test_bad_input = refusals(check.run, [({"sizes": (64, 32, 128)}, "sizes"), ({"cases": ("softmax", "cosine")}, "cases"),
                                      ({"dt": 0.0}, "dt"), ({"t_final": -1.0}, "t_final"),
                                      ({"claimed_order": 1.0}, "claimed_order")])


def test_the_device_namespace_computes_the_flows(strict_xp):
    """On a device the particle flows run in its namespace (array_api_strict stands in for CuPy)."""
    p = CHECK.params(cases=("softmax", "sinkhorn"), sizes=(8, 16, 32), repeats=2, contrast=False)
    want = CHECK.measure(p)
    got = CHECK.measure(p, xp=strict_xp)
    assert "asarray" in strict_xp.used
    for c in p.cases:
        np.testing.assert_allclose(got.cov_errors[c], want.cov_errors[c], rtol=1e-9, atol=1e-12)
