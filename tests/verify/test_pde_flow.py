"""verify.pde_flow (PDE-5, 6, 7): first-order error, layers as time, hybrid bound; printed claims fail."""

import pytest

from spectral.validation import InputError
from verify import pde_flow as check

FAST = {"times": (1.0, 10.0), "dt_exponents": (2, 3, 4), "hybrid_size": 128, "hybrid_steps": (0, 4, 64, 512)}


def test_default_passes(default_result):
    res = default_result("pde_flow")
    assert res.passed, res.failures
    assert res.measured["hybrid_distance_final"] > res.measured["hybrid_eps0"]  # grows, not decays
    assert res.measured["recomputed_relative_error_dt1"] > 10 * res.measured["carried_relative_error_dt1"]


def test_printed_fails_on_each_statement():
    res = check.run(**FAST, claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_continuum_error_order", "printed_recomputed_relative_error",
                      "printed_laplacian_of_true_attention", "printed_hybrid_error_max_increment"}


def test_fast_settings_pass():
    res = check.run(**FAST)
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, match", [({"dt_exponents": (2, 3)}, "dt_exponents"),
                                           ({"hybrid_steps": (4, 1, 16)}, "hybrid_steps"), ({"alpha": 0.9}, "alpha"),
                                           ({"times": (0.1,)}, "times"), ({"size": 8}, "size")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
