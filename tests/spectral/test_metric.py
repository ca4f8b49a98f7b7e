"""Tests of spectral.metric: the residual feature map and metric-attention scores against explicit
formulas and ``cdist``, the Lipschitz bound, backends and bad input.
"""

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError

from spectral import ResidualMLP, metric_kernel

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra: ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal



def _same_backend(xp, out, ref, rtol=RTOL, atol=0.0):
    """``out`` is in the input's namespace and equals the NumPy result ``ref``."""
    assert_close(out, xp.asarray(to_numpy(ref)), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- metric kernel


class TestMetric:
    def test_residual_mlp_formula(self, rng):
        g = ResidualMLP(3, 5, rng=1)
        x = rng.standard_normal((4, 3))
        ref = np.array([xi + g.w2 @ np.tanh(g.w1 @ xi + g.b1) for xi in x])
        assert_close(g(x), ref, rtol=64 * EPS64)
        # same seed, same weights; another seed, other weights
        np.testing.assert_array_equal(ResidualMLP(3, 5, rng=1).w1, g.w1)
        assert not np.array_equal(ResidualMLP(3, 5, rng=2).w1, g.w1)

    def test_metric_kernel_reference(self, rng):
        g = ResidualMLP(2, 8, rng=rng, activation="relu")
        x = rng.standard_normal((6, 2))
        y = rng.standard_normal((4, 2))
        gx = np.array([xi + g.w2 @ np.maximum(g.w1 @ xi + g.b1, 0) for xi in x])
        gy = np.array([yi + g.w2 @ np.maximum(g.w1 @ yi + g.b1, 0) for yi in y])
        ref = np.exp(-cdist(gx, gy, "sqeuclidean") / (2 * 0.3))
        # squared distances summed per coordinate: relative error ~ eps in d^2, ~ eps d^2 / (2 eps_kernel) in C
        assert_close(metric_kernel(x, g, eps=0.3, y=y), ref, rtol=RTOL, atol=1e-13)
        cxx = metric_kernel(x, g, eps=0.3)
        assert_close(np.diag(cxx), np.ones(6), rtol=1e-13)

    def test_linear_feature_map_is_l2_attention(self, rng):
        # g(x) = P x reduces to L2 self-attention (Kim et al.): exp(-|P(x-y)|^2 / (2 eps))
        p = rng.standard_normal((3, 3))
        x = rng.standard_normal((5, 3))
        ref = np.exp(-cdist(x @ p.T, x @ p.T, "sqeuclidean") / 2.0)
        assert_close(metric_kernel(x, lambda z: z @ p.T, eps=1.0), ref, rtol=RTOL, atol=1e-13)

    def test_lipschitz_bound(self):
        g = ResidualMLP(4, 16, rng=3, gain=0.1)
        assert 0 < g.residual_lipschitz_bound() < 1
        assert ResidualMLP(4, 16, rng=3, activation="exp").residual_lipschitz_bound() == math.inf

    def test_bad(self, rng):
        with pytest.raises(InputError, match="activation must be one of"):
            ResidualMLP(2, 3, activation="sigmoid")
        with pytest.raises(InputError, match="width must be"):
            ResidualMLP(2, 0)
        g = ResidualMLP(2, 3, rng=0)
        with pytest.raises(InputError, match="x must have shape \\(n, 2\\)"):
            g(np.ones((3, 4)))
        with pytest.raises(InputError, match="eps must be"):
            metric_kernel(np.ones((3, 2)), g, eps=-1)
        with pytest.raises(InputError, match="feature_map must be callable"):
            metric_kernel(np.ones((3, 2)), None, eps=1)



def test_backends(xp, rng):
    x = rng.standard_normal((6, 3))
    xx = xp.asarray(x)
    g = ResidualMLP(3, 4, rng=5, activation="gelu")
    _same_backend(xp, g(xx), g(x))
    _same_backend(xp, metric_kernel(xx, g, eps=0.4), metric_kernel(x, g, eps=0.4), atol=1e-14)


# --------------------------------------------------------------------------- memory guard


@pytest.mark.parametrize("eps", [0.5, 0.005])  # 0.005: most scores underflow, the flush path runs
def test_memory_estimate_bounds_the_traced_peak(xp, rng, eps, estimate_and_peak):
    g = ResidualMLP(4, 8, rng=2)
    x, y = xp.asarray(rng.standard_normal((600, 4))), xp.asarray(rng.standard_normal((700, 4)))
    needed, peak = estimate_and_peak(lambda: metric_kernel(x, g, eps=eps, y=y, max_bytes=2**40))
    assert 600 * 700 * 8 <= peak <= needed, (peak, needed)


def test_in_place_path_is_bitwise_the_out_of_place_formula(rng):
    from manifolds import pairwise_sq_distance

    g = ResidualMLP(3, 5, rng=1)
    x, y = rng.standard_normal((40, 3)), rng.standard_normal((50, 3))
    ref = np.exp(-pairwise_sq_distance(g(x), g(y)) / (2.0 * 0.01))
    ref[ref < TINY] = 0.0
    assert np.array_equal(metric_kernel(x, g, eps=0.01, y=y), ref)


def test_memory_guard_tiny_limit(xp, rng):
    import spectral
    from spectral.floor.memory import DenseMemoryError

    g = ResidualMLP(3, 4, rng=0)
    x = rng.standard_normal((30, 3))
    with pytest.raises(DenseMemoryError, match=r"metric-attention scores of shape \(30, 30\) needs an estimated .* "
                       r"limit max_bytes = 0.977 KiB; .*metric_kernel\(x\[i:j\].*KernelOperator\(feature_map\(x\)"):
        metric_kernel(xp.asarray(x), g, eps=0.5, max_bytes=1000)
    assert callable(spectral.KernelOperator)
    _same_backend(xp, metric_kernel(xp.asarray(x), g, eps=0.5, max_bytes=2**30), metric_kernel(x, g, eps=0.5), rtol=0.0)


def test_memory_guard_low_available_memory_refuses_before_allocating(rng, monkeypatch):
    import tracemalloc

    import spectral.floor.memory
    from spectral.floor.memory import DenseMemoryError

    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 64 << 20)
    g = ResidualMLP(3, 4, rng=0)
    x = rng.standard_normal((10_000, 3))  # scores of 800 MB
    tracemalloc.start()
    try:
        with pytest.raises(DenseMemoryError, match=r"shape \(10000, 10000\) needs an estimated 871 MiB, over the "
                           r"memory available now: 64 MiB"):
            metric_kernel(x, g, eps=0.5)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 2 << 20  # the features and the input checks, never the scores
