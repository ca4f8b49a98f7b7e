"""verify.pde_convergence (PDE-13): PL bounds for GD with the right minimiser; the SGD noise floor.

The measurement runs once at small settings; the assertions are held to those quantities, to the
printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import numpy as np
import pytest

from spectral.validation import InputError
from verify import pde_convergence as check
from verify.core.result import CheckResult

CHECK = check.CHECK
SMALL = {"sgd_steps": 2000, "chains": 8}  # long enough for the eq. (16) bound to fall below the floor


@pytest.fixture(scope="module")
def small():
    p = CHECK.params(**SMALL)
    return p, CHECK.measure(p)


def test_small_settings_pass(small):
    p, q = small
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    assert res.measured["sgd_floor_measured"] > 10 * res.measured["eq16_bound_at_end"]  # 1e3 at the defaults
    assert q.gd_excess_loss.shape == q.pl_bound.shape == (300,) and q.sgd_mean_excess_loss.shape == (2000,)


def test_printed_fails(small):
    p, q = small
    res = CHECK.assess(q, dataclasses.replace(p, claim="printed"))
    failed = {r.name for r in res.records if r.passed is False}
    assert failed == {"printed_eq15_min_norm_max_ratio", "printed_sgd_eq16_ratio_at_end"}


def test_floor_tracks_the_step_size(small):
    # a larger batch lowers the floor; the exact stationary prediction follows it
    p = CHECK.params(sgd_steps=1001, chains=16, batch=40)  # an odd length of the averaging window too
    q = CHECK.measure(p)
    res = CHECK.assess(q, p)
    assert res.passed, res.failures
    assert q.sgd_floor_predicted < 0.5 * small[1].sgd_floor_predicted


def test_a_floor_without_minibatch_noise_fails(small, monkeypatch):
    """Predicting the floor as if every step used the whole data set (b = n) misses the SGD noise."""
    true_floor = check._stationary_floor
    monkeypatch.setattr(check, "_stationary_floor", lambda x, y, th, vk, eta, b: true_floor(x, y, th, vk, eta, x.shape[0]))
    p = CHECK.params(sgd_steps=500, chains=8)
    res = CHECK.assess(CHECK.measure(p), p)
    assert [r.name for r in res.records if r.passed is False] == ["sgd_noise_floor"]


@pytest.mark.parametrize("change, name", [
    ({"gd_eq16_max_ratio": 1.01}, "gd_eq16_max_ratio"),
    ({"gd_eq15_projected_max_ratio": 1.01}, "gd_eq15_projected_max_ratio"),
    ({"gd_eq15_min_norm_max_ratio": 0.9}, "gd_eq15_min_norm_max_ratio"),
    ({"sgd_floor_measured": 6.0}, "sgd_noise_floor"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, change, name):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, **change), p)
    assert not res.passed and res.record(name).passed is False


def test_nan_never_passes(small):
    p, q = small
    res = CHECK.assess(dataclasses.replace(q, gd_eq16_max_ratio=float("nan"), sgd_floor_measured=float("nan")), p)
    assert res.record("gd_eq16_max_ratio").passed is False and res.record("sgd_noise_floor").passed is False


def test_json_round_trip(small):
    p, q = small
    back = CheckResult.from_json(CHECK.assess(q, p).to_json())
    assert type(back.quantities) is type(q)
    np.testing.assert_array_equal(back.quantities.sgd_mean_excess_loss, q.sgd_mean_excess_loss)
    assert back.quantities.sgd_floor_predicted == q.sgd_floor_predicted


@pytest.mark.parametrize("kwargs, match", [({"rank": 50}, "rank"), ({"noise": 0.0}, "noise"), ({"batch": 0}, "batch"),
                                           ({"chains": 2}, "chains"), ({"n": 10}, "n"), ({"batch": 300}, "batch")])
def test_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        check.run(**kwargs)


@pytest.mark.parametrize("call, failed", [
    # GD's reductions: np.sum gives L* (call 0), L(theta_0) (1), the two initial distances (2, 3), then per step t
    # the loss (4 + 3 (t - 1)) and the two distances; a NaN at t = 3, after finite ratios Python's max kept
    (10, "gd_eq16_max_ratio"),
    (11, "gd_eq15_projected_max_ratio"),
    (12, "gd_eq15_min_norm_max_ratio"),
])
def test_a_nan_in_gradient_descent_fails(inject_nan, call, failed):
    # the check computes with NumPy alone (no toolkit routine): the NaN comes from the sum a ratio is made of
    poisoned = inject_nan("numpy.sum", call=call)
    p = CHECK.params(n=50, p=10, rank=5, sgd_steps=500, chains=8)
    res = CHECK.assess(CHECK.measure(p), p)
    assert poisoned == [call]
    assert [r.name for r in res.records if r.passed is False] == [failed] and np.isnan(res.measured[failed])


def test_eq16_is_not_compared_below_the_rounding_of_the_loss():
    # rank 10: the excess loss reaches 2 ulp of L* = 20 while the bound falls below it; the ratio of rounding to
    # the bound (1.74 before the floor) is not a violation of eq. (16)
    p = check.CHECK.params(rank=10, sgd_steps=500, chains=8)
    q = check.CHECK.measure(p)
    assert q.gd_eq16_max_ratio < 1.0 and check.CHECK.assess(q, p).record("gd_eq16_max_ratio").passed
