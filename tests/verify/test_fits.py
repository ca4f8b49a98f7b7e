"""Least-squares fits against numpy.polyfit and exact data."""

import math

import numpy as np
import pytest

from spectral.floor.validation import InputError
from verify.core.fits import fit_linear, fit_power_law


def test_power_law_fit_exact_and_stderr():
    x = np.arange(2.0, 11.0)
    fit = fit_power_law(x, 3.0 * x**1.2)
    # exact data: slope recovered to rounding (exact algebra tolerance)
    assert abs(fit.slope - 1.2) < 1e-12 and abs(math.exp(fit.intercept) - 3.0) < 1e-12
    assert fit.slope_stderr < 1e-12
    rng = np.random.default_rng(0)
    noisy = fit_power_law(x, 3.0 * x**1.2 * np.exp(0.05 * rng.standard_normal(x.size)))
    lo, hi = noisy.slope_interval(0.99)
    assert noisy.slope_stderr > 0 and lo < 1.2 < hi
    y = np.log(3.0 * x**1.2 * np.exp(0.05 * rng.standard_normal(x.size)))
    ref = np.polyfit(np.log(x), y, 1)  # independent reference for the OLS slope
    assert abs(fit_linear(np.log(x), y).slope - ref[0]) < 1e-12


@pytest.mark.parametrize("x, y", [([1, 2], [1, -1]), ([0, 1], [1, 2]), ([1], [1]), ([1, 1], [1, 2])])
def test_power_law_fit_bad_input(x, y):
    with pytest.raises(InputError):
        fit_power_law(x, y)
