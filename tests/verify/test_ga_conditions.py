"""verify.ga_conditions (GA-6): the softmax coupling condition of the n^-1/2 rate, at small sizes."""

import dataclasses

import numpy as np

from verify import ga_conditions as check
from verify.testing import assert_fails, assert_passes, failed_records, measurement_fixture, refusals

CHECK = check.CHECK

small = measurement_fixture(CHECK, sizes=(64, 128, 256, 512))


def test_passes_at_small_sizes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["kappa0.3_order"] < res.measured["kappa2_order"] - 0.1  # the heavy tail is slower


def test_predicted_orders():
    assert check.predicted_order(0.5) == -0.5 and check.predicted_order(1.0) == -0.5
    assert np.isclose(check.predicted_order(2.0), -0.2) and np.isclose(check.predicted_order(3.0), -0.1)


def test_each_assertion_fails_on_a_wrong_quantity(small):
    p, q = small
    # a plateau (an implementation that does not converge) fails both couplings
    plateau = {k: np.broadcast_to(v[:1], v.shape).copy() for k, v in q.rhs_errors.items()}
    assert_fails(CHECK, q, p, {"kappa0.3_finite_variance_order_deviation", "kappa2_heavy_tail_order_deviation"},
                 rhs_errors=plateau)
    # errors falling like n^-1/2 at kappa = 2 (no heavy tail) fail the heavy-tail records
    sqrt = dict(q.rhs_errors)
    sqrt[2.0] = q.rhs_errors[0.3] * (q.rhs_errors[2.0].mean() / q.rhs_errors[0.3].mean())
    assert_fails(CHECK, q, p, {"kappa2_heavy_tail_order_deviation", "kappa2_slower_than_sqrt_n"}, rhs_errors=sqrt)


def test_a_non_normalised_velocity_fails(monkeypatch):
    """Velocities without the softmax normaliser (the uniform 1/n): the right-hand side does not converge."""
    from spectral import attention_velocity

    def uniform(ctx, Y, kappa):
        return attention_velocity(Y, beta=1.0, query_key=[[kappa]], geometry="euclidean", normalisation="uniform")
    monkeypatch.setattr(check, "_velocity", uniform)
    p = CHECK.params(sizes=(64, 128, 256), repeats=16)
    res = CHECK.assess(CHECK.measure(p), p)
    assert {"kappa0.3_finite_variance_order_deviation", "kappa2_heavy_tail_order_deviation"} <= failed_records(res)


test_bad_input = refusals(check.run, [({"sizes": (64, 32, 128)}, "sizes"), ({"kappas": (0.0,)}, "kappas"),
                                      ({"repeats": 1}, "repeats")])


def test_the_device_namespace_computes_the_velocities(strict_xp):
    p = CHECK.params(sizes=(16, 32, 64), repeats=2)
    want = CHECK.measure(p)
    got = CHECK.measure(p, xp=strict_xp)
    assert "asarray" in strict_xp.used
    for k in p.kappas:
        np.testing.assert_allclose(got.rhs_errors[k], want.rhs_errors[k], rtol=1e-9, atol=1e-13)
