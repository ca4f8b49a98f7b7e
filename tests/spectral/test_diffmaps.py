"""Tests for spectral.diffmaps: FNA-8 (bi-orthonormality, spectral decomposition) and
FNA-9 (diffusion distance = Euclidean distance in diffusion coordinates; the constant
factor sqrt(sum C) in the paper's literal normalisation; truncation error >= 0); the
density normalisation ``a`` against a dense construction and against the limit operators.

References are independent of the eigen-decomposition: ``numpy.linalg.matrix_power``
for A^tau, explicit sums over y for the distance of eq. (36), ``numpy.linalg.eig`` of the
hand-built ``A^(a)``, a Fourier-Galerkin discretisation of the limit operator.  Tolerances:
the ledger's 1e-12 relative (FNA-8/9), measured 1e-15..1e-13.
"""

import functools

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from manifolds import Circle
from manifolds import VonMises
from spectral import diffusion_distance, diffusion_map, fna_kernel, heat_kernel, pairwise
from spectral.floor.validation import InputError
from spectral.testing import assert_close

EPS = np.finfo(np.float64).eps
CIRCLE = Circle()


def circle_scores(n, alpha, *, scale=0.3, seed=1):
    x = CIRCLE.sample(n, rng=seed)
    kern = functools.partial(fna_kernel, alpha=alpha, scale=scale, dim=1)
    return pairwise(x, kernel=kern, distance=CIRCLE.distance)


def gaussian_scores(n, alpha, *, d=8, seed=2):
    x = np.random.default_rng(seed).standard_normal((n, d))
    return fna_kernel(cdist(x, x), alpha=alpha, scale=np.sqrt(d), dim=d)


def pairwise_sq(Y):
    """Explicit ||Y_i - Y_j||^2 (no Gram-matrix cancellation)."""
    return ((Y[:, None, :] - Y[None, :, :]) ** 2).sum(axis=-1)


def eq36_reference(A, tau, phi0):
    """Eq. (36) by explicit sums over y, with numpy's matrix_power: independent of the module."""
    P = np.linalg.matrix_power(A, tau)
    return np.array([np.sum((P[i] - P) ** 2 / phi0, axis=1) for i in range(len(A))])  # row i: every j at once


# ----------------------------------------------------------------------------- FNA-8


#: every point set and alpha at n = 60; at n = 500 the circle at 1.2 and the Gaussian points at 2.0 in the default
#: tier, the other two (0.15 s each) in the slow tier
@pytest.mark.parametrize("n, alpha, points", [
    (60, 1.2, "circle"), (60, 2.0, "circle"), (60, 1.2, "gaussian"), (60, 2.0, "gaussian"),
    (500, 1.2, "circle"), (500, 2.0, "gaussian"),
    pytest.param(500, 2.0, "circle", marks=pytest.mark.slow), pytest.param(500, 1.2, "gaussian", marks=pytest.mark.slow),
])
def test_fna8_biorthonormal_and_spectral_decomposition(n, alpha, points):
    C = circle_scores(n, alpha) if points == "circle" else gaussian_scores(n, alpha)
    A = C / C.sum(axis=1, keepdims=True)
    dm = diffusion_map(C, n_components=n - 1)
    psi, phi = dm.psi, dm.phi
    normA = np.linalg.norm(A, 2)
    # bi-orthonormality <phi_i, psi_j> = delta_ij (eq. 35); ledger tolerance 1e-12, measured ~2e-15
    assert np.max(np.abs(phi.T @ psi - np.eye(n))) <= 1e-12
    # probability normalisation: psi^T diag(pi) psi = I
    assert np.max(np.abs(psi.T @ (dm.stationary[:, None] * psi) - np.eye(n))) <= 1e-12
    for tau in (1, 3, 10):
        ref = np.linalg.matrix_power(A, tau)
        rec = dm.transition_matrix(tau)
        assert np.max(np.abs(rec - ref)) <= 1e-12 * normA, tau
    # negative control: the index clash of eq. (20) as printed (psi_i phi_i with the same point)
    # or psi psi^T instead of psi phi^T do not reconstruct A
    wrong = (psi * dm.eigenvalues) @ psi.T
    assert np.max(np.abs(wrong - A)) > 1e-3 * normA


def test_paper_normalisation_is_also_biorthonormal():
    C = circle_scores(60, 1.2)
    dm = diffusion_map(C, n_components=59, normalization="paper")
    assert np.max(np.abs(dm.phi.T @ dm.psi - np.eye(60))) <= 1e-12
    # but phi_0 is not a probability: it sums to sqrt(sum C) (= sum D / sqrt(sum D))
    assert dm.stationary.sum() == pytest.approx(np.sqrt(C.sum()), rel=1e-13)
    assert abs(dm.stationary.sum() - 1.0) > 1.0


# ----------------------------------------------------------------------------- FNA-9


@pytest.mark.parametrize("n", [60, 200])
@pytest.mark.parametrize("tau", [1, 3])
def test_fna9_identity_probability_normalisation(n, tau):
    C = circle_scores(n, 1.2)
    A = C / C.sum(axis=1, keepdims=True)
    dm = diffusion_map(C, n_components=n - 1, tau=tau)
    pi = C.sum(axis=1) / C.sum()
    ref = eq36_reference(A, tau, pi)
    rhs = pairwise_sq(dm.coordinates)
    # ledger: 1e-12 relative (to the largest distance); measured ~1e-14
    assert np.max(np.abs(rhs - ref)) <= 1e-12 * ref.max()
    lhs = diffusion_distance(A, tau, squared=True)  # stationary solved from A itself
    assert np.max(np.abs(lhs - ref)) <= 1e-12 * ref.max()
    assert np.max(np.abs(diffusion_distance(A, tau) ** 2 - ref)) <= 1e-12 * ref.max()
    # negative control: the paper's literal coordinates miss by the factor sqrt(sum C) ~ 18
    paper = diffusion_map(C, n_components=n - 1, tau=tau, normalization="paper")
    assert np.max(np.abs(pairwise_sq(paper.coordinates) - ref)) > 0.5 * ref.max()


@pytest.mark.parametrize("tau", [1, 3])
def test_fna9_paper_normalisation_constant_ratio(tau):
    n = 60
    C = circle_scores(n, 1.2)
    A = C / C.sum(axis=1, keepdims=True)
    paper = diffusion_map(C, n_components=n - 1, tau=tau, normalization="paper")
    lhs = diffusion_distance(A, tau, squared=True, stationary=paper.stationary)  # w = 1 / phi_0 (eq. 35)
    ref = eq36_reference(A, tau, paper.stationary)
    assert np.max(np.abs(lhs - ref)) <= 1e-12 * ref.max()
    rhs = pairwise_sq(paper.coordinates)
    off = ~np.eye(n, dtype=bool)
    ratio = lhs[off] / rhs[off]
    # every pair: LHS / RHS = sqrt(sum_ij C_ij) (ledger FNA-9: 14.777 there); relative 1e-12,
    # measured <= 8e-14 at n = 60 (closest pairs lose digits to the differences: 1.9e-12 at
    # n = 200, tau = 3, hence n = 60 here)
    assert np.max(np.abs(ratio / np.sqrt(C.sum()) - 1.0)) <= 1e-12
    assert np.sqrt(C.sum()) > 2  # the factor is far from 1: a real discrepancy, not round-off


def test_fna9_truncation_error_nonnegative():
    n, tau, m = 200, 1, 2
    C = circle_scores(n, 1.2)
    A = C / C.sum(axis=1, keepdims=True)
    full = diffusion_map(C, n_components=n - 1, tau=tau)
    trunc = diffusion_map(C, n_components=m, tau=tau)
    D2 = diffusion_distance(A, tau, squared=True)
    gap = D2 - pairwise_sq(trunc.coordinates)
    tail = pairwise_sq(full.coordinates[:, m:])
    # = sum_{k > m} lambda_k^(2 tau) (psi_k(i) - psi_k(j))^2 >= 0 up to round-off of D2
    assert np.min(gap) >= -1e-12 * D2.max()
    assert np.max(np.abs(gap - tail)) <= 1e-12 * D2.max()
    assert np.max(gap) > 1e-6 * D2.max()  # the truncation genuinely loses something


def test_truncated_map_matches_leading_full_coordinates():
    C = circle_scores(200, 1.2)
    full = diffusion_map(C, n_components=199, tau=2.0)
    part = diffusion_map(C, n_components=5, tau=2.0, method="lanczos", rng=0)
    # same sign rule (first largest-|psi| entry positive, SIGN_TIE) on both paths; eigenvalue gaps >= 1e-3 here
    assert np.max(np.abs(part.coordinates - full.coordinates[:, :5])) <= 1e-9


# ----------------------------------------------------------------------------- backends


def test_diffusion_map_and_distance_backend_neutral(xp):
    C = circle_scores(60, 1.2)
    A = C / C.sum(axis=1, keepdims=True)
    ref = diffusion_map(C, n_components=4, tau=2)
    got = diffusion_map(xp.asarray(C), n_components=4, tau=2)
    # (a) parity: 4 sqrt(eps) on O(1) coordinates and distances
    assert_close(got.coordinates, xp.asarray(ref.coordinates), atol=4 * np.sqrt(EPS))
    assert_close(diffusion_distance(xp.asarray(A), 2), xp.asarray(diffusion_distance(A, 2)), atol=4 * np.sqrt(EPS))


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_components": 0}, r"n_components must be an integer in \[1, 59\]"),
        ({"n_components": 60}, r"n_components must be an integer in \[1, 59\]"),
        ({"n_components": 2.0}, "n_components must be an integer"),
        ({"n_components": 2, "tau": -0.5}, r"tau must be in \[0.0, inf\)"),
        ({"n_components": 2, "normalization": "unit"}, "normalization must be one of"),
    ],
)
def test_diffusion_map_bad_input(kwargs, match):
    with pytest.raises(InputError, match=match):
        diffusion_map(circle_scores(60, 1.2), **kwargs)


def test_diffusion_map_refuses_asymmetric_and_fractional_tau_with_negative_eigenvalues(rng):
    C = rng.uniform(0.1, 1.0, size=(20, 20))
    with pytest.raises(InputError, match="symmetric"):
        diffusion_map(C, n_components=3)
    # geodesic Gaussian (alpha = 2, kappa = 2): negative eigenvalues (FNA-7), lambda^0.5 not real
    Cg = circle_scores(100, 2.0, scale=2.0)
    with pytest.raises(InputError, match="tau must be an integer"):
        diffusion_map(Cg, n_components=99, tau=0.5)
    diffusion_map(Cg, n_components=99, tau=1)  # integer tau is fine


def test_diffusion_distance_bad_input():
    A = np.array([[0.5, 0.5], [0.25, 0.75]])
    with pytest.raises(InputError, match="tau must be an integer"):
        diffusion_distance(A, 1.5)
    with pytest.raises(InputError, match="row-stochastic"):
        diffusion_distance(2 * A, 1)
    with pytest.raises(InputError, match="stationary must have shape"):
        diffusion_distance(A, 1, stationary=np.ones(3))
    with pytest.raises(InputError, match="positive"):
        diffusion_distance(A, 1, stationary=np.array([1.0, 0.0]))
    reducible = np.eye(3)
    with pytest.raises(InputError, match="stationary"):
        diffusion_distance(reducible, 1)


def test_memory_guard(monkeypatch):
    import spectral.floor.memory as memory
    from spectral import DenseMemoryError

    A = np.full((50, 50), 1 / 50)
    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 3 * 50 * 50 * 8)
    with pytest.raises(DenseMemoryError, match="diffusion distances"):
        diffusion_distance(A, 1)


# ----------------------------------------------------------------------------- density normalisation a


def von_mises_heat(n, eps, *, seed=None):
    """Heat scores (chordal distance) on von Mises (kappa = 1) points: random (seed) or the quantile grid."""
    law = VonMises(kappa=1.0)
    x = law.sample(n, rng=seed) if seed is not None else law.quantile_grid(n)
    return heat_kernel(np.sqrt(pairwise_sq(x)), eps=eps)


def dense_density_normalised(C, a):
    """Independent construction of A^(a) = rownorm(Q^-a C Q^-a), Q = C 1, from its definition."""
    q = C.sum(axis=1)
    Ca = C / np.outer(q**a, q**a)
    return Ca / Ca.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("a", [0.0, 0.5, 1.0])
def test_density_normalisation_against_dense_construction(a):
    n, m = 80, 6
    C = von_mises_heat(n, 0.05, seed=4)  # a non-uniform density: the degrees vary by a factor ~5
    A = dense_density_normalised(C, a)
    w, V = np.linalg.eig(A)  # general eigensolver on A itself, not the symmetric conjugate
    order = np.argsort(-w.real)
    w, V = w.real[order], V.real[:, order]
    dm = diffusion_map(C, n_components=m, a=a)
    assert dm.a == a
    # eigenvalues: eig of the non-normal A is accurate to n eps cond(V) (cond ~ sqrt(max D / min D) ~ 3)
    assert np.max(np.abs(dm.eigenvalues - w[: m + 1])) <= 1e-12
    # right eigenvectors of A^(a), column by column, up to sign and scale (psi_0 = 1)
    for j in range(m + 1):
        ref = V[:, j] / np.linalg.norm(V[:, j])
        got = dm.psi[:, j] / np.linalg.norm(dm.psi[:, j])
        assert min(np.max(np.abs(got - ref)), np.max(np.abs(got + ref))) <= 1e-9, j  # gaps >= 5e-3 here
    # stationary law: the left eigenvector of A^(a) for eigenvalue 1, normalised to a probability
    wl, U = np.linalg.eig(A.T)
    pi = U[:, np.argmin(np.abs(wl - 1.0))].real
    pi /= pi.sum()
    assert np.max(np.abs(dm.stationary - pi)) <= 1e-12
    # diffusion distance identity (FNA eq. 37) for A^(a), all n - 1 coordinates, by explicit sums
    full = diffusion_map(C, n_components=n - 1, a=a, tau=2)
    ref = eq36_reference(A, 2, pi)
    assert np.max(np.abs(pairwise_sq(full.coordinates) - ref)) <= 1e-12 * ref.max()
    # negative control: another a changes the spectrum by far more than the tolerance
    other = diffusion_map(C, n_components=m, a=1.0 - a if a != 0.5 else 0.0)
    assert np.max(np.abs(other.eigenvalues - dm.eigenvalues)) > 1e-4


def limit_operator_eigenvalues(a, kappa, count, modes=40):
    """Eigenvalues of -(d^2/dt^2 + 2 (1 - a) (log p)' d/dt) on S^1, p von Mises: Fourier-Galerkin.

    ``(log p)' = -kappa sin t`` and ``sin t e^{imt} = (e^{i(m+1)t} - e^{i(m-1)t}) / (2i)``, so the
    operator maps ``e^{imt}`` to ``-m^2 e^{imt} - (1 - a) kappa m (e^{i(m+1)t} - e^{i(m-1)t})``; the
    truncation at |m| <= 40 is exact to round-off for the lowest modes (coefficients decay like
    kappa^m / m!).
    """
    m = np.arange(-modes, modes + 1)
    L = np.diag(-(m.astype(float) ** 2))
    L[np.arange(1, m.size), np.arange(m.size - 1)] = -(1 - a) * kappa * m[:-1]
    L[np.arange(m.size - 1), np.arange(1, m.size)] = (1 - a) * kappa * m[1:]
    return np.sort(np.linalg.eigvals(-L).real)[1 : count + 1]


def test_generator_scaling_stated_in_the_docstring():
    # 2 (1 - lambda_j) / eps -> eigenvalues of -(Delta + 2 (1 - a) grad log p . grad): k^2 at a = 1
    # (Laplace-Beltrami, whatever p), Fokker-Planck at a = 1/2, the graph Laplacian's limit at a = 0.
    # Quantile grid of von Mises(kappa = 1), n = 600, eps = 6e-3 (chordal distance). The bias is
    # O(eps): measured max relative error 4.5e-3 (a = 1), 3.1e-3 (1/2), 4.3e-3 (0), halving with eps;
    # tolerance 1.5e-2. The limits differ by 16-65 % between the three a.
    eps = 6e-3
    C = von_mises_heat(600, eps)
    refs = {a: limit_operator_eigenvalues(a, 1.0, 4) for a in (0.0, 0.5, 1.0)}
    assert np.max(np.abs(refs[1.0] - [1.0, 1.0, 4.0, 4.0])) <= 1e-12  # a = 1: the circle's k^2
    for a, ref in refs.items():
        dm = diffusion_map(C, n_components=4, a=a, method="lanczos", rng=0)
        mu = 2.0 * (1.0 - dm.eigenvalues[1:]) / eps
        assert np.max(np.abs(mu / ref - 1.0)) <= 1.5e-2, (a, mu, ref)
        # negative controls: the other a's limit, and the scaling without the factor 2
        for b, other in refs.items():
            if b != a:
                assert np.max(np.abs(mu / other - 1.0)) > 0.1, (a, b)
        assert np.max(np.abs(0.5 * mu / ref - 1.0)) > 0.4


def test_density_normalisation_bad_input():
    C = circle_scores(30, 1.2)
    for bad in (-0.1, 1.5, True, float("nan"), "1"):
        with pytest.raises(InputError, match="a must be"):
            diffusion_map(C, n_components=2, a=bad)


def test_repr_is_short():
    dm = diffusion_map(circle_scores(200, 1.2), n_components=3)
    text = repr(dm)
    assert len(text) < 300, text
    assert text.startswith("DiffusionMap(n=200, n_components=3, a=0, tau=1, normalization='probability'")
    assert "eigenvalues=[1, " in text
    assert len(repr(dm.spectrum)) < 300
