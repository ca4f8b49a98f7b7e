"""manifolds.references.graph_laplacian: constants, continuum spectra and eigenspaces against independent computations.

The closed forms are held to brute-force quadrature of the Funk-Hecke integrals (a different formula: the
kernel integrated against the harmonic over the sphere), to their eps -> 0 limits, and the constants to
their textbook closed forms.
"""

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import eval_legendre, gamma

from manifolds.references import graph_laplacian as ref
from spectral.floor.validation import InputError


@pytest.mark.parametrize("m", range(8))
def test_unit_ball_volume(m):
    assert ref.unit_ball_volume(m) == pytest.approx(math.pi ** (m / 2) / gamma(m / 2 + 1), rel=1e-14)


@pytest.mark.parametrize("m", range(1, 7))
def test_indicator_moment_and_gaussian_moments(m):
    assert ref.indicator_moment(m) == pytest.approx(ref.unit_ball_volume(m) / (m + 2), rel=1e-12)
    m0, m2 = ref.gaussian_moments(m)
    assert m0 == pytest.approx(1.0, rel=1e-12) and m2 == pytest.approx(2.0, rel=1e-12)


def _quadrature(m, l, eps, kernel, normalization):
    """The continuum eigenvalue by direct quadrature over the sphere (angle theta to the pole, harmonic P_l)."""
    if m == 1:
        def harm(t):
            return math.cos(l * t)
        weight, lo, hi = (lambda t: 1.0), -math.pi, math.pi
        chord = lambda t: 2.0 * math.sin(abs(t) / 2.0)
    else:
        def harm(t):
            return eval_legendre(l, math.cos(t))
        weight, lo, hi = (lambda t: 2.0 * math.pi * math.sin(t)), 0.0, math.pi
        chord = lambda t: 2.0 * math.sin(t / 2.0)
    if kernel == "indicator":
        top = 2.0 * math.asin(eps / 2.0)
        k = lambda t: 1.0
        lo, hi = (-top, top) if m == 1 else (0.0, top)
    else:
        k = lambda t: eps ** (-m / 2) * (4 * math.pi) ** (-m / 2) * math.exp(-chord(t) ** 2 / (4 * eps))
    pts = [0.0] if m == 1 else None
    num = quad(lambda t: k(t) * (1.0 - harm(t)) * weight(t), lo, hi, points=pts, epsabs=0, epsrel=1e-12, limit=200)[0]
    if normalization == "random_walk":
        mass = quad(lambda t: k(t) * weight(t), lo, hi, points=pts, epsabs=0, epsrel=1e-12, limit=200)[0]
        scale = 2.0 * (m + 2) / eps**2 if kernel == "indicator" else 1.0 / eps
        return scale * num / mass
    if kernel == "indicator":
        return 2.0 / (ref.indicator_moment(m) * eps ** (m + 2)) * num
    return num / eps


@pytest.mark.parametrize("m", (1, 2))
@pytest.mark.parametrize("kernel, eps", [("indicator", 0.7), ("indicator", 0.15), ("gaussian", 0.05),
                                         ("gaussian", 0.004)])
@pytest.mark.parametrize("normalization", ("unnormalized", "random_walk"))
def test_continuum_eigenvalue_matches_quadrature(m, kernel, eps, normalization):
    for l in (1, 2, 3, 5):
        got = ref.continuum_eigenvalue(m, l, eps, kernel=kernel, normalization=normalization)
        assert got == pytest.approx(_quadrature(m, l, eps, kernel, normalization), rel=1e-8), l
    assert ref.continuum_eigenvalue(m, 0, eps, kernel=kernel, normalization=normalization) == 0.0


@pytest.mark.parametrize("m", (1, 2))
@pytest.mark.parametrize("kernel, eps", [("indicator", 1e-3), ("gaussian", 1e-5)])
def test_continuum_tends_to_laplace_beltrami(m, kernel, eps):
    for l in (1, 2, 4):
        want = ref.laplace_beltrami_eigenvalue(m, l)
        for norm in ref.NORMALIZATIONS:
            assert ref.continuum_eigenvalue(m, l, eps, kernel=kernel, normalization=norm) == pytest.approx(want,
                                                                                                          rel=1e-3)


def test_indicator_degree_one_on_s2_is_exact():
    # the chord ball reproduces linear functions exactly: no bias at any eps
    for eps in (0.1, 0.5, 1.5):
        assert ref.continuum_eigenvalue(2, 1, eps, kernel="indicator") == pytest.approx(2.0, rel=1e-12)


@pytest.mark.parametrize("m, l", [(1, 1), (1, 3), (2, 1), (2, 2), (2, 4)])
def test_eigenspace_basis_is_orthogonal_and_of_the_right_dimension(m, l):
    # quadrature nodes: equispaced on S^1; a Fibonacci-free check on S^2 by Monte Carlo with many points
    if m == 1:
        t = np.linspace(0, 2 * np.pi, 400, endpoint=False)
        x = np.stack([np.cos(t), np.sin(t)], axis=1)
        b = ref.eigenspace_basis(x, 1, l)
        gram = b.T @ b * (2 * np.pi / 400)
        np.testing.assert_allclose(gram, np.pi * np.eye(2), atol=1e-12)
    else:
        x = np.random.default_rng(0).standard_normal((20000, 3))
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        b = ref.eigenspace_basis(x, 2, l)
        assert b.shape == (20000, 2 * l + 1)
        gram = b.T @ b * (4 * np.pi / 20000)
        np.testing.assert_allclose(gram, np.eye(2 * l + 1), atol=0.06)


def test_eigenspace_distance():
    rng = np.random.default_rng(1)
    basis = rng.standard_normal((50, 3))
    inside = basis @ rng.standard_normal((3, 3))  # another basis of the same space
    assert ref.eigenspace_distance(inside, basis) == pytest.approx(0.0, abs=1e-7)
    q, _ = np.linalg.qr(np.concatenate([basis, rng.standard_normal((50, 2))], axis=1))
    assert ref.eigenspace_distance(q[:, 3:], basis) == pytest.approx(1.0, abs=1e-12)
    # one vector at angle phi: the sine
    e = np.zeros((50, 2))
    e[0, 0] = e[1, 1] = 1.0
    v = np.zeros(50)
    v[0], v[2] = math.cos(0.3), math.sin(0.3)
    assert ref.eigenspace_distance(v, e) == pytest.approx(math.sin(0.3), rel=1e-12)
    w = rng.uniform(0.5, 2.0, 50)  # in a weighted inner product, rescaling rows by w^-1/2 is an isometry
    assert ref.eigenspace_distance(v / np.sqrt(w), e / np.sqrt(w)[:, None], w) == pytest.approx(math.sin(0.3))


@pytest.mark.parametrize("call, match", [
    (lambda: ref.continuum_eigenvalue(3, 1, 0.1, kernel="indicator"), "sphere_dim"),
    (lambda: ref.continuum_eigenvalue(2, 1, 2.5, kernel="indicator"), "eps"),
    (lambda: ref.continuum_eigenvalue(2, 1, 0.1, kernel="box"), "kernel"),
    (lambda: ref.continuum_eigenvalue(2, -1, 0.1, kernel="gaussian"), "degree"),
    (lambda: ref.continuum_eigenvalue(2, 1, 0.1, kernel="gaussian", normalization="sym"), "normalization"),
    (lambda: ref.eigenspace_basis(np.zeros((4, 2)), 2, 1), "points"),
    (lambda: ref.eigenspace_distance(np.zeros((4, 1)), np.zeros((5, 1))), "rows"),
    (lambda: ref.eigenspace_distance(np.ones((4, 1)), np.ones((4, 1)), -np.ones(4)), "weights"),
])
def test_bad_input(call, match):
    with pytest.raises(InputError, match=match):
        call()
