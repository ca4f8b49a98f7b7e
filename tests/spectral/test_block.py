"""Tests of spectral.block (block Krylov-Schur): eigenpairs against numpy.linalg.eigh, the mixed-precision
phases, restarts, other array namespaces, non-convergence, and the few block products it needs.

Tolerances: the solver stops at a relative residual ``tol``; a symmetric Ritz value is then within
``residual^2 / gap`` of an eigenvalue (measured errors <= 3e-14 below, against bounds of 1e-11).
"""

import math

import numpy as np
import pytest

from manifolds import Circle, Sphere
from spectral import fna_kernel
from spectral.floor.backend import to_numpy
from spectral.block import DEFAULT_EIG_TOL, DEFAULT_TOL, FAST_TOL, basis_size, block_eigsh, block_size, error_bound
from spectral.floor.validation import ConvergenceError


def _conjugate(C):
    s = 1.0 / np.sqrt(C.sum(axis=1))
    return s[:, None] * C * s[None, :]


@pytest.fixture(scope="module")
def circle_S(random_circle):
    _, C, _ = random_circle
    return _conjugate(C)


@pytest.fixture(scope="module")
def sphere_S():
    """Fibonacci S^2, n = 600, FNA alpha = 1.2 at s = 3h: 49 leading eigenvalues in shells of 2l+1."""
    sphere = Sphere(2)
    x = sphere.grid(600)
    h = math.sqrt(4 * math.pi / 600)
    C = fna_kernel(sphere.distance(x), alpha=1.2, scale=3 * h, dim=2)
    C32 = fna_kernel(sphere.distance(x.astype(np.float32)), alpha=1.2, scale=3 * h, dim=2).astype(np.float64)
    return _conjugate(C), _conjugate(C32)


def _check(res, S, k, tol):
    w = np.linalg.eigvalsh(S)[::-1][:k]
    ev = to_numpy(res.eigenvalues)
    V = to_numpy(res.vectors)
    assert res.residual <= tol
    # Ritz values of a symmetric matrix: error <= residual^2 / gap; the gap to the rest is >= 1e-3 here
    assert np.max(np.abs(ev - w)) <= max(1e3 * tol**2, 1e-12)
    assert np.max(np.abs(V.T @ V - np.eye(k))) <= 1e-12  # orthonormal Ritz vectors
    R = S @ V - V * ev[None, :]
    assert np.max(np.linalg.norm(R, axis=0)) <= 1.01 * tol + 1e-14  # the reported residual is the true one
    np.testing.assert_allclose(to_numpy(res.images), S @ V, atol=1e-13)


def test_leading_eigenpairs_of_fna_conjugate(circle_S):
    S = circle_S
    res = block_eigsh(lambda X: S @ X, S.shape[0], 10, like=S, rng=0)
    _check(res, S, 10, DEFAULT_TOL)
    # few block products: the cost of a matrix-free solve is one kernel sweep per product
    assert res.products <= 20 and res.fast_products == 0
    # negative control: without the last products the pairs are not converged
    early = block_eigsh(lambda X: S @ X, S.shape[0], 10, like=S, rng=0, tol=1e-3)
    assert early.products < res.products and early.residual > 10 * DEFAULT_TOL


def test_restarts_and_narrow_blocks_on_a_clustered_spectrum(sphere_S):
    S, _ = sphere_S
    # k = 49 (shells l <= 6) with a block of 8 and a basis of k + 3 b: many thick restarts
    res = block_eigsh(lambda X: S @ X, S.shape[0], 49, like=S, rng=1, block=8, max_basis=49 + 24)
    _check(res, S, 49, DEFAULT_TOL)
    assert res.columns > 49 + 24  # it did restart


def test_mixed_precision_refines_float32_iterations(sphere_S):
    S, S32 = sphere_S
    assert np.linalg.norm(S - S32, 2) > 1e-8  # the cheap operator really differs
    calls = {"fast": 0, "accurate": 0}

    def fast(X):
        calls["fast"] += 1
        return S32 @ X

    def accurate(X):
        calls["accurate"] += 1
        return S @ X

    res = block_eigsh(accurate, S.shape[0], 49, like=S, apply_fast=fast, rng=2)
    _check(res, S, 49, DEFAULT_TOL)
    assert res.fast_products == calls["fast"] > res.products == calls["accurate"] >= 1
    # negative control: the cheap operator alone stalls near its own rounding (eigenvalues off by > 1e-9)
    only = block_eigsh(fast, S.shape[0], 49, like=S, rng=2, tol=10 * FAST_TOL)
    assert np.max(np.abs(to_numpy(only.eigenvalues) - np.linalg.eigvalsh(S)[::-1][:49])) > 1e-9


@pytest.mark.parametrize("k", [9, 10])
def test_eigenvalue_target_stops_on_the_error_bound(sphere_S, k):
    # k = 9 ends the degree-2 shell, k = 10 cuts the 7-fold degree-3 one (the bound's group then ends after it)
    S, S32 = sphere_S
    w = np.linalg.eigvalsh(S)[::-1][:k]
    kw = dict(like=S, apply_fast=lambda X: S32 @ X, rng=2)
    res = block_eigsh(lambda X: S @ X, S.shape[0], k, eig_tol=DEFAULT_EIG_TOL, **kw)
    err = np.max(np.abs(to_numpy(res.eigenvalues) - w))
    assert res.eigenvalue_bound <= DEFAULT_EIG_TOL and err <= res.eigenvalue_bound  # the bound holds
    assert res.products == 1  # the cheap phase went far enough: one accurate product settles it
    # it stopped on the bound, before the residual target, and with fewer products in all
    full = block_eigsh(lambda X: S @ X, S.shape[0], k, **kw)
    _check(full, S, k, DEFAULT_TOL)
    assert res.residual > DEFAULT_TOL and res.products + res.fast_products < full.products + full.fast_products
    # negative control: the same products without the accurate one (cheap Ritz values) are off by > 1e-9
    only = block_eigsh(lambda X: S32 @ X, S.shape[0], k, like=S, rng=2, eig_tol=DEFAULT_EIG_TOL)
    assert np.max(np.abs(to_numpy(only.eigenvalues) - w)) > 1e-9


def test_error_bound_bounds_ritz_value_errors():
    # Ritz pairs of perturbed eigenvectors of a matrix with a clustered top (1, 3, 5 nearly equal values, then
    # a gap, then a tail): every Ritz value's error is within the bound; the bound is within 1e4 of the error
    rng = np.random.default_rng(5)
    n, k = 120, 4  # k cuts the 5-fold cluster: the bound's group must end after it (9 pairs)
    lam = np.concatenate([[1.0], 0.9 + 1e-4 * rng.random(3), 0.8 + 1e-4 * rng.random(5), 0.5 * rng.random(n - 9)])
    lam = np.sort(lam)[::-1]
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    S = (U * lam) @ U.T
    for eps in (1e-3, 1e-5, 1e-7):
        Y, _ = np.linalg.qr(U[:, :14] + eps * rng.standard_normal((n, 14)))
        theta, G = np.linalg.eigh(Y.T @ S @ Y)
        theta, G = theta[::-1], G[:, ::-1]
        Z = Y @ G
        res = np.linalg.norm(S @ Z - Z * theta, axis=0)
        bound = error_bound(theta, res, k)
        err = np.max(np.abs(theta[:k] - lam[:k]))
        assert err <= bound <= 1e4 * err, (eps, err, bound)
        # the group ends after the cluster that k cuts: the bound is far below the one of a group of k pairs
        assert bound < np.sum(res[:k] ** 2) / (theta[k - 1] - theta[k])
    # no gap among the measured pairs (or too few pairs): no bound
    assert error_bound(np.array([1.0, 1.0, 1.0]), np.array([0.1, 0.1, 0.1]), 1) == float("inf")
    assert error_bound(np.array([1.0, 0.5]), np.array([0.0, 0.0]), 2) == float("inf")


def test_other_namespaces(xp, circle_S):
    S = xp.asarray(circle_S)
    res = block_eigsh(lambda X: S @ X, S.shape[0], 6, like=S, rng=0)
    assert type(res.eigenvalues) is type(S) and type(res.vectors) is type(S)
    ref = np.linalg.eigvalsh(circle_S)[::-1][:6]
    assert np.max(np.abs(to_numpy(res.eigenvalues) - ref)) <= 1e-12


def test_small_dense_work_stays_in_the_namespace(strict_xp, circle_S, monkeypatch):
    # On a device only numbers the iteration branches on may cross to the host (Ritz values, residual norms,
    # ranks): never a block, a basis or a projected matrix. Every host transfer of spectral.block is recorded.
    import spectral.block as blk

    seen = []
    real = blk.to_numpy
    monkeypatch.setattr(blk, "to_numpy", lambda a: seen.append(tuple(a.shape)) or real(a))
    S = strict_xp.asarray(circle_S)
    res = block_eigsh(lambda X: S @ X, S.shape[0], 6, like=S, rng=0, block=8, max_basis=40)
    assert seen and all(len(shape) <= 1 and shape[0] <= 40 for shape in seen), seen
    ref = np.linalg.eigvalsh(circle_S)[::-1][:6]
    assert np.max(np.abs(to_numpy(res.eigenvalues) - ref)) <= 1e-12
    # the NumPy path still solves its projected matrices on the host (negative control of the recording)
    seen.clear()
    block_eigsh(lambda X: circle_S @ X, circle_S.shape[0], 6, like=circle_S, rng=0, block=8, max_basis=40)
    assert any(len(shape) == 2 for shape in seen)


def test_non_convergence_is_a_convergence_error(circle_S):
    S = circle_S
    with pytest.raises(ConvergenceError, match=r"did not converge to the 10 leading eigenpairs in 3 block products"):
        block_eigsh(lambda X: S @ X, S.shape[0], 10, like=S, rng=0, max_products=3)


def test_exact_invariant_subspace():
    # a rank-3 operator: the Krylov space closes after one block; the 3 nonzero eigenvalues are exact
    rng = np.random.default_rng(0)
    U, _ = np.linalg.qr(rng.standard_normal((40, 3)))
    S = U @ np.diag([3.0, 2.0, 1.0]) @ U.T
    res = block_eigsh(lambda X: S @ X, 40, 3, like=S, rng=0, block=4)
    np.testing.assert_allclose(to_numpy(res.eigenvalues), [3.0, 2.0, 1.0], atol=1e-13)
    more = block_eigsh(lambda X: S @ X, 40, 5, like=S, rng=0, block=4)  # basis 4 + 3: the zeros come too
    np.testing.assert_allclose(to_numpy(more.eigenvalues), [3.0, 2.0, 1.0, 0.0, 0.0], atol=1e-13)
    # one start vector of a rank-1 operator: the Krylov space has dimension 2 < k
    u = U[:, :1]
    with pytest.raises(ConvergenceError, match="invariant subspace of dimension 2 < k = 3"):
        block_eigsh(lambda X: u @ (u.T @ X), 40, 3, like=S, rng=0, block=1)


def test_default_sizes():
    assert block_size(10, 20000) == 20 and block_size(22, 20000) == 32 and block_size(2, 20000) == 12
    assert block_size(30, 20000) == 38 and block_size(49, 20000) == 57  # 8 guard vectors past k from 32 on
    assert block_size(10, 12) == 3  # at most n // 4
    assert basis_size(10, 20, 20000) == 170 and basis_size(10, 20, 100) == 100


@pytest.mark.parametrize("cut", [10, pytest.param(30, marks=pytest.mark.slow)])
def test_products_do_not_blow_up_when_k_cuts_a_multiplet(cut):
    # the spectrum of a kernel on S^2: multiplets 1, 3, 5, 7, ... (2l + 1), split by 1e-6 relative, then a tail;
    # k = cut lies inside a multiplet, k = cut - 1 or the end of that multiplet does not. Measured products
    # (n = 200): cut 10: 18 / 19 / 15 for k = 9, 10, 16 with the default width, 23 / 31 / 20 with width k (no
    # guard vectors: the blow-up); cut 30: 14 / 15 / 13, and 18 / 17 / 13 with width k.
    rng = np.random.default_rng(3)
    values = np.concatenate([np.full(2 * l + 1, 0.9**l) * (1 + 1e-6 * rng.standard_normal(2 * l + 1)) for l in range(8)])
    n = 200
    lam = np.concatenate([np.sort(values)[::-1], 0.4 * rng.random(n - values.size)])
    U, _ = np.linalg.qr(rng.standard_normal((n, n)))
    S = (U * lam) @ U.T
    ends = np.cumsum([2 * l + 1 for l in range(8)])
    after = int(ends[ends > cut][0])  # the end of the multiplet k = cut falls in
    counts = {}
    for k in (cut - 1, cut, after):
        res = block_eigsh(lambda X: S @ X, n, k, like=S, rng=0)
        np.testing.assert_allclose(to_numpy(res.eigenvalues), lam[:k], rtol=0, atol=1e-12)
        counts[k] = res.products
    assert counts[cut] <= max(counts[cut - 1], counts[after]) + 2, counts


@pytest.mark.gpu
def test_gpu_parity(circle_S, random_circle):
    import cupy

    from spectral import KernelOperator, markov_spectrum

    S = cupy.asarray(circle_S)
    res = block_eigsh(lambda X: S @ X, S.shape[0], 10, like=S, rng=0)
    assert isinstance(res.vectors, cupy.ndarray)
    ref = np.linalg.eigvalsh(circle_S)[::-1][:10]
    assert np.max(np.abs(to_numpy(res.eigenvalues) - ref)) <= 1e-12
    # the kernel operator's tiles, products and the solver stay on the device
    x, C, kern = random_circle
    spec = markov_spectrum(KernelOperator(cupy.asarray(x), kernel=kern, distance=Circle().distance), 10, rng=0)
    assert isinstance(spec.eigenvalues, cupy.ndarray)
    np.testing.assert_allclose(to_numpy(spec.eigenvalues), to_numpy(markov_spectrum(C, 10).eigenvalues), atol=1e-12)
