"""verify.pde_spread (PDE-8, 9, 12): exact variance growth, compact/Gaussian decay, range laws."""

import pytest

from spectral.validation import InputError
from verify import pde_spread as check

FAST = {"size": 512, "steps": 100, "random_rows": 2, "softmax_draws": 8}


def test_default_passes(default_result):
    res = default_result("pde_spread")
    assert res.passed, res.failures
    assert res.measured["gaussian_fit_r2"] > res.measured["exponential_fit_r2"] > res.measured["power_fit_r2"]


def test_printed_fails_on_each_statement():
    res = check.run(**FAST, claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_spread_speed_exponent", "printed_power_over_gaussian_r2",
                      "printed_vanilla_log_slope", "printed_linear_range_ratio"}


@pytest.mark.parametrize("rate", [1.0, 2.1])
def test_wrong_variance_rate_fails(rate):
    res = check.run(**FAST, variance_rate=rate)
    assert [r.name for r in res.records if r.passed is False] == ["variance_identity_relative_error"]


@pytest.mark.parametrize("kwargs, match", [({"steps": 400, "size": 512}, "steps"), ({"rates": (0.0,)}, "rates"),
                                           ({"variance_rate": 0.0}, "variance_rate"),
                                           ({"softmax_draws": 2}, "softmax_draws"), ({"size": 100}, "size")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
