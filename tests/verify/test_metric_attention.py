"""verify.metric_attention (DRIFT-14): metric properties and the pull-back tensor (P^T P)^-1.

The measurement runs once at small settings; the assertions are held to those quantities, to the
negative controls (squared distance, direct tensor, unresolved eps) and to altered quantities.
"""

import dataclasses

import numpy as np
import pytest

from verify import metric_attention as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, assert_same_quantities,
                            measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"triples": 1000}
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    m = res.measured
    assert m["residual_lipschitz_bound"] < 1
    assert res.record("min_expansion_ratio").tolerance == pytest.approx(1 - m["residual_lipschitz_bound"])
    assert m["dp_identity_not_self_fraction"] == 0.0  # Q^T K = I: every token is its own nearest point
    assert m["dp_not_self_fraction"] > 0.9


def test_squared_distance_violates_triangle():
    p, q = measured(CHECK, distance="squared", **SMALL)
    res = assert_fails(CHECK, q, p, "triangle_violations", only=True)
    assert res.measured["triangle_violations"] > 0


def test_direct_tensor_fails(small):
    p, q = small
    res = assert_fails(CHECK, q, dataclasses.replace(p, tensor="direct"), "tensor_relative_error", only=True)
    rec = res.record("tensor_relative_error")
    assert rec.measured > 20 * rec.tolerance
    assert "diffusion tensor" in res.failures[0] and "predicted finite-eps bias" not in res.failures[0]


def test_unresolved_eps_fails_and_says_why():
    # eps = 4e-3: finite-eps bias 4.6 % measured (12 eps predicted) for the correct tensor
    p, q = measured(CHECK, eps=4e-3, **SMALL)
    res = CHECK.assess(q, p)
    assert not res.passed and "predicted finite-eps bias" in res.failures[0]


def test_large_gain_does_not_assert_injectivity():
    p, q = measured(CHECK, gain=5.0, **SMALL)
    res = CHECK.assess(q, p)
    assert res.measured["residual_lipschitz_bound"] >= 1
    assert not res.record("min_expansion_ratio").deciding
    assert any("not asserted" in n for n in res.notes)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"triangle_violations": 3}, "triangle_violations"),
    ({"min_expansion_ratio": 0.1}, "min_expansion_ratio"),
    ({"metric_not_self_fraction": 1 / 512}, "metric_not_self_fraction"),
    ({"dp_not_self_fraction": 0.4}, "dp_not_self_fraction"),
    ({"fitted_tensor": np.array([[0.42, -0.31], [-0.31, 0.88]])}, "tensor_relative_error"),
], only=True)


@pytest.mark.parametrize("field, name", [("min_expansion_ratio", "min_expansion_ratio"),
                                         ("dp_not_self_fraction", "dp_not_self_fraction"),
                                         ("fitted_tensor", "tensor_relative_error")])
def test_nan_never_passes(small, field, name):
    p, q = small
    assert np.shape(getattr(q, field)) == ((2, 2) if field == "fitted_tensor" else ())
    assert_nan_fails(CHECK, q, p, field, name)


def test_computes_in_the_given_namespace(small, strict_xp):
    p, q = small
    got = CHECK.measure(p, xp=strict_xp)
    assert {"asarray", "argmin", "argmax", "sqrt"} <= strict_xp.used
    assert_same_quantities(q, got)  # array_api_strict wraps numpy: the same numbers


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)


test_bad_input = refusals(check.run, [
    ({"gain": 0.0}, "gain"), ({"distance": "l1"}, "distance"), ({"tensor": "x"}, "tensor"), ({"dim": 1}, "dim"),
    ({"triples": 10}, "triples"), ({"grid": 32}, "grid too coarse"), ({"eps": 1.0}, "eps"),
])


@pytest.mark.parametrize("target, call, name", [
    # g(z) of the third point set: one NaN distance made the slack NaN and every comparison false (0 violations)
    ("spectral.metric.ResidualMLP.__call__", 2, "triangle_violations"),
    # g of the tokens: a NaN distance row is not its own nearest point
    ("spectral.metric.ResidualMLP.__call__", 3, "metric_not_self_fraction"),
    # a NaN Lipschitz bound is not ">= 1" (injectivity then went unasserted): the bound is asserted and fails
    ("spectral.metric.ResidualMLP.residual_lipschitz_bound", 0, "min_expansion_ratio"),
])
def test_a_nan_from_the_toolkit_fails(inject_nan, target, call, name):
    poisoned = inject_nan(target, call=call, at=5)
    p, q = measured(CHECK, triples=200)
    assert poisoned == [call]
    assert_fails(CHECK, q, p, name, only=True)
