"""Tests of spectral.neural (and spectral.activations): MLP scores against the concatenation loop of
NEURAL eqs. (3)-(4), blocking, the memory guard, backends and bad input.
"""

import math

import numpy as np
import pytest

from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError

import spectral.neural as neural
from spectral import DenseMemoryError, ScoreMLP, neural_scores
from spectral.activations import ACTIVATIONS, activation_function

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra: ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal



def _same_backend(xp, out, ref, rtol=RTOL, atol=0.0):
    """``out`` is in the input's namespace and equals the NumPy result ``ref``."""
    assert_close(out, xp.asarray(to_numpy(ref)), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- neural scores


class TestNeural:
    @pytest.mark.parametrize("activation", ACTIVATIONS)
    def test_concat_loop_reference(self, rng, activation):
        mlp = ScoreMLP(3, 2, 6, rng=rng, activation=activation)
        q = rng.standard_normal((5, 3))
        k = rng.standard_normal((4, 2))
        f = {
            "tanh": np.tanh,
            "relu": lambda z: np.maximum(z, 0),
            "gelu": lambda z: 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3))),
            "identity": lambda z: z,
            "square": lambda z: z**2,
            "exp": np.exp,
        }[activation]
        ref = np.array([[mlp.w_a @ f(mlp.W_h @ np.concatenate([qi, kj]) + mlp.b_h) + mlp.b_a for kj in k] for qi in q])
        for form in ("factored", "concat"):
            assert_close(neural_scores(q, k, mlp, form=form), ref, rtol=RTOL, atol=64 * EPS64 * np.abs(ref).max())

    def test_gelu_close_to_erf_gelu(self):
        # the tanh approximation is within 1e-3 of the exact erf GELU (Hendrycks & Gimpel)
        from scipy.special import erf


        z = np.linspace(-6, 6, 1001)
        exact = 0.5 * z * (1 + erf(z / math.sqrt(2)))
        assert np.max(np.abs(activation_function("gelu")(np, z) - exact)) < 1e-3

    def test_blocks_cover_all_rows(self, rng, monkeypatch):
        mlp = ScoreMLP(2, 2, 4, rng=0)
        q = rng.standard_normal((11, 2))
        k = rng.standard_normal((7, 2))
        full = neural_scores(q, k, mlp)
        monkeypatch.setattr(neural, "BLOCK_BYTES", 3 * 2 * 7 * 4 * 8)  # 3 rows per block
        assert_close(neural_scores(q, k, mlp), full, rtol=0, atol=0)

    def test_concat_memory_guard(self, rng):
        mlp = ScoreMLP(2, 2, 4, rng=0)
        q = rng.standard_normal((10, 2))
        with pytest.raises(DenseMemoryError, match="concatenated"):
            neural_scores(q, q, mlp, form="concat", max_bytes=1000)

    def test_bad(self, rng):
        mlp = ScoreMLP(2, 3, 4, rng=0)
        q = rng.standard_normal((4, 2))
        k = rng.standard_normal((4, 3))
        with pytest.raises(InputError, match="form must be one of 'factored', 'concat'"):
            neural_scores(q, k, mlp, form="tensor")
        with pytest.raises(InputError, match="q must have shape \\(n, 2\\)"):
            neural_scores(k, k, mlp)
        with pytest.raises(InputError, match="k must have shape \\(m, 3\\)"):
            neural_scores(q, q, mlp)
        with pytest.raises(InputError, match="mlp must be a ScoreMLP"):
            neural_scores(q, k, object())
        with pytest.raises(InputError, match="activation must be one of"):
            ScoreMLP(2, 2, 2, activation="softplus")
        with pytest.raises(InputError, match="hidden must be"):
            ScoreMLP(2, 2, 0)



def test_backends(xp, rng):
    x = rng.standard_normal((6, 3))
    xx = xp.asarray(x)
    mlp = ScoreMLP(3, 3, 5, rng=2, activation="relu")
    for form in ("factored", "concat"):
        _same_backend(xp, neural_scores(xx, xx, mlp, form=form), neural_scores(x, x, mlp), atol=1e-14)


def test_factored_scores_memory_estimate_bounds_the_traced_peak(estimate_and_peak):
    rng = np.random.default_rng(2)
    q, k = rng.standard_normal((1000, 8)), rng.standard_normal((900, 8))
    needed, peak = estimate_and_peak(lambda: neural_scores(q, k, ScoreMLP(8, 8, 16, rng=0)))
    assert 1000 * 900 * 8 <= peak <= needed, (peak, needed)


def test_factored_scores_refused_before_allocating(refused_peak):
    x = np.zeros((100_000, 4))
    assert refused_peak(lambda: neural_scores(x, x, ScoreMLP(4, 4, 8, rng=0)),
                        r"MLP scores of shape \(100000, 100000\) needs an estimated 149 GiB.*neural_scores\(q\[i:j\]") < 1 << 20
    with pytest.raises(DenseMemoryError, match="over the limit max_bytes"):
        neural_scores(x[:100], x[:100], ScoreMLP(4, 4, 8, rng=0), max_bytes=100_000)
