"""verify.neural_equivalence (NEURAL-2, NEURAL-3): projected dot products realise every rank-d' bilinear
form; shared-weight Neural Attention is additive attention. Both printed statements fail.

The measurement runs once at small settings (every activation); the assertions are held to those
quantities, to the printed claim, and to quantities a wrong implementation would give.
"""

import dataclasses

import numpy as np
import spectral
from manifolds.references.neural import ACTIVATIONS
from verify import neural_equivalence as check
from verify.testing import (assert_fails, assert_nan_fails, assert_passes, assert_round_trip, measured,
                            measurement_fixture, negative_controls, refusals)

CHECK = check.CHECK
SMALL = dict(n=12, m=9, d=8, d_prime=(2,), hidden=(4,))
# the identity of concatenation and additive attention holds for every activation
small = measurement_fixture(CHECK, **SMALL, activations=ACTIVATIONS)


def test_small_settings_pass_for_every_activation(small):
    p, q = small
    res = assert_passes(CHECK, q, p)
    # a random rank-d' form has almost all of its weight off the diagonal: cross-index terms interact
    assert q.min_cross_index_fraction > 0.5
    assert q.single_cross_term_error <= res.record("single_cross_term_error").tolerance


def test_printed_statements_fail(small):
    p, q = small
    assert_fails(CHECK, q, dataclasses.replace(p, claim="printed"),
                 {"printed_cross_index_fraction", "printed_concat_differs_from_additive"}, only=True)


def test_swapped_query_and_key_blocks_fail(monkeypatch):
    real = spectral.neural_scores

    def swapped(q, k, mlp, **kwargs):  # W_1 applied to the key and W_2 to the query: not eq. (4)
        other = spectral.ScoreMLP(mlp.d_q, mlp.d_k, mlp.hidden, rng=0, activation=mlp.activation)
        other.W_h = np.concatenate([mlp.W2, mlp.W1], axis=1)
        other.b_h, other.w_a, other.b_a = mlp.b_h, mlp.w_a, mlp.b_a
        return real(q, k, other, **kwargs)

    monkeypatch.setattr(spectral, "neural_scores", swapped)
    p, q = measured(CHECK, **SMALL, activations=("tanh",))
    assert_fails(CHECK, q, p, {"toolkit_factored_vs_loop", "toolkit_concat_vs_loop"}, only=True)


test_each_assertion_fails_on_a_wrong_quantity = negative_controls(CHECK, "small", [
    ({"bilinear_realisation_error": 1e-9}, "bilinear_realisation_error"),
    ({"interaction_coefficient_error": 1e-9}, "interaction_coefficient_error"),
    ({"single_cross_term_error": 1e-12}, "single_cross_term_error"),
    ({"l2_expansion_error": 1e-11}, "l2_expansion_error"),
    ({"l2_softmax_difference": 1e-11}, "l2_softmax_difference"),
    ({"concat_vs_additive": 1e-9}, "concat_vs_additive"),
    ({"toolkit_concat_vs_loop": 1e-9}, "toolkit_concat_vs_loop"),
    ({"toolkit_factored_vs_loop": 1e-9}, "toolkit_factored_vs_loop"),
    ({"output_bias_cancels": 1e-12}, "output_bias_cancels"),
], only=True)


def test_nan_never_passes(small):
    p, q = small
    assert_nan_fails(CHECK, q, p, "concat_vs_additive", "concat_vs_additive")


def test_json_round_trip_gives_typed_quantities(small):
    p, q = small
    back = assert_round_trip(CHECK, q, p)
    assert back.quantities == q and back.parameters["activations"] == list(ACTIVATIONS)


test_bad_input_names_the_parameter = refusals(check.run, [
    ({"d_prime": (0,)}, "d_prime"), ({"d_prime": (9,), "d": 8}, "d_prime"), ({"hidden": (0,)}, "hidden"),
    ({"activations": ("sigmoid",)}, "activations"), ({"activations": 3}, "activations"), ({"n": 1}, "n"),
    ({"m": 1}, "m"), ({"d": 1}, "d"),
])
