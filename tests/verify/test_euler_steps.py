"""verify.euler_steps (DRIFT-5): attention layers = Euler steps of length eps/2; wrong maps fail.

Measured once at a small grid (n = 1000, eps 2e-3..1.6e-2); the reference PDE is the asserted one, so
the printed drift and the wrong time map are measured too (each at the same small setting).
"""

import math

import numpy as np
import pytest

from verify import euler_steps as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"n": 1000, "eps_grid": (0.002, 0.004, 0.008, 0.016)}
small = measurement_fixture(CHECK, **SMALL)


def test_first_order_passes(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    slope = res.record("error_slope")
    assert abs(slope.measured - 1.0) <= slope.tolerance
    assert res.statement.startswith(f"{int(q.steps[0])} attention layers at eps = 0.002")


@pytest.mark.parametrize("change", [{"claim": "printed"},       # Appendix-B PDE: drift (log p)' H', not 2 (log p)' H'
                                    {"time_per_step": 1.0}])    # negative control: t = L eps
def test_printed_drift_and_wrong_time_map_fail(change):
    p, q = measured(CHECK, **SMALL, **change)
    res = assert_fails(CHECK, q, p, {"min_error", "error_slope"})
    assert any(f.startswith("smallest-eps max error") for f in res.failures)


def test_step_initial_condition_fails_and_says_why():
    # a step H_0 is not first order in eps at t <= 0.2 (measured slope 0.54 at t = 0.05, n = 5000)
    p, q = measured(CHECK, **SMALL, initial="step")
    res = assert_fails(CHECK, q, p, "error_slope")
    assert "a step H_0 is not smooth" in res.failures[0]
    assert q.initial.max() == 1.0 and q.initial.min() == 0.0


def test_smallest_eps_arrays_by_angle(small):
    _, q = small
    assert q.theta.shape == q.attention.shape == q.pde.shape == q.initial.shape == q.density.shape == (1000,)
    assert np.all(np.diff(q.theta) >= 0)
    assert q.rms_error_smallest_eps <= float(np.min(q.errors))
    assert q.steps.tolist() == [50, 25, 12, 6] and q.time_smallest_eps == pytest.approx(0.05)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"error_slope": 0.5}, "error_slope"),
    ({"errors": np.array([3e-3, 6e-3, 1.2e-2, 2.4e-2])}, "min_error"),
    ({"error_slope": math.nan}, "error_slope"),
    ({"errors": np.full(4, math.nan)}, "min_error"),
])


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p).quantities
    np.testing.assert_array_equal(back.attention, q.attention)
    assert back.steps.tolist() == q.steps.tolist() and back.error_slope == q.error_slope


test_bad_input = refusals(CHECK.params, [
    ({"eps_grid": (0.01, 0.02)}, "eps_grid"), ({"amplitude": 1.0}, "amplitude"), ({"amplitude": 0.0}, "amplitude"),
    ({"claim": "appendix"}, "claim"), ({"initial": "box"}, "initial"), ({"t_final": 2.0}, "t_final"),
    ({"n": 600, "amplitude": 0.9}, "n too small"),
])
