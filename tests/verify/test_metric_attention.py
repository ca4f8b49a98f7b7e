"""verify.metric_attention (DRIFT-14): metric properties and the pull-back tensor (P^T P)^-1."""

import pytest

from spectral.validation import InputError
from verify import metric_attention as check


def test_metric_attention_passes(default_result):
    res = default_result("metric_attention")
    assert res.passed, res.failures
    m = res.measured
    assert m["residual_lipschitz_bound"] < 1
    assert res.record("min_expansion_ratio").tolerance == pytest.approx(1 - m["residual_lipschitz_bound"])
    assert m["dp_identity_not_self_fraction"] == 0.0  # Q^T K = I: every token is its own nearest point


def test_squared_distance_violates_triangle():
    res = check.run(distance="squared", triples=2000)
    assert not res.passed and res.record("triangle_violations").passed is False
    assert res.measured["triangle_violations"] > 0
    assert [r.name for r in res.records if r.passed is False] == ["triangle_violations"]


def test_direct_tensor_fails():
    res = check.run(tensor="direct", triples=1000)
    rec = res.record("tensor_relative_error")
    assert not res.passed and rec.passed is False and rec.measured > 20 * rec.tolerance
    assert "diffusion tensor" in res.failures[0] and "predicted finite-eps bias" not in res.failures[0]


def test_unresolved_eps_fails_and_says_why():
    # eps = 4e-3: finite-eps bias 4.6 % measured (12 eps predicted) for the correct tensor
    res = check.run(eps=4e-3, triples=1000)
    assert not res.passed and "predicted finite-eps bias" in res.failures[0]


def test_large_gain_does_not_assert_injectivity():
    res = check.run(gain=5.0, triples=1000)
    assert res.measured["residual_lipschitz_bound"] >= 1
    assert not res.record("min_expansion_ratio").deciding
    assert any("not asserted" in n for n in res.notes)


def test_computes_in_the_device_namespace(device_spy):
    ref = check.run(triples=1000)
    spy = device_spy.install()
    res = check.run(triples=1000)
    assert {"asarray", "argmin", "argmax", "sqrt"} <= spy.used
    assert res.records == ref.records  # array_api_strict wraps numpy: same numbers


@pytest.mark.parametrize("kwargs, match", [({"gain": 0.0}, "gain"), ({"distance": "l1"}, "distance"),
                                           ({"tensor": "x"}, "tensor"), ({"dim": 1}, "dim"),
                                           ({"triples": 10}, "triples"), ({"grid": 32}, "grid too coarse"),
                                           ({"eps": 1.0}, "eps")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
