"""verify.metric_attention (DRIFT-14): metric properties and the pull-back tensor (P^T P)^-1.

The measurement runs once at small settings; the assertions are held to those quantities, to the
negative controls (squared distance, direct tensor, unresolved eps) and to altered quantities.
"""

import dataclasses

import numpy as np
import pytest

from spectral.validation import InputError
from verify import metric_attention as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = {"triples": 1000}


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def _same(a, b):
    for f in dataclasses.fields(a):
        x, y = getattr(a, f.name), getattr(b, f.name)
        assert np.array_equal(x, y), f.name


def test_small_settings_pass(small):
    p, q = small
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    m = res.measured
    assert m["residual_lipschitz_bound"] < 1
    assert res.record("min_expansion_ratio").tolerance == pytest.approx(1 - m["residual_lipschitz_bound"])
    assert m["dp_identity_not_self_fraction"] == 0.0  # Q^T K = I: every token is its own nearest point
    assert m["dp_not_self_fraction"] > 0.9


def test_squared_distance_violates_triangle():
    p = CHECK.params(distance="squared", **SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert res.measured["triangle_violations"] > 0
    assert [r.name for r in res.records if r.passed is False] == ["triangle_violations"]


def test_direct_tensor_fails(small):
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, tensor="direct"))
    rec = res.record("tensor_relative_error")
    assert not res.passed and rec.passed is False and rec.measured > 20 * rec.tolerance
    assert [r.name for r in res.records if r.passed is False] == ["tensor_relative_error"]
    assert "diffusion tensor" in res.failures[0] and "predicted finite-eps bias" not in res.failures[0]


def test_unresolved_eps_fails_and_says_why():
    # eps = 4e-3: finite-eps bias 4.6 % measured (12 eps predicted) for the correct tensor
    p = CHECK.params(eps=4e-3, **SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert not res.passed and "predicted finite-eps bias" in res.failures[0]


def test_large_gain_does_not_assert_injectivity():
    p = CHECK.params(gain=5.0, **SMALL)
    res = CHECK.assess(CHECK.measure(p), p)
    assert res.measured["residual_lipschitz_bound"] >= 1
    assert not res.record("min_expansion_ratio").deciding
    assert any("not asserted" in n for n in res.notes)


@pytest.mark.parametrize("field, value, name", [
    ("triangle_violations", 3, "triangle_violations"),
    ("min_expansion_ratio", 0.1, "min_expansion_ratio"),
    ("metric_not_self_fraction", 1 / 512, "metric_not_self_fraction"),
    ("dp_not_self_fraction", 0.4, "dp_not_self_fraction"),
    ("fitted_tensor", np.array([[0.42, -0.31], [-0.31, 0.88]]), "tensor_relative_error"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, field, value, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **{field: value}), p)
    assert [r.name for r in res.records if r.passed is False] == [name]


@pytest.mark.parametrize("field, name", [("min_expansion_ratio", "min_expansion_ratio"),
                                         ("dp_not_self_fraction", "dp_not_self_fraction"),
                                         ("fitted_tensor", "tensor_relative_error")])
def test_nan_never_passes(small, field, name):
    p, q = small
    nan = np.full((2, 2), np.nan) if field == "fitted_tensor" else float("nan")
    res = CHECK.assess(dataclasses.replace(q, **{field: nan}), p)
    assert res.record(name).passed is False


def test_computes_in_the_given_namespace(small, strict_xp):
    p, q = small
    got = CHECK.measure(p, xp=strict_xp)
    assert {"asarray", "argmin", "argmax", "sqrt"} <= strict_xp.used
    _same(got, q)  # array_api_strict wraps numpy: the same numbers


def test_json_round_trip(small):
    p, q = small
    res = CHECK.assess(q, p)
    back = CheckResult.from_json(res.to_json())
    assert type(back.quantities) is type(q) and back.records == res.records
    _same(back.quantities, q)


@pytest.mark.parametrize("kwargs, match", [({"gain": 0.0}, "gain"), ({"distance": "l1"}, "distance"),
                                           ({"tensor": "x"}, "tensor"), ({"dim": 1}, "dim"),
                                           ({"triples": 10}, "triples"), ({"grid": 32}, "grid too coarse"),
                                           ({"eps": 1.0}, "eps")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)


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
    p = CHECK.params(triples=200)
    res = CHECK.assess(CHECK.measure(p), p)
    assert poisoned == [call]
    assert [r.name for r in res.records if r.passed is False] == [name]
