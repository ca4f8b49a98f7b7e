"""verify.euler_steps (DRIFT-5): attention layers = Euler steps of length eps/2; wrong maps fail."""

import numpy as np
import pytest

from spectral.validation import InputError
from verify import euler_steps as check

FAST = {"n": 1000, "eps_grid": (0.002, 0.004, 0.008, 0.016)}


@pytest.fixture(scope="module")
def passed():
    return check.run(**FAST)


def test_first_order_passes(passed):
    assert passed.passed, passed.failures
    slope = passed.record("error_slope")
    assert abs(slope.measured - 1.0) <= slope.tolerance


@pytest.mark.parametrize("kwargs", [{"claim": "printed"},       # Appendix-B PDE: drift (log p)' H', not 2 (log p)' H'
                                    {"time_per_step": 1.0}])    # negative control: t = L eps
def test_printed_drift_and_wrong_time_map_fail(kwargs):
    res = check.run(**FAST, **kwargs)
    assert not res.passed
    assert res.record("min_error").passed is False and res.record("error_slope").passed is False
    assert any(f.startswith("smallest-eps max error") for f in res.failures)


def test_step_initial_condition_fails_and_says_why():
    # a step H_0 is not first order in eps at t <= 0.2 (measured slope 0.54 at t = 0.05, n = 5000)
    res = check.run(n=1000, eps_grid=(0.002, 0.004, 0.008, 0.016), initial="step")
    assert res.record("error_slope").passed is False
    assert "a step H_0 is not smooth" in res.failures[0]
    assert res.arrays["initial"].max() == 1.0 and res.arrays["initial"].min() == 0.0


def test_smallest_eps_arrays_by_angle(passed):
    a = passed.arrays
    assert a["theta"].shape == a["attention"].shape == a["pde"].shape == a["initial"].shape == (1000,)
    assert np.all(np.diff(a["theta"]) >= 0)
    assert passed.measured["rms_error_smallest_eps"] <= passed.measured["min_error"]


@pytest.mark.parametrize("kwargs, match", [({"eps_grid": (0.01, 0.02)}, "eps_grid"), ({"amplitude": 1.0}, "amplitude"),
                                           ({"amplitude": 0.0}, "amplitude"), ({"claim": "appendix"}, "claim"),
                                           ({"initial": "box"}, "initial"), ({"t_final": 2.0}, "t_final"),
                                           ({"n": 600, "amplitude": 0.9}, "n too small")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)
