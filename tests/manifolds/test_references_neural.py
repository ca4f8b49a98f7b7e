"""manifolds.references.neural: the explicit-loop references of the NEURAL checks and their input checks."""

import math

import numpy as np
import pytest

from spectral.floor.validation import InputError
from manifolds.references import neural as ref


def test_loops_follow_the_equations():
    rng = np.random.default_rng(5)
    q, k = rng.standard_normal((3, 2)), rng.standard_normal((4, 2))
    W_h, b_h, w_a = rng.standard_normal((5, 4)), rng.standard_normal(5), rng.standard_normal(5)
    # one entry by hand: s_12 = w_a . tanh(W_h [q_1; k_2] + b_h) + 0.5
    z = W_h @ np.array([q[1, 0], q[1, 1], k[2, 0], k[2, 1]]) + b_h
    by_hand = sum(w_a[m] * math.tanh(z[m]) for m in range(5)) + 0.5
    s = ref.mlp_score_loop(q, k, W_h, b_h, w_a, 0.5, "tanh")
    assert s.shape == (3, 4) and s[1, 2] == pytest.approx(by_hand, abs=1e-14)
    c = ref.concat_loop(q, k)
    assert c.shape == (3, 4, 4) and np.array_equal(c[1, 2], [q[1, 0], q[1, 1], k[2, 0], k[2, 1]])
    per_pair = ref.per_pair_score_loop(c, np.broadcast_to(W_h, (3, 4, 5, 4)), np.broadcast_to(w_a, (3, 4, 5)),
                                       "tanh", b_h=np.broadcast_to(b_h, (3, 4, 5)), b_a=np.full((3, 4), 0.5))
    assert np.max(np.abs(per_pair - s)) <= 1e-14


def test_gelu_is_the_tanh_approximation():
    z = np.array([-3.0, -0.5, 0.0, 0.7, 2.0])
    expected = [0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v**3))) for v in z]
    assert np.allclose(ref.activation("gelu")(z), expected, rtol=0, atol=1e-15)


def test_rank_profile_tolerances():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((30, 3)) @ rng.standard_normal((3, 20))
    prof = ref.rank_profile(a)
    assert prof.ranks == {"numpy": 3, 1e-10: 3, 1e-6: 3}
    assert prof.ratio(3) < 1e-14 < prof.ratio(2)
    assert prof.rank("numpy") == np.linalg.matrix_rank(a)


@pytest.mark.parametrize("q_shape, k_shape, name", [((3, 2), (4, 3), "q and k"), ((3,), (4, 2), "q"),
                                                    ((3, 2), (4, 2, 1), "k")])
def test_mismatched_query_and_key_shapes(q_shape, k_shape, name):
    W_h, b = np.zeros((5, 4)), np.zeros(5)
    with pytest.raises(InputError, match=name):
        ref.mlp_score_loop(np.zeros(q_shape), np.zeros(k_shape), W_h, b, b, 0.0, "relu")
    with pytest.raises(InputError, match=name):
        ref.additive_score_loop(np.zeros(q_shape), np.zeros(k_shape), W_h, b, b, 0.0, "relu")


def test_bad_activation_and_shapes():
    # (the integer tuples of verify.neural_rank's hidden= are verify's input check: tests/verify)
    with pytest.raises(InputError, match="activation"):
        ref.activation("softplus")
    with pytest.raises(InputError, match="W_h"):
        ref.per_pair_score_loop(np.zeros((2, 2, 4)), np.zeros((2, 2, 3, 5)), np.zeros((2, 2, 3)), "relu")
