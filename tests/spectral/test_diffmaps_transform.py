"""Tests for DiffusionMap.transform (Nystrom out-of-sample extension), tau = 0 and the sign rule.

Exact references:

* at a training point, with its own row of ``C``, the extension is its coordinate: the eigen-identity
  ``lambda psi = A psi`` (round-off, 1e-12 relative);
* on an equispaced circle grid the heat-kernel matrix is circulant, its eigenvectors are the sampled
  Fourier modes, and the extension of a mode to any angle is ``sqrt(2) cos(k theta + c)`` (probability
  normalisation) up to the aliasing terms ``exp(-2 pi^2 eps / h^2)`` of Poisson summation, < 1e-80 here;
* with ``a = 1`` on a non-uniform (von Mises) quantile grid the extended coordinates converge to the
  Laplace-Beltrami eigenfunctions ``cos k theta, sin k theta`` at rate O(eps) (Coifman & Lafon 2006);
  compared by principal angles between the span of each degenerate pair and the exact modes (the
  pair is rotated arbitrarily inside its eigenspace).
"""

import functools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.linalg import subspace_angles
from scipy.spatial.distance import cdist

from manifolds import Circle, VonMises
from spectral import KernelOperator, SparseScores, diffusion_map, heat_kernel, heat_kernel_sparse, knn_kernel, pairwise
from spectral.diffmaps import SIGN_TIE
from spectral.testing import assert_close
from spectral.floor.validation import InputError

EPS = np.finfo(np.float64).eps


def emb(theta):
    return np.column_stack([np.cos(theta), np.sin(theta)])


def grid(n):
    return 2 * np.pi * np.arange(n) / n


@pytest.fixture(scope="module")
def von_mises():
    """Training points on the von Mises (kappa = 1) quantile grid, n = 300, and 300 random new angles."""
    x = VonMises(kappa=1.0).quantile_grid(300)
    s = np.sort(np.random.default_rng(0).uniform(0, 2 * np.pi, 300))
    return x, s


# ----------------------------------------------------------------------------- training points


@pytest.mark.parametrize("a", [0.0, 0.5, 1.0])
@pytest.mark.parametrize("tau", [0, 1, 3])
@pytest.mark.parametrize("normalization", ["probability", "paper"])
def test_extension_of_training_points_is_their_coordinates(von_mises, a, tau, normalization):
    x, _ = von_mises
    C = heat_kernel(cdist(x, x), eps=0.01)
    dm = diffusion_map(C, n_components=6, a=a, tau=tau, normalization=normalization)
    got = dm.transform(C)
    scale = np.max(np.abs(dm.coordinates))
    # the eigen-identity lambda psi = A^(a) psi up to the solver's residual: measured <= 1.3e-14 relative
    assert np.max(np.abs(got - dm.coordinates)) <= 1e-12 * scale
    lam = dm.eigenvalues[1:]
    # negative controls: pydiffmap's nystroem_oos (no 1 / lambda_j) is off by the factor lambda_j;
    # leaving out the q^-a weights (a > 0: the density varies by e^2) moves the coordinates too
    assert np.max(np.abs(got * lam - dm.coordinates)) > 1e-4 * scale
    if a > 0:
        rows = C / C.sum(axis=1, keepdims=True)
        plain = rows @ dm.psi[:, 1:] * lam ** (tau - 1.0)
        assert np.max(np.abs(plain - dm.coordinates)) > 1e-3 * scale


def test_tau_zero_gives_the_eigenvectors(von_mises):
    x, s = von_mises
    C = heat_kernel(cdist(x, x), eps=0.01)
    dm = diffusion_map(C, n_components=299, tau=0)
    assert np.array_equal(dm.coordinates, dm.psi[:, 1:])
    # tau = 0 over all n pairs: sum_j psi_j phi_j^T = I (bi-orthonormality), measured 9e-16
    assert np.max(np.abs(dm.transition_matrix() - np.eye(300))) <= 1e-12
    # the trailing eigenvalues are round-off (heat kernel, 300 points): tau = 0 cannot divide by them
    assert np.min(np.abs(dm.eigenvalues)) < 1e-14
    rows = heat_kernel(cdist(emb(s[:5]), x), eps=0.01)
    with pytest.raises(InputError, match="divides by lambda_j"):
        dm.transform(rows)
    # transform at another time from the same map: lambda^tau psi
    dm = diffusion_map(C, n_components=10, tau=0)
    t2 = dm.transform(rows, tau=2)
    assert np.max(np.abs(t2 - dm.transform(rows) * dm.eigenvalues[1:] ** 2)) <= 1e-12


# ----------------------------------------------------------------------------- exact Fourier modes


@pytest.mark.parametrize("tau", [0, 2])
def test_circle_grid_extension_is_exact_fourier_modes(tau):
    n, eps = 200, 0.01  # sqrt(eps) = 3.2 grid spacings; aliasing exp(-2 pi^2 eps / h^2) = e^-200
    x = emb(grid(n))
    C = heat_kernel(cdist(x, x), eps=eps)
    dm = diffusion_map(C, n_components=6, tau=tau)
    s = np.random.default_rng(1).uniform(0, 2 * np.pi, 500)
    ext = dm.transform(heat_kernel(cdist(emb(s), x), eps=eps))
    for k, cols in ((1, [0, 1]), (2, [2, 3]), (3, [4, 5])):
        B = np.column_stack([np.cos(k * s), np.sin(k * s)])
        coef = np.linalg.lstsq(B, ext[:, cols], rcond=None)[0]
        # inside span{cos k theta, sin k theta}: measured residual <= 6e-14
        assert np.max(np.abs(B @ coef - ext[:, cols])) <= 1e-11, k
        # amplitude sqrt(2) lambda_k^tau (psi^T diag(pi) psi = 1 with pi uniform): measured 1e-14
        lam = dm.eigenvalues[cols[0] + 1]
        assert np.max(np.abs(coef.T @ coef - 2 * lam ** (2 * tau) * np.eye(2))) <= 1e-11, k
        # negative control: the neighbouring Fourier index does not fit
        wrong = np.column_stack([np.cos((k + 1) * s), np.sin((k + 1) * s)])
        assert np.max(np.abs(wrong @ np.linalg.lstsq(wrong, ext[:, cols], rcond=None)[0] - ext[:, cols])) > 0.5


def test_laplace_beltrami_modes_on_a_nonuniform_sample(von_mises):
    x, s = von_mises
    angles = {}
    for a in (0.0, 0.5, 1.0):
        for eps in (0.003, 0.006):
            C = heat_kernel(cdist(x, x), eps=eps)
            dm = diffusion_map(C, n_components=4, a=a)
            ext = dm.transform(heat_kernel(cdist(emb(s), x), eps=eps))
            angles[a, eps] = [np.max(subspace_angles(ext[:, cols], np.column_stack([np.cos(k * s), np.sin(k * s)])))
                              for k, cols in ((1, [0, 1]), (2, [2, 3]))]
    # a = 1: the Laplace-Beltrami eigenfunctions cos/sin k theta whatever the density; the bias is
    # O(eps): measured 0.72 eps for k = 1 and 0.56 eps for k = 2 at n = 300 and 600 alike (no
    # sampling error on the quantile grid): 4.3e-3 and 3.4e-3 at eps = 6e-3, tolerance 1e-2
    assert max(angles[1.0, 0.006]) <= 1e-2
    # ... and halves with eps (measured ratio 0.50)
    assert max(np.array(angles[1.0, 0.003]) / np.array(angles[1.0, 0.006])) <= 0.6
    # negative control: a = 0 and 1/2 converge to other operators' eigenfunctions (measured 0.38-0.77 rad)
    assert min(angles[0.0, 0.006] + angles[0.5, 0.006]) > 0.3


# ----------------------------------------------------------------------------- the ways of giving rows


def test_kernel_path_equals_rows_path_in_blocks(von_mises):
    x, s = von_mises
    circle = Circle()
    kern = functools.partial(heat_kernel, eps=0.01)
    C = pairwise(x, kernel=kern, distance=circle.distance)
    dm = diffusion_map(C, n_components=4, a=1.0, tau=2)
    y = emb(s)
    by_rows = dm.transform(kern(circle.distance(y, x)))
    for block_rows in (None, 7):
        by_kernel = dm.transform(points=y, x=x, kernel=kern, distance=circle.distance, block_rows=block_rows)
        assert np.max(np.abs(by_kernel - by_rows)) <= 1e-15 * np.max(np.abs(by_rows)) * 10


def test_sparse_rows_and_sparse_training(von_mises):
    x, s = von_mises
    eps, cutoff = 0.01, 6.0
    y = emb(s)
    dense = diffusion_map(heat_kernel(cdist(x, x), eps=eps), n_components=4, a=1.0)
    sparse = diffusion_map(heat_kernel_sparse(x, eps=eps, cutoff=cutoff), n_components=4, a=1.0, rng=0)
    # same map (signs by the same rule): the cutoff drops entries below exp(-18) = 1.5e-8 of the largest,
    # which moves the a = 1 coordinates by 3.6e-7 (measured, also for the new points)
    assert np.max(np.abs(sparse.coordinates - dense.coordinates)) <= 2e-6
    rows = heat_kernel_sparse(y, eps=eps, cutoff=cutoff, y=x)
    assert isinstance(sparse.transform(rows), np.ndarray)
    assert np.max(np.abs(sparse.transform(rows) - dense.transform(heat_kernel(cdist(y, x), eps=eps)))) <= 2e-6
    # scipy sparse rows directly; training rows reproduce the coordinates on the sparse path too
    assert np.max(np.abs(sparse.transform(rows.matrix) - sparse.transform(rows))) == 0.0
    train = heat_kernel_sparse(x, eps=eps, cutoff=cutoff)
    assert np.max(np.abs(sparse.transform(train) - sparse.coordinates)) <= 1e-12


def test_knn_symmetrisation_shows_at_training_points():
    # documented: directed rows of a training point are not its symmetrised row; the extension of a
    # training point by its directed kNN row differs from its coordinate by the symmetrisation
    x = VonMises(kappa=1.0).sample(400, rng=3)
    W = knn_kernel(x, k=20, eps=0.005)
    dm = diffusion_map(W, n_components=2, a=1.0, rng=0)
    scale = np.max(np.abs(dm.coordinates))
    assert np.max(np.abs(dm.transform(W) - dm.coordinates)) <= 1e-12 * scale  # its own (symmetric) rows
    directed = knn_kernel(x, k=20, eps=0.005, y=x)
    gap = np.max(np.abs(dm.transform(directed) - dm.coordinates))
    assert 1e-9 * scale < gap < 0.1 * scale  # measured 1.5e-2 of the largest coordinate


# ----------------------------------------------------------------------------- signs


def test_sign_rule_is_the_same_on_every_solver_path():
    # an interval grid: cos(j pi t) has +max and -max at the two ends (an exact tie): plain argmax
    # would follow round-off; the rule makes the first end positive on every path
    t = np.linspace(0.0, 1.0, 120)
    C = heat_kernel(np.abs(t[:, None] - t[None, :]), eps=1e-3)
    maps = {"dense": diffusion_map(C, n_components=5, method="dense"),
            "lanczos": diffusion_map(C, n_components=5, method="lanczos", rng=3),
            "sparse": diffusion_map(SparseScores(sp.csr_array(C), symmetric=True), n_components=5, rng=4)}
    ref = maps["dense"].psi
    for name, dm in maps.items():
        # measured <= 1e-13 between paths (eigenvalue gaps >= 5e-3)
        assert np.max(np.abs(dm.psi - ref)) <= 1e-9, name
        mag = np.abs(dm.psi)
        first = np.argmax(mag >= (1 - SIGN_TIE) * mag.max(axis=0), axis=0)
        assert np.all(dm.psi[first, np.arange(6)] > 0), name
    assert np.all(ref[0, 1:] > 0)  # the tie at the two ends goes to the first point
    # bi-orthonormality survives the flips
    dm = diffusion_map(C, n_components=119)
    assert np.max(np.abs(dm.phi.T @ dm.psi - np.eye(120))) <= 1e-12


# ----------------------------------------------------------------------------- operators and backends


def test_matrix_free_operator_path(von_mises):
    x, _ = von_mises
    circle = Circle()
    kern = functools.partial(heat_kernel, eps=0.01)
    op = KernelOperator(x, kernel=kern, distance=circle.distance)
    dense = diffusion_map(pairwise(x, kernel=kern, distance=circle.distance), n_components=3)
    free = diffusion_map(op, n_components=3, rng=0)
    # block solver residual ~1.5e-8 / gap: measured 1.5e-6 on the coordinates
    assert np.max(np.abs(free.coordinates - dense.coordinates)) <= 1e-5
    with pytest.raises(InputError, match="a > 0 needs stored scores"):
        diffusion_map(op, n_components=3, a=0.5)


def test_transform_backend_neutral(xp, von_mises):
    x, s = von_mises
    C = heat_kernel(cdist(x, x), eps=0.01)
    R = heat_kernel(cdist(emb(s[:20]), x), eps=0.01)
    ref = diffusion_map(C, n_components=3, a=0.5, tau=2).transform(R)
    dm = diffusion_map(xp.asarray(C), n_components=3, a=0.5, tau=2)
    got = dm.transform(xp.asarray(R))
    # (a) parity: 4 sqrt(eps) on O(1) coordinates
    assert_close(got, xp.asarray(ref), atol=4 * np.sqrt(EPS))


# ----------------------------------------------------------------------------- bad input


def test_transform_bad_input(von_mises):
    x, _ = von_mises
    C = heat_kernel(cdist(x, x), eps=0.01)
    dm = diffusion_map(C, n_components=3)
    with pytest.raises(InputError, match="either scores"):
        dm.transform()
    with pytest.raises(InputError, match="either scores"):
        dm.transform(C, points=x)
    with pytest.raises(InputError, match="needs points, x"):
        dm.transform(points=x, x=x, kernel=abs)
    with pytest.raises(InputError, match="x must hold the 300 training points"):
        dm.transform(points=x, x=x[:10], kernel=abs, distance=cdist)
    with pytest.raises(InputError, match="300 columns"):
        dm.transform(C[:, :10])
    with pytest.raises(InputError, match="nonnegative"):
        dm.transform(-C[:2])
    with pytest.raises(InputError, match="finite"):
        dm.transform(np.full((2, 300), np.nan))
    with pytest.raises(InputError, match="tau must be"):
        dm.transform(C, tau=-1)
    far = heat_kernel_sparse(np.array([[1.0, 0.0], [5.0, 5.0]]), eps=0.01, y=x)  # on the circle, and far off
    with pytest.raises(InputError, match="new point 1 has zero kernel weight"):
        dm.transform(far)
    # a zero eigenvalue cannot be divided by (tau < 1); tau >= 1 divides by nothing
    B = np.kron(np.eye(2), np.ones((3, 3))) + 1e-3  # rank-2 plus a constant: eigenvalues 0 below the top two
    dz = diffusion_map(B, n_components=3, tau=1)
    assert abs(float(dz.eigenvalues[2])) <= 1e-14
    dz.transform(B[:1])
    with pytest.raises(InputError, match="divides by lambda_j"):
        dz.transform(B[:1], tau=0.5)


def test_sparse_diffusion_map_bad_input():
    x = np.random.default_rng(0).standard_normal((40, 2))
    with pytest.raises(InputError, match="knn_kernel"):
        diffusion_map(knn_kernel(x, k=3, eps=1.0, symmetrize="none"), n_components=2)
    with pytest.raises(InputError, match=r"n_components must be an integer in \[1, 37\]"):
        diffusion_map(knn_kernel(x, k=3, eps=1.0), n_components=38)
    with pytest.raises(InputError, match="square"):
        diffusion_map(knn_kernel(x[:10], k=3, eps=1.0, y=x), n_components=2)
