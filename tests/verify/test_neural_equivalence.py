"""verify.neural_equivalence (NEURAL-2, NEURAL-3): projected dot products realise every rank-d' bilinear
form; shared-weight Neural Attention is additive attention. Both printed statements fail."""

import numpy as np
import pytest

import spectral
from spectral.validation import InputError
from verify import neural_equivalence as check

CHEAP = dict(n=12, m=9, d=8, d_prime=(2,), hidden=(4,), activations=("tanh",))


def test_default_passes(default_result):
    res = default_result("neural_equivalence")
    assert res.passed, res.failures
    # a random rank-d' form has almost all of its weight off the diagonal: cross-index terms interact
    assert res.measured["min_cross_index_fraction"] > 0.5
    assert res.record("single_cross_term_error").measured <= res.record("single_cross_term_error").tolerance


def test_printed_statements_fail():
    res = check.run(claim="printed", **CHEAP)
    assert not res.passed
    assert res.record("printed_cross_index_fraction").passed is False
    assert res.record("printed_concat_differs_from_additive").passed is False
    corrected = [r for r in res.records if r.deciding and not r.name.startswith("printed_")]
    assert all(r.passed for r in corrected)


def test_swapped_query_and_key_blocks_fail(monkeypatch):
    real = spectral.neural_scores

    def swapped(q, k, mlp, **kwargs):  # W_1 applied to the key and W_2 to the query: not eq. (4)
        other = spectral.ScoreMLP(mlp.d_q, mlp.d_k, mlp.hidden, rng=0, activation=mlp.activation)
        other.W_h = np.concatenate([mlp.W2, mlp.W1], axis=1)
        other.b_h, other.w_a, other.b_a = mlp.b_h, mlp.w_a, mlp.b_a
        return real(q, k, other, **kwargs)

    monkeypatch.setattr(spectral, "neural_scores", swapped)
    res = check.run(**CHEAP)
    assert not res.passed
    assert res.record("toolkit_factored_vs_loop").passed is False
    assert res.record("toolkit_concat_vs_loop").passed is False


@pytest.mark.parametrize("activation", ["identity", "square", "exp", "relu", "gelu"])
def test_identity_holds_for_every_activation(activation):
    res = check.run(**{**CHEAP, "activations": (activation,)})
    assert res.passed, res.failures


@pytest.mark.parametrize("kwargs, name", [
    ({"d_prime": (0,)}, "d_prime"), ({"d_prime": (9,), "d": 8}, "d_prime"), ({"hidden": (0,)}, "hidden"),
    ({"activations": ("sigmoid",)}, "activations"), ({"n": 1}, "n"), ({"m": 1}, "m"), ({"d": 1}, "d")])
def test_bad_input_names_the_parameter(kwargs, name):
    with pytest.raises(InputError, match=name):
        check.run(**kwargs)
