"""verify.neural_expressivity (NEURAL-8): bilinear floor vs a shared-weight ReLU MLP fit, doubly centred.

The measurement runs once at small settings; the assertions are held to those quantities and to
quantities a wrong implementation (or too small a model) would give.
"""

import dataclasses

import numpy as np
import pytest

from verify import neural_expressivity as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, changed_fields,
                            failed_records, measured, measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=32, hidden=64, max_iter=150)
small = measurement_fixture(CHECK, **SMALL)


def test_small_settings_pass(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    gain = res.record("mlp_over_bilinear_residual")
    assert gain.measured <= gain.tolerance
    assert list(q.mlp_residual) == list(check.TARGETS)


def test_bilinear_fit_is_exact_on_bilinear_targets():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((20, 3)), rng.standard_normal((15, 3))
    M = rng.standard_normal((3, 3))
    target = q @ M @ k.T + rng.standard_normal((20, 1)) + rng.standard_normal((1, 15))  # + query and key biases
    assert check.bilinear_residual(q, k, target) <= 1e-12
    assert check.bilinear_residual(q, k, np.cos(q @ k.T)) > 0.5


def test_fit_is_deterministic_per_seed(small):
    p, q = small
    assert CHECK.measure(p) == q  # the same fits, iteration for iteration
    other = CHECK.measure(dataclasses.replace(p, seed=1))
    assert other.mlp_residual != q.mlp_residual


def test_one_hidden_unit_fails_and_says_why():
    p, q = measured(CHECK, **{**SMALL, "hidden": 1})
    res = assert_fails(CHECK, q, p, "mlp_over_bilinear_residual")
    assert "too few" in res.final_line()


@pytest.mark.parametrize("field, key, value, name", [
    ("bilinear_residual", "f3", 0.8, "bilinear_residual_f3"),
    ("bilinear_residual", "f4", 0.7, "bilinear_residual_f4"),
    ("bilinear_residual", "f1", 0.05, "bilinear_residual_f1"),
    ("bilinear_residual", "f2", 0.05, "bilinear_residual_f2"),
    ("mlp_residual", "f3", 0.9, "mlp_over_bilinear_residual"),
    ("mlp_residual", "f2", 0.05, "mlp_residual_f2"),
])
def test_each_assertion_fails_on_a_wrong_quantity(small, field, key, value, name):
    p, q = small
    res = assert_fails(CHECK, q, p, name, **changed_fields(q, {(field, key): value}))
    # a lower bilinear floor also raises the MLP's ratio to it; nothing else fails
    assert failed_records(res) <= {name, "mlp_over_bilinear_residual"}


test_rounding_level_assertions_fail_beyond_rounding = negative_controls(CHECK, "small", [
    ({"bilinear_residual_l2_squared": 1e-9}, "bilinear_residual_l2_squared"),
    ({"toolkit_evaluation_error": 1e-9}, "toolkit_evaluation_error"),
], only=True)


def test_a_stalled_fit_says_raise_max_iter(small):
    p, q = small
    res = assert_fails(CHECK, q, p, "mlp_over_bilinear_residual",
                       **changed_fields(q, {("mlp_residual", "f3"): 0.9, ("lbfgs_iterations", "f3"): p.max_iter}))
    assert "used all 150 iterations: raise max_iter" in res.final_line()


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, ("mlp_residual", "f2"), {"mlp_residual_f2", "mlp_over_bilinear_residual"})


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    assert assert_round_trip(CHECK, q, p).quantities == q


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"d_prime": 1}, "d_prime"), ({"hidden": 0}, "hidden"), ({"max_iter": 0}, "max_iter"), ({"n": 4}, "n"),
    # grids on which the bilinear floors cannot decide (measured lowest cos(q.k) residual 0.47 / 0.87 / 0.82 < 0.9)
    ({"n": 8}, "n must be in .32, 128. for the bilinear floors"), ({"n": 16}, "n must be"),
    ({"d_prime": 16}, "d_prime must be in .2, 8. at n = 32")
])


def test_the_largest_accepted_width_per_grid():
    assert CHECK.params(n=64, d_prime=16).d_prime == 16 and CHECK.params(n=32, d_prime=8).d_prime == 8
