"""Tests of spectral.heat: the dense heat kernel against ``math``, the sparse kernel against a
truncated dense reference (``cdist``), its spectrum, backends and bad input.
"""

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from spectral.floor.backend import to_numpy
from spectral.testing import assert_close
from spectral.floor.validation import InputError

from spectral import DenseMemoryError, SparseScores, heat_kernel, heat_kernel_sparse, heat_time, markov_spectrum

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra: ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal



def _same_backend(xp, out, ref, rtol=RTOL, atol=0.0):
    """``out`` is in the input's namespace and equals the NumPy result ``ref``."""
    assert_close(out, xp.asarray(to_numpy(ref)), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- heat kernel


class TestHeat:
    def test_closed_form(self, rng):
        d = rng.random((5, 7)) * 2
        for eps in (0.01, 0.5, 3.0):
            ref = np.vectorize(lambda t: math.exp(-t * t / (2 * eps)))(d)
            # exp(-w) has relative error ~ |w| eps from rounding w (w up to 200 here)
            rtol = 4 * EPS64 * (1 + np.max(d) ** 2 / (2 * eps))
            assert_close(heat_kernel(d, eps=eps), ref, rtol=rtol, atol=TINY)
            assert heat_time(eps) == eps / 2
        # negative control: the paper's printed exp(-d^2/eps) differs
        assert np.max(np.abs(heat_kernel(d, eps=0.5) - np.exp(-d**2 / 0.5))) > 0.05

    def test_underflow(self):
        out = heat_kernel(np.array([[0.0, 37.0, 38.5]]), eps=0.5)  # exp(-37^2) subnormal, exp(-1482) 0
        assert out[0, 0] == 1.0 and out[0, 1] == 0.0 and out[0, 2] == 0.0

    @pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), None])
    def test_bad_eps(self, eps):
        with pytest.raises(InputError, match="eps must be"):
            heat_kernel(np.ones((2, 2)), eps=eps)
        with pytest.raises(InputError, match="eps must be"):
            heat_time(eps)



class TestSparseHeat:
    def test_matches_truncated_dense(self, rng):

        x = rng.standard_normal((300, 2))
        x[7] = x[3]  # a duplicate point: zero distance off the diagonal must be kept
        eps, cut = 0.05, 3.0
        sc = heat_kernel_sparse(x, eps=eps, cutoff=cut)
        assert isinstance(sc, SparseScores) and sc.symmetric and sc.shape == (300, 300)
        d = cdist(x, x)
        ref = np.where(d <= cut * math.sqrt(eps), np.exp(-d**2 / (2 * eps)), 0.0)
        dense = sc.to_dense()
        assert dense[7, 3] == 1.0 and np.all(np.diag(dense) == 1.0)
        # entrywise: exp of rounded d^2 (cKDTree vs cdist distances differ by a few ulp)
        assert_close(dense, ref, rtol=1e-12, atol=0)
        assert sc.nnz == np.count_nonzero(ref)
        v = rng.standard_normal(300)
        assert_close(sc @ v, ref @ v, atol=1e-12)
        assert_close(sc.rmatvec(v), ref.T @ v, atol=1e-12)
        assert_close(sc.row_sums(), ref.sum(axis=1), rtol=1e-12)
        # dropped entries are below exp(-cut^2/2); negative control: the untruncated kernel differs there
        full = np.exp(-d**2 / (2 * eps))
        assert np.max(full - ref) <= math.exp(-cut**2 / 2)
        assert np.max(full - ref) > 0.1 * math.exp(-cut**2 / 2)

    def test_cross_and_spectrum(self, rng):

        x = rng.standard_normal((200, 2))
        y = rng.standard_normal((50, 2))
        sc = heat_kernel_sparse(x, eps=0.1, y=y)
        assert not sc.symmetric and sc.shape == (200, 50)
        d = cdist(x, y)
        assert_close(sc.to_dense(), np.where(d <= 6 * math.sqrt(0.1), np.exp(-d**2 / 0.2), 0.0), rtol=1e-12)
        sym = heat_kernel_sparse(x, eps=0.5, cutoff=3.0)  # connected (an isolated point warns)
        free = markov_spectrum(sym, 5, method="matrix-free")
        dense = markov_spectrum(sym.to_dense(), 5, method="dense")
        np.testing.assert_allclose(free.eigenvalues, dense.eigenvalues, rtol=0, atol=1e3 * EPS64)

    def test_bad(self, rng):

        x = rng.standard_normal((10, 2))
        with pytest.raises(InputError, match="eps must be"):
            heat_kernel_sparse(x, eps=0.0)
        with pytest.raises(InputError, match=r"cutoff must be in \(0.0, inf\)"):
            heat_kernel_sparse(x, eps=1.0, cutoff=-1)
        bad = x.copy()
        bad[0, 0] = np.nan
        with pytest.raises(InputError, match="x must contain only finite values"):
            heat_kernel_sparse(bad, eps=1.0)
        with pytest.raises(InputError, match="y must have shape \\(m, 2\\)"):
            heat_kernel_sparse(x, eps=1.0, y=np.ones((3, 3)))
        with pytest.raises(InputError, match="matrix must be a 2-d scipy.sparse array"):
            SparseScores(np.eye(3), symmetric=True)
        import scipy.sparse as sp

        with pytest.raises(InputError, match="finite and >= 0"):
            SparseScores(sp.csr_array(-np.eye(3)), symmetric=True)
        with pytest.raises(DenseMemoryError):
            heat_kernel_sparse(x, eps=1.0).to_dense(max_bytes=10)



def test_backends(xp, rng):
    d = rng.random((6, 5)) * 3
    d[1, 1] = 30.0  # underflow path
    _same_backend(xp, heat_kernel(xp.asarray(d), eps=0.3), heat_kernel(d, eps=0.3))


# --------------------------------------------------------------------------- memory guard


def test_memory_estimate_bounds_the_traced_peak(xp, rng, estimate_and_peak):
    d = xp.asarray(rng.random((600, 700)) * 40)  # most scores underflow: the flush path runs
    needed, peak = estimate_and_peak(lambda: heat_kernel(d, eps=0.5, max_bytes=2**40))
    assert peak <= needed, (peak, needed)
    assert peak >= 600 * 700 * 8  # the scores themselves


def test_memory_guard_tiny_limit(xp, rng):
    import spectral
    from spectral.heat import HEAT_KERNEL_PEAK
    from spectral.floor.pairwise_memory import FIXED_OVERHEAD_BYTES

    d = rng.random((40, 50)) * 3
    peak = HEAT_KERNEL_PEAK["numpy" if xp is np else "other"]
    needed = 40 * 50 * (peak["copies"] * 8 + peak["mask_bytes"]) + FIXED_OVERHEAD_BYTES
    with pytest.raises(DenseMemoryError, match=r"heat-kernel scores of shape \(40, 50\) needs an estimated .* "
                       r"limit max_bytes = .*heat_kernel_sparse\(x, eps=\.\.\., cutoff=\.\.\.\).*KernelOperator"):
        heat_kernel(xp.asarray(d), eps=0.3, max_bytes=needed - 1)
    assert callable(spectral.heat_kernel_sparse) and callable(spectral.KernelOperator)  # the alternatives exist
    # at the limit the result is the same as without one
    _same_backend(xp, heat_kernel(xp.asarray(d), eps=0.3, max_bytes=needed), heat_kernel(d, eps=0.3), rtol=0.0)


def test_memory_guard_low_available_memory_refuses_before_allocating(rng, monkeypatch):
    import tracemalloc

    import spectral.floor.memory

    monkeypatch.setattr(spectral.floor.memory, "available_memory_bytes", lambda *a, **k: 4 << 20)
    d = rng.random((1000, 1100))  # scores 8.8 MB: over the 8 MiB below which the guard skips the /proc read
    tracemalloc.start()
    try:
        with pytest.raises(DenseMemoryError, match=r"shape \(1000, 1100\) needs an estimated 9.5 MiB, over the "
                           r"memory available now: 4 MiB"):
            heat_kernel(d, eps=0.1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < d.nbytes / 4  # the input checks' boolean masks at most, never the scores
