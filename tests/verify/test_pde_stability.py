"""verify.pde_stability (PDE-2, 10, 14): CFL limits, contraction, dt scaling; the printed claims fail."""

import pytest

from spectral.validation import InputError
from verify import pde_stability as check

FAST = {"sizes": (8, 63), "growth_steps": 400, "norm_size": 32, "norm_steps": 16, "lengths": (64, 256, 1024)}


def test_default_passes(default_result):
    res = default_result("pde_stability")
    assert res.passed, res.failures
    assert res.measured["dt_max_wave"] > res.measured["dt_max_diffusion"]  # the wave bound is the looser one
    assert res.measured["limit_neumann_T8"] == pytest.approx(0.5198, abs=1e-4)


def test_printed_fails_on_each_printed_statement():
    res = check.run(**FAST, claim="printed")
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_wave_at_equality_growth", "printed_wave_more_restrictive",
                      "printed_norm_8_steps_unstable", "printed_dt_max_slope_token_units",
                      "printed_dt_max_slope_normalised"}


def test_fast_settings_pass():
    res = check.run(**FAST)
    assert res.passed, res.failures


def test_wave_tighter_when_fast():
    # c > 2 alpha / ds: the paper's 'more restrictive' holds there, and the corrected check says so
    res = check.run(**FAST, alpha=0.05, c=0.15)
    assert res.passed and res.record("wave_tighter").measured is True
    assert check.run(**FAST, alpha=0.05, c=0.15, claim="printed").record("printed_wave_more_restrictive").passed


@pytest.mark.parametrize("kwargs, match", [({"lengths": (64, 128)}, "lengths"), ({"growth_size": 4}, "growth_size"),
                                           ({"alpha": 0.0}, "alpha"), ({"c": 2.0}, "c"), ({"sizes": ()}, "sizes"),
                                           ({"norm_steps": 4}, "norm_steps")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
