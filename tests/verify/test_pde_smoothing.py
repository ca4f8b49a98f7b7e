"""verify.pde_smoothing (PDE-11): S, C decay for diffusion only; wave conserves energy; reaction grows C."""

import pytest

from spectral.validation import InputError
from verify import pde_smoothing as check


def test_default_passes(default_result):
    res = default_result("pde_smoothing")
    assert res.passed, res.failures
    c_wave = res.arrays["C_wave_periodic"]
    assert c_wave[-1] > 0.25 and res.arrays["C_diffusion_periodic"][-1] < c_wave[-1]


def test_printed_fails_for_wave_and_reaction():
    res = check.run(claim="printed", size=64, steps=2000)
    assert not res.passed
    label = res.failures[0]
    assert "wave" in label and "reaction-diffusion" in label and "diffusion (periodic)" not in label


def test_small_settings_pass():
    res = check.run(size=64, steps=500)
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, match", [({"alpha": 0.3}, "alpha"), ({"c": 1.0}, "c"),
                                           ({"beta_advection": 0.3}, "beta_advection"),
                                           ({"beta_reaction": ()}, "beta_reaction"), ({"steps": 10}, "steps")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
