"""verify.neural_cost (NEURAL-6, NEURAL-7): parameter arithmetic, tensor construction and memory."""

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import neural_cost as check

CHEAP = dict(n=6, d_prime=(2, 16), hidden=4, memory_n=128)


def test_default_passes(default_result):
    res = default_result("neural_cost")
    assert res.passed, res.failures
    # C is bigger than the whole factored working set when 2 d' > 2 h (d' = 16, h = 8)
    assert res.record("concat_peak_over_C").measured >= 1.0
    assert res.arrays["toy_C"].shape == (3, 3, 4)


def test_per_pair_count_from_array_shapes():
    n, d_prime, h = 7, 3, 5
    shapes = [(n, n, h, 2 * d_prime), (n, n, h), (n, n, h), (n, n)]  # W_h, b_h, W_a, b_a of eq. (8)
    assert check.per_pair_parameters(n, d_prime, h) == sum(int(np.prod(s)) for s in shapes)
    assert check.shared_parameters(d_prime, h) == sum(int(np.prod(s[2:])) for s in shapes)


def test_printed_statements_fail():
    res = check.run(claim="printed", **CHEAP)
    assert not res.passed
    for name in ("printed_per_pair_over_reported", "printed_relative_gain_error", "printed_factored_peak_over_C"):
        assert res.record(name).passed is False, name


def test_factored_form_that_builds_C_fails(monkeypatch):
    real = spectral.neural_scores
    monkeypatch.setattr(spectral, "neural_scores", lambda q, k, mlp, form="factored", **kw:
                        real(q, k, mlp, form="concat", **kw))
    res = check.run(**CHEAP)
    assert not res.passed
    assert res.record("factored_peak_growth_with_d_prime").passed is False


@pytest.mark.parametrize("kwargs, name", [({"n": 1}, "n"), ({"d_prime": (0,)}, "d_prime"), ({"hidden": 0}, "hidden"),
                                          ({"activation": "swish"}, "activation"), ({"memory_n": 16}, "memory_n")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)
