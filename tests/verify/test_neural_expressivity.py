"""verify.neural_expressivity (NEURAL-8): bilinear floor vs a shared-weight ReLU MLP fit, doubly centred."""

import numpy as np
import pytest

from spectral.validation import InputError
from verify import neural_expressivity as check

CHEAP = dict(n=12, hidden=16, max_iter=40)


def test_default_passes(default_result):
    res = default_result("neural_expressivity")
    assert res.passed, res.failures
    gain = res.record("mlp_over_bilinear_residual")
    assert gain.measured <= gain.tolerance
    assert res.arrays["residual_mlp"].shape == (4,)


def test_bilinear_fit_is_exact_on_bilinear_targets():
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((20, 3)), rng.standard_normal((15, 3))
    M = rng.standard_normal((3, 3))
    target = q @ M @ k.T + rng.standard_normal((20, 1)) + rng.standard_normal((1, 15))  # + query and key biases
    assert check.bilinear_residual(q, k, target) <= 1e-12
    assert check.bilinear_residual(q, k, np.cos(q @ k.T)) > 0.5


def test_fit_is_deterministic_per_seed():
    a, b = check.run(seed=3, **CHEAP), check.run(seed=3, **CHEAP)
    assert np.array_equal(a.arrays["residual_mlp"], b.arrays["residual_mlp"])
    c = check.run(seed=4, **CHEAP)
    assert not np.array_equal(a.arrays["residual_mlp"], c.arrays["residual_mlp"])


def test_one_hidden_unit_fails_and_says_why():
    res = check.run(hidden=1, n=16, max_iter=100)
    assert not res.passed
    assert res.record("mlp_over_bilinear_residual").passed is False
    assert "too few" in res.final_line()


@pytest.mark.parametrize("kwargs, name", [({"d_prime": 1}, "d_prime"), ({"hidden": 0}, "hidden"),
                                          ({"max_iter": 0}, "max_iter"), ({"n": 4}, "n")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)
