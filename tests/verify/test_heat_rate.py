"""verify.heat_rate (DRIFT-3): Singer's bias and variance exponents on S^1 and S^2."""

import pytest

from spectral.validation import InputError
from verify import heat_rate as check


def test_singer_rates_pass(default_result):
    res = default_result("heat_rate")
    assert res.passed, res.failures
    for d, want in ((1, -0.75), (2, -1.0)):
        rec = res.record(f"S{d}_variance_eps_slope")
        assert rec.expected == want and abs(rec.measured - want) <= rec.tolerance


def test_wrong_variance_law_fails():
    res = check.run(variance_law="d_over_2")  # the true exponents miss it by >= 0.2 (seeds 0-19)
    assert not res.passed
    assert res.record("S1_variance_eps_slope").passed is False and res.record("S2_variance_eps_slope").passed is False
    assert sum("sampling-error exponent in eps" in f for f in res.failures) == 2


def test_wrong_bias_order_fails():
    res = check.run(bias_order=2.0, repeats=4, test_points=4)
    assert res.record("S1_bias_slope").passed is False and res.record("S2_bias_slope").passed is False


def test_computes_in_the_device_namespace(device_spy):
    ref = check.run(repeats=4, test_points=4)
    spy = device_spy.install()
    res = check.run(repeats=4, test_points=4)
    assert {"asarray", "exp", "atan2", "sum"} <= spy.used
    assert res.records == ref.records  # array_api_strict wraps numpy: the same numbers


@pytest.mark.parametrize("kwargs, match", [({"variance_law": "x"}, "variance_law"), ({"test_points": 1}, "test_points"),
                                           ({"repeats": 1}, "repeats"), ({"bias_order": 0.0}, "bias_order")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)


@pytest.mark.slow
def test_optimal_eps_exponent():
    res = check.run(full=True)
    assert res.passed, res.failures
    assert res.record("S1_optimal_eps_slope").deciding and res.record("S2_optimal_eps_slope").deciding
