"""verify.pde_convergence (PDE-13): PL bounds for GD with the right minimiser; the SGD noise floor.

Measured once with 2000 SGD steps and 8 chains; held to the printed claims, to a floor predicted without
minibatch noise, to altered ratios and floors, and to NaNs in gradient descent's sums.
"""

import dataclasses

import numpy as np
import pytest

from verify import pde_convergence as check
from verify.testing import (assert_fails, assert_passes, assert_round_trip, measured, measurement_fixture,
                            negative_controls, refusals)

CHECK = check.CHECK
SMALL = {"sgd_steps": 2000, "chains": 8}  # long enough for the eq. (16) bound to fall below the floor
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    assert res.measured["sgd_floor_measured"] > 10 * res.measured["eq16_bound_at_end"]  # 1e3 at the defaults
    assert q.gd_excess_loss.shape == q.pl_bound.shape == (300,) and q.sgd_mean_excess_loss.shape == (2000,)


def test_printed_fails(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                 {"printed_eq15_min_norm_max_ratio", "printed_sgd_eq16_ratio_at_end"}, only=True)


def test_floor_tracks_the_step_size(small):
    # a larger batch lowers the floor; the exact stationary prediction follows it
    p, q = measured(CHECK, sgd_steps=1001, chains=16, batch=40)  # an odd length of the averaging window too
    assert_passes(CHECK, q, p)
    assert q.sgd_floor_predicted < 0.5 * small[1].sgd_floor_predicted


def test_a_floor_without_minibatch_noise_fails(small, monkeypatch):
    """Predicting the floor as if every step used the whole data set (b = n) misses the SGD noise."""
    true_floor = check._stationary_floor
    monkeypatch.setattr(check, "_stationary_floor",
                        lambda x, y, th, vk, eta, b: true_floor(x, y, th, vk, eta, x.shape[0]))
    p, q = measured(CHECK, sgd_steps=500, chains=8)
    assert_fails(CHECK, q, p, "sgd_noise_floor", only=True)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"gd_eq16_max_ratio": 1.01}, "gd_eq16_max_ratio"),
    ({"gd_eq15_projected_max_ratio": 1.01}, "gd_eq15_projected_max_ratio"),
    ({"gd_eq15_min_norm_max_ratio": 0.9}, "gd_eq15_min_norm_max_ratio"),
    ({"sgd_floor_measured": 6.0}, "sgd_noise_floor"),
    ({"gd_eq16_max_ratio": float("nan"), "sgd_floor_measured": float("nan")},  # a NaN never passes
     {"gd_eq16_max_ratio", "sgd_noise_floor"}),
])


def test_json_round_trip(small):
    p, q = small
    assert_round_trip(CHECK, q, p)  # typed again: the SGD curve, the predicted floor


test_bad_input = refusals(check.run, [({"rank": 50}, "rank"), ({"noise": 0.0}, "noise"), ({"batch": 0}, "batch"),
                                      ({"chains": 2}, "chains"), ({"n": 10}, "n"), ({"batch": 300}, "batch")])


@pytest.mark.parametrize("call, failed", [
    # GD's reductions: np.sum gives L* (call 0), L(theta_0) (1), the two initial distances (2, 3), then per step t
    # the loss (4 + 3 (t - 1)) and the two distances; a NaN at t = 3, after finite ratios Python's max kept
    (10, "gd_eq16_max_ratio"),
    (11, "gd_eq15_projected_max_ratio"),
    (12, "gd_eq15_min_norm_max_ratio"),
])
def test_a_nan_in_gradient_descent_fails(inject_nan, call, failed):
    # the check computes with NumPy alone (no toolkit routine): the NaN comes from the sum a ratio is made of
    p = CHECK.params(n=50, p=10, rank=5, sgd_steps=500, chains=8)
    poisoned = inject_nan("numpy.sum", call=call)
    q = CHECK.measure(p)
    assert poisoned == [call]
    assert np.isnan(assert_fails(CHECK, q, p, failed, only=True).measured[failed])


def test_eq16_is_not_compared_below_the_rounding_of_the_loss():
    # rank 10: the excess loss reaches 2 ulp of L* = 20 while the bound falls below it; the ratio of rounding to
    # the bound (1.74 before the floor) is not a violation of eq. (16)
    p, q = measured(CHECK, rank=10, sgd_steps=500, chains=8)
    assert q.gd_eq16_max_ratio < 1.0 and CHECK.assess(q, p).record("gd_eq16_max_ratio").passed
