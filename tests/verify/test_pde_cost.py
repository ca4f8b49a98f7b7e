"""verify.pde_cost (PDE-16, PDE-18): cost laws of dense/banded/factored refinement; output diffusion."""

import pytest

from spectral.validation import InputError
from verify import pde_cost as check

FAST = {"sizes": (64, 128, 256)}  # > 2 (band/2 + steps) + g + steps = 52


def test_default_passes(default_result):
    res = default_result("pde_cost")
    assert res.passed, res.failures
    assert res.measured["reflect_factored_row_sum_deviation"] > 1e-8  # reflection needs renormalising


def test_printed_fails():
    res = check.run(**FAST, claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_dense_flop_exponent", "printed_key_axis_output_identity"}


def test_fast_settings_pass():
    res = check.run(**FAST, steps=2, band=9, n_global=0)
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, match", [({"band": 32}, "band"), ({"sizes": (64, 64, 128)}, "sizes"),
                                           ({"steps": 0}, "steps"), ({"features": 1}, "features")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
