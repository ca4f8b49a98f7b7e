"""Tests for spectral.normalize: N_R, a-normalisation, Sinkhorn, symmetric conjugate.

References are computed independently with plain NumPy (diag matrices, eigvals)
or closed forms (a circulant kernel is already doubly stochastic after row
normalisation).  Tolerances of kind (a) (exact algebra): a few ulps times the
number of summed terms, written next to each assertion.
"""

import numpy as np
import pytest

from spectral.floor.backend import to_numpy
from spectral.normalize import (
    SinkhornConvergenceWarning,
    anisotropic_normalize,
    row_normalize,
    sinkhorn,
    symmetric_conjugate,
)
from spectral.floor.validation import InputError
from spectral.testing import assert_close

EPS = np.finfo(np.float64).eps


def circle_power_law(theta, *, alpha=1.2, scale=0.3):
    """Inline FNA test kernel (1 + d/s)^-(1+alpha), d the wrapped angle difference (geodesic on S^1)."""
    d = np.abs(np.angle(np.exp(1j * (theta[:, None] - theta[None, :]))))
    return (1.0 + d / scale) ** (-(1.0 + alpha))


@pytest.fixture
def random_kernel(rng):
    theta = np.sort(rng.uniform(0, 2 * np.pi, 80))
    return circle_power_law(theta)


def test_row_normalize_matches_numpy_and_backends(xp, rng):
    C = rng.uniform(0.1, 2.0, size=(7, 11))  # rectangular
    A = row_normalize(xp.asarray(C))
    ref = C / C.sum(axis=1, keepdims=True)
    # (a) exact algebra: one division per entry after an 11-term sum: <= 11 ulp
    assert_close(A, xp.asarray(ref), rtol=0, atol=11 * EPS)
    # negative control: column normalisation is not row normalisation
    wrong = C / C.sum(axis=0, keepdims=True)
    assert np.max(np.abs(to_numpy(A) - wrong)) > 1e3 * 11 * EPS
    assert np.max(np.abs(to_numpy(A).sum(axis=1) - 1.0)) <= 11 * EPS


@pytest.mark.parametrize(
    "bad, match",
    [
        (np.array([1.0, 2.0]), "2-D"),
        (np.array([[1.0, np.nan], [1.0, 1.0]]), "finite"),
        (np.array([[1.0, np.inf], [1.0, 1.0]]), "finite"),
        (np.array([[1.0, -0.5], [1.0, 1.0]]), "nonnegative"),
        (np.array([[1.0, 1.0], [0.0, 0.0], [2.0, 1.0]]), "row 1"),
        (np.array([[1, 2], [3, 4]]), "floating"),
    ],
)
def test_row_normalize_bad_input(bad, match):
    with pytest.raises(InputError, match=match):
        row_normalize(bad)


def test_row_normalize_subnormal_row_refused():
    C = np.array([[1.0, 1.0], [1e-320, 0.0]])  # subnormal row sum: refused
    with pytest.raises(InputError, match="row 1"):
        row_normalize(C)
    C[1, 0] = 1e-300  # tiny but normal: fine, normalises exactly
    assert row_normalize(C)[1, 0] == 1.0


@pytest.mark.parametrize("a", [0.0, 0.5, 1.0])
def test_anisotropic_matches_numpy_and_stationary_law(xp, random_kernel, a):
    C = random_kernel
    got = anisotropic_normalize(xp.asarray(C), a)
    A = to_numpy(got)
    d = C.sum(axis=1)
    Da = np.diag(d**-a)
    Ka = Da @ C @ Da
    ref = Ka / Ka.sum(axis=1, keepdims=True)
    # (a) exact algebra: ~2 sums of n=80 terms and a few products; measured ~1e-17 absolute on
    # entries of size ~1e-2
    assert_close(got, xp.asarray(ref), rtol=0, atol=200 * EPS)
    # stationary law of rownorm(K_a) with K_a symmetric is proportional to rowsum(K_a)
    pi = Ka.sum(axis=1) / Ka.sum()
    assert np.max(np.abs(pi @ A - pi)) <= 200 * EPS * pi.max()
    # negative control: the a=0 stationary law (d / sum d) is not stationary for a > 0
    if a > 0:
        pi0 = d / d.sum()
        assert np.max(np.abs(pi0 @ A - pi0)) > 1e4 * 200 * EPS * pi.max()


def test_anisotropic_a0_is_row_normalize(random_kernel):
    C = random_kernel
    assert np.max(np.abs(anisotropic_normalize(C, 0) - row_normalize(C))) <= 4 * EPS


@pytest.mark.parametrize("a", [-0.1, 1.5, np.nan, "half", True])
def test_anisotropic_bad_a(random_kernel, a):
    with pytest.raises(InputError, match="a must be"):
        anisotropic_normalize(random_kernel, a)


def test_anisotropic_non_square():
    with pytest.raises(InputError, match="square"):
        anisotropic_normalize(np.ones((3, 4)), 0.5)


def test_sinkhorn_doubly_stochastic(xp, random_kernel):
    C = random_kernel
    res = sinkhorn(xp.asarray(C), tol=1e-12)
    P = to_numpy(res.matrix)
    assert res.converged
    assert res.residual <= 1e-12
    assert np.max(np.abs(P.sum(axis=0) - 1)) <= 1e-12
    assert np.max(np.abs(P.sum(axis=1) - 1)) <= 1e-12
    # the scaling is diagonal: P = diag(r) C diag(c)
    r, c = to_numpy(res.row_scaling), to_numpy(res.col_scaling)
    assert np.max(np.abs(P - r[:, None] * C * c[None, :])) <= 4 * EPS * P.max()
    # symmetric C: the doubly stochastic scaling is unique, hence symmetric;
    # its asymmetry is bounded by the marginal residual (1e-12) times max(P)/min(P)-ish factors
    assert np.max(np.abs(P - P.T)) <= 1e-10
    # negative control: plain row normalisation is not doubly stochastic here (random points)
    A = C / C.sum(axis=1, keepdims=True)
    assert np.max(np.abs(A.sum(axis=0) - 1)) > 1e-3


def test_sinkhorn_circulant_closed_form():
    # On an equispaced circle grid the kernel is circulant: every row and column sums to
    # the same value, so C / rowsum is the (unique) doubly stochastic scaling: closed form.
    theta = 2 * np.pi * np.arange(64) / 64
    C = circle_power_law(theta)
    res = sinkhorn(C, tol=1e-13)
    ref = C / C.sum(axis=1)[0]
    assert np.max(np.abs(res.matrix - ref)) <= 64 * EPS * ref.max()  # 64-term sums
    assert res.iterations <= 10  # converges in the first sweep, checked at iteration 10


def test_sinkhorn_nonconvergence_is_reported():
    # A nearly decomposable matrix converges slowly: 2 sweeps are not enough.
    C = np.array([[1.0, 1e-6, 0.0], [0.0, 1.0, 1e-6], [1e-6, 0.0, 1.0]]) + np.eye(3) * np.array([1.0, 3.0, 9.0])
    with pytest.warns(SinkhornConvergenceWarning, match="max_iter=2"):
        res = sinkhorn(C, max_iter=2, check_every=1)
    assert not res.converged
    assert res.iterations == 2
    assert res.residual > 1e-10


@pytest.mark.parametrize(
    "kwargs, match",
    [({"tol": 0.0}, "tol"), ({"tol": 2.0}, "tol"), ({"max_iter": 0}, "max_iter"), ({"check_every": 1.5}, "check_every")],
)
def test_sinkhorn_bad_options(random_kernel, kwargs, match):
    with pytest.raises(InputError, match=match):
        sinkhorn(random_kernel, **kwargs)


def test_sinkhorn_zero_column():
    C = np.array([[1.0, 0.0], [1.0, 0.0]])
    with pytest.raises(InputError, match="column 1"):
        sinkhorn(C)


def test_symmetric_conjugate_spectrum(xp, random_kernel):
    C = random_kernel
    S, d = symmetric_conjugate(xp.asarray(C))
    assert_close(d, xp.asarray(C.sum(axis=1)), rtol=0, atol=80 * EPS * C.sum(axis=1).max())
    S, d = to_numpy(S), to_numpy(d)
    assert np.max(np.abs(S - S.T)) <= 4 * EPS * S.max()
    # similar to A = D^-1 C: same spectrum (independent: general eigvals of A)
    A = C / C.sum(axis=1, keepdims=True)
    ev_A = np.sort(np.linalg.eigvals(A).real)
    ev_S = np.linalg.eigvalsh(S)
    # (a) similarity-invariant spectrum; nonsymmetric eig backward error ~ n eps ||A||
    assert np.max(np.abs(ev_A - ev_S)) <= 80 * 100 * EPS
    # negative control: D^-1 C D^-1 (wrong power) has a different spectrum
    ev_wrong = np.linalg.eigvalsh(C / np.outer(d, d))
    assert np.max(np.abs(ev_wrong - ev_S)) > 0.1


def test_symmetric_conjugate_refuses_asymmetric(rng):
    C = rng.uniform(0.1, 1.0, size=(6, 6))
    with pytest.raises(InputError, match="symmetric"):
        symmetric_conjugate(C)
    # round-off asymmetry (1 ulp) is accepted
    Cs = C + C.T
    Cs[0, 1] = np.nextafter(Cs[0, 1], 10)
    symmetric_conjugate(Cs)


# ----------------------------------------------------------------------------- fused validation pass


@pytest.mark.parametrize("value, match", [(np.nan, "finite"), (np.inf, "finite"), (-np.inf, "finite"),
                                          (-1e-300, "nonnegative")])
@pytest.mark.parametrize("where", [(0, 0), (299, 298), (5, 250)])  # first tile, last tile, off-diagonal tile
def test_bad_entry_found_in_any_tile(rng, value, match, where):
    X = rng.uniform(0.5, 1.0, size=(300, 300))
    C = X + X.T
    good = C[where]
    C[where] = value
    with pytest.raises(InputError, match=match):
        symmetric_conjugate(C)
    with pytest.raises(InputError, match=match):
        row_normalize(C)
    from spectral import markov_spectrum

    with pytest.raises(InputError, match=match):
        markov_spectrum(C, 3)
    C[where] = good  # negative control: the same matrix with the entry restored passes
    symmetric_conjugate(C)


def test_sinkhorn_repr_is_short():
    C = np.exp(-np.subtract.outer(np.arange(200.0), np.arange(200.0)) ** 2 / 50)
    text = repr(sinkhorn(C))  # SinkhornResult is SinkhornScaling under its first name: one result class
    assert len(text) < 150 and text.startswith("SinkhornScaling(matrix=<float64 (200, 200)>, iterations="), text
