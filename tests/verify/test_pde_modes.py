"""verify.pde_modes (PDE-3, PDE-4): exact mode damping, monotone iff r <= 1/4, eq. (21) iff x <= x*."""

import math

import pytest
from scipy.special import lambertw

from spectral.validation import InputError
from verify import pde_modes as check


def test_default_passes(default_result):
    res = default_result("pde_modes")
    assert res.passed, res.failures
    assert res.measured["x_star"] == pytest.approx(1 + lambertw(1 / math.e).real, abs=1e-13)
    assert res.measured["eq21_violating_modes_r0.45"] > 0 == res.measured["eq21_violating_modes_r0.3"]
    assert res.measured["nyquist_factor_r0.5"] == pytest.approx(-1.0, abs=1e-14)


def test_printed_fails():
    res = check.run(claim="printed", size=64)
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_non_monotone_rates", "printed_eq21_violations"}


def test_printed_holds_below_quarter():
    # at r <= 1/4 the printed damping statement and eq. (21) hold (PDE-3's stated assumption r << 1/4)
    res = check.run(claim="printed", size=64, rates=(0.05, 0.1, 0.25))
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, match", [({"size": 65}, "size"), ({"rates": (0.6,)}, "rates"),
                                           ({"layers": (0,)}, "layers"), ({"rates": ()}, "rates"),
                                           ({"bound_steps": 0}, "bound_steps")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
