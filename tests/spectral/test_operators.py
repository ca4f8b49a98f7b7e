"""Tests of spectral.operators: KernelOperator products against the dense matrix, block sizes,
the memory guard, pairwise, the operator spectrum, backends and bad input.
"""

import functools
import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from spectral.floor.backend import to_numpy
from spectral.block import DEFAULT_EIG_TOL
from spectral.testing import assert_close
from spectral.floor.validation import InputError

from manifolds import Circle
from spectral import DenseMemoryError, KernelOperator, fna_kernel, heat_kernel, markov_spectrum, pairwise

EPS64 = np.finfo(np.float64).eps
RTOL = 4 * math.sqrt(EPS64)  # exact algebra: ~6e-8 in float64
TINY = np.finfo(np.float64).smallest_normal


def euclid(xa, xb):
    """Euclidean distance block in the namespace of the inputs (test-local, array-API clean)."""
    from spectral.floor.backend import array_namespace

    xp = array_namespace(xa, xb)
    diff = xp.reshape(xa, (xa.shape[0], 1, -1)) - xp.reshape(xb, (1, xb.shape[0], -1))
    return xp.sqrt(xp.sum(diff * diff, axis=2))


def _same_backend(xp, out, ref, rtol=RTOL, atol=0.0):
    """``out`` is in the input's namespace and equals the NumPy result ``ref``."""
    assert_close(out, xp.asarray(to_numpy(ref)), rtol=rtol, atol=atol)


# --------------------------------------------------------------------------- matrix-free


class TestKernelOperator:
    def _op(self, rng, n=37, m=None, block_rows=5):
        x = rng.standard_normal((n, 2))
        y = None if m is None else rng.standard_normal((m, 2))
        kern = functools.partial(fna_kernel, alpha=1.2, scale=0.5, dim=2)
        op = KernelOperator(x, kernel=kern, distance=euclid, y=y, block_rows=block_rows)
        dense = fna_kernel(cdist(x, x if y is None else y), alpha=1.2, scale=0.5, dim=2)
        return op, dense

    @pytest.mark.parametrize("m", [None, 23])
    def test_matvec_equals_dense(self, rng, m):
        op, dense = self._op(rng, m=m)
        assert op.shape == dense.shape and op.dtype == np.float64
        assert op.symmetric is (m is None)
        v = rng.standard_normal(dense.shape[1])
        vv = rng.standard_normal((dense.shape[1], 3))
        u = rng.standard_normal(dense.shape[0])
        scale = np.abs(dense).sum(axis=1).max()
        atol = 16 * EPS64 * scale * 4  # summation of <= n terms of size <= |v|max ~ 4
        assert_close(op.matvec(v), dense @ v, atol=atol)
        assert_close(op @ vv, dense @ vv, atol=atol)
        assert_close(op.rmatvec(u), dense.T @ u, atol=atol)
        assert_close(op.row_sums(), dense.sum(axis=1), atol=atol)
        assert_close(op.to_dense(), dense, rtol=64 * EPS64, atol=0)
        # negative control: a different kernel gives a different product
        other = fna_kernel(cdist(op.x, op.y), alpha=1.3, scale=0.5, dim=2)
        assert np.max(np.abs(to_numpy(op.matvec(v)) - other @ v)) > 1e3 * atol

    def test_block_size_from_budget(self, rng):
        x = rng.standard_normal((1000, 2))
        op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=1.0), distance=euclid)
        # numpy: four (b, m) float64 temporaries within the 4 MiB host budget
        assert op.block_rows == (4 << 20) // (4 * 1000 * 8) == 131
        x = rng.standard_normal((10**6, 1))
        op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=1.0), distance=euclid)
        assert op.block_rows == 1  # never less than one row
        x = rng.standard_normal((10, 1))
        assert KernelOperator(x, kernel=op.kernel, distance=euclid).block_rows == 10  # at most n

    def test_linear_operator_and_float32(self, rng):
        from scipy.sparse.linalg import eigsh

        op, dense = self._op(rng, n=60, block_rows=7)
        lo = op.aslinearoperator()
        vals = eigsh(lo, k=3, which="LA", return_eigenvectors=False, v0=np.ones(60))
        ref = np.linalg.eigvalsh(dense)[-3:]
        assert_close(np.sort(vals), ref, rtol=1e-10)  # ARPACK default tol ~ machine eps
        op32 = KernelOperator(op.x, kernel=op.kernel, distance=euclid, dtype=np.float32)
        assert op32.dtype == np.float32 and op32.matvec(np.ones(60, dtype=np.float32)).dtype == np.float32

    def test_memory_guard_up_front(self):
        # 10^6 x 10^6 would need 7450 GiB: refused from the shape, before any block is computed
        calls = []

        def dist(a, b):
            calls.append(1)
            return euclid(a, b)

        x = np.zeros((10**6, 1))
        op = KernelOperator(x, kernel=functools.partial(heat_kernel, eps=1.0), distance=dist)
        with pytest.raises(DenseMemoryError, match=r"use the operator's products \(matvec, @\)"):
            op.to_dense()
        with pytest.raises(DenseMemoryError, match=r"GiB.*use KernelOperator"):
            pairwise(x, kernel=op.kernel, distance=dist)
        assert calls == []

    def test_pairwise(self, rng):
        x = rng.standard_normal((8, 3))
        kern = functools.partial(heat_kernel, eps=0.7)
        assert_close(pairwise(x, kernel=kern, distance=euclid), np.exp(-cdist(x, x, "sqeuclidean") / 1.4),
                     rtol=RTOL, atol=1e-15)
        with pytest.raises(DenseMemoryError):
            pairwise(x, kernel=kern, distance=euclid, max_bytes=100)

    def test_bad(self, rng):
        x = rng.standard_normal((5, 2))
        kern = functools.partial(heat_kernel, eps=1.0)
        with pytest.raises(InputError, match="kernel must be callable"):
            KernelOperator(x, kernel=None, distance=euclid)
        with pytest.raises(InputError, match="distance must be callable"):
            KernelOperator(x, kernel=kern, distance=3)
        with pytest.raises(InputError, match="block_rows must be"):
            KernelOperator(x, kernel=kern, distance=euclid, block_rows=0)
        bad = x.copy()
        bad[2, 1] = np.inf
        with pytest.raises(InputError, match="x must contain only finite values"):
            KernelOperator(bad, kernel=kern, distance=euclid)
        op = KernelOperator(x, kernel=kern, distance=euclid)
        with pytest.raises(InputError, match="v must have shape \\(5,\\) or \\(5, k\\)"):
            op.matvec(np.ones(4))
        with pytest.raises(InputError, match="v must contain only finite values"):
            op.matvec(np.full(5, np.nan))
        wrong = KernelOperator(x, kernel=lambda d: d[:, :2], distance=euclid)
        with pytest.raises(InputError, match="must return a \\(5, 5\\) block"):
            wrong.matvec(np.ones(5))



def test_backends(xp, rng):
    x = rng.standard_normal((13, 2))
    kern = functools.partial(fna_kernel, alpha=1.5, scale=0.4, dim=2)
    op_np = KernelOperator(x, kernel=kern, distance=euclid, block_rows=4)
    op_xp = KernelOperator(xp.asarray(x), kernel=kern, distance=euclid, block_rows=4)
    v = rng.standard_normal((13, 2))
    _same_backend(xp, op_xp.matvec(xp.asarray(v)), op_np.matvec(v), atol=1e-14)
    _same_backend(xp, op_xp.rmatvec(xp.asarray(v)), op_np.rmatvec(v), atol=1e-14)
    _same_backend(xp, op_xp.row_sums(), op_np.row_sums(), atol=1e-14)
    _same_backend(xp, op_xp.to_dense(), op_np.to_dense())
    _same_backend(xp, pairwise(xp.asarray(x), kernel=kern, distance=euclid), op_np.to_dense())


def test_operator_spectrum_matches_dense(rng):
    # KernelOperator as the matrix-free input of markov_spectrum: same top eigenvalues as the stored matrix

    t = rng.uniform(0, 2 * np.pi, 300)
    x = np.c_[np.cos(t), np.sin(t)]
    op = KernelOperator(x, kernel=functools.partial(fna_kernel, alpha=1.2, scale=0.05, dim=1),
                        distance=Circle().distance)
    free = markov_spectrum(op, 10, method="matrix-free")
    dense = markov_spectrum(op.to_dense(), 10, method="dense")
    assert free.method == "matrix-free" and free.n_components == 1
    # eigenvalues alone: the block solver stops on its bound on their errors, DEFAULT_EIG_TOL = 1e-10
    # (measured difference 1.3e-12)
    np.testing.assert_allclose(free.eigenvalues, dense.eigenvalues, rtol=0, atol=DEFAULT_EIG_TOL)
    # with vectors: to a residual of sqrt(eps), eigenvalues to ~residual^2 / gap; measured difference 3e-15
    vec = markov_spectrum(op, 10, method="matrix-free", vectors=True)
    np.testing.assert_allclose(vec.eigenvalues, dense.eigenvalues, rtol=0, atol=1e3 * EPS64)
    # negative control: another alpha moves the spectrum far beyond either tolerance
    other = markov_spectrum(fna_kernel(to_numpy(Circle().distance(x)), alpha=1.4, scale=0.05, dim=1), 10)
    assert np.max(np.abs(other.eigenvalues - dense.eigenvalues)) > 1e3 * DEFAULT_EIG_TOL


# --------------------------------------------------------------------------- block products


class _Counted:
    """A distance that counts the entries it computes."""

    def __init__(self, fn):
        self.fn, self.entries = fn, 0

    def __call__(self, a, b):
        self.entries += a.shape[0] * b.shape[0]
        return self.fn(a, b)


def test_symmetric_tiles_halve_the_kernel_work(rng):
    x = rng.standard_normal((300, 2))
    kern = functools.partial(fna_kernel, alpha=1.2, scale=0.5, dim=2)
    dist = _Counted(euclid)
    op = KernelOperator(x, kernel=kern, distance=dist, tile=30)
    dense = fna_kernel(cdist(x, x), alpha=1.2, scale=0.5, dim=2)
    X = rng.standard_normal((300, 7))
    out = op.matmat(X)
    # tiles on and above the diagonal only: 10 row tiles of 30 -> 55 tiles, (n^2 + 10 * 30^2) / 2 entries
    per_product = (300**2 + 10 * 30**2) // 2
    assert dist.entries == per_product < 0.56 * 300**2
    scale = np.abs(dense).sum(axis=1).max() * np.abs(X).max()
    assert_close(out, dense @ X, atol=64 * EPS64 * scale)
    # the products define an exactly symmetric matrix (its upper triangle)
    E = op.matmat(np.eye(300))
    assert np.array_equal(E, E.T)
    # one sweep for all columns: a second product costs the same number of entries again
    before = dist.entries
    op.matmat(X[:, :1])
    assert dist.entries - before == per_product
    # keys != queries: row blocks over all n m entries
    dist_y = _Counted(euclid)
    op_y = KernelOperator(x, kernel=kern, distance=dist_y, y=x[:50])
    assert_close(op_y.matmat(X[:50]), dense[:, :50] @ X[:50], atol=64 * EPS64 * scale)
    assert dist_y.entries == 300 * 50


def test_float32_tiles_accumulate_in_float64(rng):
    x = rng.standard_normal((200, 2))
    kern = functools.partial(fna_kernel, alpha=1.2, scale=0.5, dim=2)
    op = KernelOperator(x, kernel=kern, distance=euclid, tile=48)
    X = rng.standard_normal((200, 3))
    ref = op.matmat(X)
    low = op.matmat(X, tile_dtype="float32")
    assert low.dtype == np.float64
    err = np.max(np.abs(low - ref)) / np.max(np.abs(ref))
    # float32 scores (eps32 = 1.2e-7) with float64 sums: measured 2e-7 relative
    assert 1e-9 < err <= 50 * np.finfo(np.float32).eps
    with pytest.raises(InputError, match="tile_dtype must be one of"):
        op.matmat(X, tile_dtype="float16")


def test_zero_diagonal_and_min_score(rng):
    x = rng.standard_normal((90, 2))
    kern = functools.partial(fna_kernel, alpha=1.2, scale=0.5, dim=2)
    op = KernelOperator(x, kernel=kern, distance=euclid, zero_diagonal=True, tile=32)
    dense = fna_kernel(cdist(x, x), alpha=1.2, scale=0.5, dim=2)
    np.fill_diagonal(dense, 0.0)
    X = rng.standard_normal((90, 4))
    assert_close(op.matmat(X), dense @ X, atol=1e-12)
    assert_close(op.row_sums(), dense.sum(axis=1), atol=1e-12)
    assert_close(op.to_dense(), dense, atol=1e-15)
    # the smallest off-diagonal score (the zeroed diagonal does not count)
    off = dense[~np.eye(90, dtype=bool)]
    assert op.min_score == pytest.approx(off.min(), rel=1e-12) and op.min_score > 0
    spec = markov_spectrum(op, 6, rng=0)
    ref = markov_spectrum(dense, 6, method="dense")
    np.testing.assert_allclose(to_numpy(spec.eigenvalues), to_numpy(ref.eigenvalues), atol=1e-12)
    # negative control: with the diagonal the spectrum differs
    full = markov_spectrum(fna_kernel(cdist(x, x), alpha=1.2, scale=0.5, dim=2), 6, method="dense")
    assert np.max(np.abs(to_numpy(full.eigenvalues) - to_numpy(ref.eigenvalues))) > 1e-3
    with pytest.raises(InputError, match="zero_diagonal needs keys = queries"):
        KernelOperator(x, kernel=kern, distance=euclid, y=x, zero_diagonal=True)
    with pytest.raises(InputError, match="zero_diagonal must be True or False"):
        KernelOperator(x, kernel=kern, distance=euclid, zero_diagonal=1)


def test_symmetric_products_other_namespaces(xp, rng):
    x = rng.standard_normal((70, 2))
    kern = functools.partial(fna_kernel, alpha=1.5, scale=0.4, dim=2)
    op_np = KernelOperator(x, kernel=kern, distance=euclid, tile=16, zero_diagonal=True)
    op_xp = KernelOperator(xp.asarray(x), kernel=kern, distance=euclid, tile=16, zero_diagonal=True)
    X = rng.standard_normal((70, 3))
    _same_backend(xp, op_xp.matmat(xp.asarray(X)), op_np.matmat(X), atol=1e-13)
    _same_backend(xp, op_xp.matmat(xp.asarray(X), tile_dtype="float32"), op_np.matmat(X, tile_dtype="float32"),
                  atol=1e-5)
    _same_backend(xp, op_xp.row_sums(), op_np.row_sums(), atol=1e-13)
    spec = markov_spectrum(op_xp, 5, rng=0)
    ref = markov_spectrum(op_np, 5, rng=0)
    _same_backend(xp, spec.eigenvalues, ref.eigenvalues, atol=1e-12)
