"""Test functions: values, gradients and Laplace-Beltrami against sympy and finite differences."""

import math

import numpy as np
import pytest
import sympy as sp

from manifolds import (
    Circle,
    Coordinate,
    Euclidean,
    FourierMode,
    GaussianBump,
    Polynomial,
    Sphere,
    SphericalHarmonic,
)
from spectral.floor.backend import to_numpy
from spectral.floor.validation import InputError

EPS = np.finfo(np.float64).eps
TH, PH = sp.symbols("theta phi", real=True)


def random_unit(rng, n, D):
    z = rng.standard_normal((n, D))
    return z / np.linalg.norm(z, axis=1, keepdims=True)


def tangent_basis(x):
    """Orthonormal tangent bases at the rows of x (n, D, D-1), from the SVD of the projector."""
    n, D = x.shape
    out = np.empty((n, D, D - 1))
    for i in range(n):
        proj = np.eye(D) - np.outer(x[i], x[i])
        u, _, _ = np.linalg.svd(proj)
        out[i] = u[:, : D - 1]
    return out


def fd_sphere(f, x, h):
    """Geodesic central differences: first derivatives along a tangent basis and the sum of
    second derivatives (= Laplace-Beltrami, since geodesics are normal coordinates)."""
    basis = tangent_basis(x)
    grads, lap = [], np.zeros(x.shape[0])
    f0 = f(x)
    for a in range(basis.shape[2]):
        v = basis[:, :, a]
        fp = f(np.cos(h) * x + np.sin(h) * v)
        fm = f(np.cos(h) * x - np.sin(h) * v)
        grads.append((fp - fm) / (2 * h))
        lap += (fp - 2 * f0 + fm) / h**2
    return basis, np.stack(grads, axis=1), lap


def sympy_spherical(expr):
    """Value, Riemannian gradient (ambient) and Laplace-Beltrami of expr(theta, phi) on S^2, via sympy."""
    lb = sp.diff(sp.sin(TH) * sp.diff(expr, TH), TH) / sp.sin(TH) + sp.diff(expr, PH, 2) / sp.sin(TH) ** 2
    fs = [sp.lambdify((TH, PH), e, "numpy") for e in (expr, sp.diff(expr, TH), sp.diff(expr, PH), lb)]

    def evaluate(x):
        t, p = np.arccos(np.clip(x[:, 2], -1, 1)), np.arctan2(x[:, 1], x[:, 0])
        val, dt, dp, lap = (np.real(np.asarray(fn(t, p) + 0 * t, dtype=complex)) for fn in fs)
        e_t = np.stack([np.cos(t) * np.cos(p), np.cos(t) * np.sin(p), -np.sin(t)], axis=1)
        e_p = np.stack([-np.sin(p), np.cos(p), np.zeros_like(p)], axis=1)
        return val, dt[:, None] * e_t + (dp / np.sin(t))[:, None] * e_p, lap

    return evaluate


def znm_sign(m):
    """sympy.Znm differs from our real harmonics by (-1)^m for m > 0 and by -1 for m < 0
    (Znm builds on the Condon-Shortley complex Ynm; see SphericalHarmonic's docstring)."""
    return (-1) ** m if m > 0 else (-1 if m < 0 else 1)


# --------------------------------------------------------------------- S^1
class TestFourierMode:
    @pytest.mark.parametrize("k,phase", [(0, 0.3), (1, 0.0), (3, -np.pi / 2), (7, 1.1)])
    def test_against_sympy(self, rng, k, phase):
        t = sp.symbols("t", real=True)
        f = sp.cos(k * t + phase)
        val, d1, d2 = (sp.lambdify(t, e, "numpy") for e in (f, sp.diff(f, t), sp.diff(f, t, 2)))
        theta = rng.uniform(0, 2 * np.pi, 40)
        x = Circle.embed(theta)
        fm = FourierMode(k, phase)
        tangent = np.stack([-np.sin(theta), np.cos(theta)], axis=1)
        # the angle re-read from rounded points is off by ~2 pi eps; f, f', f'' then differ by
        # ~k, k^2, k^3 times that: atol 8 pi eps (1 + k)(1 + k^2) covers all three
        scale = 4 * 2 * np.pi * (1 + k) * (1 + k * k)
        np.testing.assert_allclose(fm(x), val(theta) + 0 * theta, rtol=0, atol=8 * EPS * scale)
        np.testing.assert_allclose(fm.gradient(x), (d1(theta) + 0 * theta)[:, None] * tangent, rtol=0, atol=8 * EPS * scale)
        np.testing.assert_allclose(fm.laplacian(x), d2(theta) + 0 * theta, rtol=0, atol=8 * EPS * scale)

    def test_eigenfunction_negative_control(self, rng):
        x = Circle().sample(20, rng=rng)
        f = FourierMode(3)
        np.testing.assert_allclose(f.laplacian(x), -9 * f(x), atol=1e-13)
        assert np.max(np.abs(f.laplacian(x) - (-4) * f(x))) > 0.5  # the wrong eigenvalue is seen


# --------------------------------------------------------------------- S^2
#: every (l, m) with l <= 4: all of l <= 2 and both ends and one inner order of l = 3, 4 in the default tier (the
#: symbolic derivatives cost about 0.06 s an order), the other orders of l = 3, 4 in the slow tier
_LM = [pytest.param(l, m, marks=() if l <= 2 or m in (-l, 1, l) else pytest.mark.slow)
       for l in range(5) for m in range(-l, l + 1)]


class TestSphericalHarmonics:
    @pytest.mark.parametrize("l,m", _LM)
    def test_values_and_laplacian_vs_sympy(self, rng, l, m):
        x = random_unit(rng, 25, 3)
        val, grad, lap = sympy_spherical(sp.expand_func(sp.Znm(l, m, TH, PH)))(x)
        Y = SphericalHarmonic(l, m)
        s = znm_sign(m)
        # monomial-form rounding grows like (l+1)^2 (measured <= 1e-14 in values, 1.9e-13 in
        # the Laplacian at l = 8); sympy's trig form is evaluated in float64 too
        np.testing.assert_allclose(Y(x), s * val, rtol=0, atol=1e-15 * (l + 1) ** 2 * 10)
        np.testing.assert_allclose(Y.laplacian(x), s * lap, rtol=0, atol=1e-14 * (l + 1) ** 2 * 10)
        np.testing.assert_allclose(Y.gradient(x), s * grad, rtol=0, atol=1e-14 * (l + 1) ** 2 * 10)
        np.testing.assert_allclose(Y.laplacian(x), -l * (l + 1) * Y(x), rtol=0, atol=1e-14 * (l + 1) ** 2)

    @pytest.mark.parametrize("l,m", [(6, 3), (8, -5), (8, 0)])
    def test_high_degree_vs_sympy(self, rng, l, m):
        x = random_unit(rng, 25, 3)
        val, grad, lap = sympy_spherical(sp.expand_func(sp.Znm(l, m, TH, PH)))(x)
        Y = SphericalHarmonic(l, m)
        np.testing.assert_allclose(Y(x), znm_sign(m) * val, rtol=0, atol=1e-15 * (l + 1) ** 2 * 10)
        np.testing.assert_allclose(Y.laplacian(x), znm_sign(m) * lap, rtol=0, atol=1e-14 * (l + 1) ** 2 * 10)

    def test_low_degree_closed_forms(self, rng):
        x = random_unit(rng, 10, 3)
        c = math.sqrt(3 / (4 * math.pi))
        for m, col in [(-1, 1), (0, 2), (1, 0)]:
            np.testing.assert_allclose(SphericalHarmonic(1, m)(x), c * x[:, col], rtol=4 * EPS)
        np.testing.assert_allclose(SphericalHarmonic(0, 0)(x), 0.5 / math.sqrt(math.pi), rtol=4 * EPS)

    def test_orthonormal_by_exact_quadrature(self):
        # Gauss-Legendre (10 nodes in z) x trapezoid (20 in phi) is exact for polynomials of
        # degree <= 8 in (x, y, z): products of two degree-<=4 harmonics
        z, wz = np.polynomial.legendre.leggauss(10)
        phi = 2 * np.pi * np.arange(20) / 20
        Z, P = np.meshgrid(z, phi, indexing="ij")
        r = np.sqrt(1 - Z**2)
        x = np.stack([(r * np.cos(P)).ravel(), (r * np.sin(P)).ravel(), Z.ravel()], axis=1)
        w = np.outer(wz, np.full(20, 2 * np.pi / 20)).ravel()
        ys = np.stack([SphericalHarmonic(l, m)(x) for l in range(5) for m in range(-l, l + 1)])
        gram = (ys * w) @ ys.T
        np.testing.assert_allclose(gram, np.eye(25), rtol=0, atol=1e-13)  # quadrature exact: rounding only

    def test_gradient_and_laplacian_vs_finite_differences(self, rng):
        x = random_unit(rng, 20, 3)
        # h = 1e-4: truncation h^2/6 |f'''| (first) and h^2/12 |f''''| (second differences) grow
        # like l^3, l^4; rounding eps/h^2 ~ 2e-8.  Measured max 4.8e-8 (gradient) and 2.6e-7
        # (Laplacian) at l = 4; tolerances 3e-7 and 3e-6 (>= 6x margin)
        h = 1e-4
        for l, m in [(2, -1), (3, 3), (4, 0), (4, -2)]:
            Y = SphericalHarmonic(l, m)
            basis, g_fd, lap_fd = fd_sphere(Y, x, h)
            g = np.einsum("nd,nda->na", Y.gradient(x), basis)
            np.testing.assert_allclose(g, g_fd, rtol=0, atol=3e-7)
            np.testing.assert_allclose(Y.laplacian(x), lap_fd, rtol=0, atol=3e-6)
            np.testing.assert_allclose(np.sum(Y.gradient(x) * x, axis=1), 0.0, atol=1e-13)  # tangent
        # negative control: the Laplacian of a different degree is far outside the tolerance
        assert np.max(np.abs(SphericalHarmonic(3, 0).laplacian(x) - fd_sphere(SphericalHarmonic(4, 0), x, h)[2])) > 1.0


# -------------------------------------------------------- polynomials, coordinates
class TestPolynomialsOnSpheres:
    @pytest.mark.parametrize("dim", [1, 2, 3])
    def test_coordinate_is_degree_one_harmonic(self, rng, dim):
        x = random_unit(rng, 15, dim + 1)
        f = Coordinate(dim, Sphere(dim))
        np.testing.assert_allclose(f(x), x[:, dim], rtol=0, atol=0)
        e = np.zeros(dim + 1)
        e[dim] = 1.0
        np.testing.assert_allclose(f.gradient(x), e - x[:, dim : dim + 1] * x, rtol=0, atol=4 * EPS)
        # Delta x_i = -dim x_i on S^dim (degree-1 eigenvalue l (l + dim - 1))
        np.testing.assert_allclose(f.laplacian(x), -dim * x[:, dim], rtol=0, atol=8 * EPS * (dim + 1))
        if dim >= 2:
            _, _, lap_fd = fd_sphere(f, x, 1e-4)
            np.testing.assert_allclose(f.laplacian(x), lap_fd, rtol=0, atol=1e-6)  # measured <= 4.1e-8

    def test_non_harmonic_polynomial_s2_vs_sympy(self, rng):
        terms = {(2, 1, 0): 1.0, (0, 0, 3): 1.0, (1, 0, 1): 0.5, (0, 0, 0): 2.0}
        f = Polynomial(terms, manifold=Sphere(2))
        xs, ys, zs = sp.sin(TH) * sp.cos(PH), sp.sin(TH) * sp.sin(PH), sp.cos(TH)
        expr = xs**2 * ys + zs**3 + sp.Rational(1, 2) * xs * zs + 2
        x = random_unit(rng, 25, 3)
        val, grad, lap = sympy_spherical(expr)(x)
        np.testing.assert_allclose(f(x), val, rtol=0, atol=1e-14)
        np.testing.assert_allclose(f.gradient(x), grad, rtol=0, atol=1e-13)
        np.testing.assert_allclose(f.laplacian(x), lap, rtol=0, atol=1e-13)
        # negative control: the ambient (Euclidean) Laplacian of the same polynomial differs
        g = Polynomial(terms, manifold=Euclidean(3))
        assert np.max(np.abs(g.laplacian(x) - lap)) > 0.1

    def test_quadratic_on_s3_vs_finite_differences(self, rng):
        A = rng.standard_normal((4, 4))
        f_b = rng.standard_normal(4)
        f = Polynomial.quadratic(A, f_b, 0.7, manifold=Sphere(3))
        x = random_unit(rng, 20, 4)
        basis, g_fd, lap_fd = fd_sphere(f, x, 1e-4)
        # h = 1e-4: truncation ~h^2 |f''''|/12, rounding ~ eps |f| / h^2; measured 3.2e-8 (gradient)
        # and 4.8e-7 (Laplacian)
        np.testing.assert_allclose(np.einsum("nd,nda->na", f.gradient(x), basis), g_fd, rtol=0, atol=3e-7)
        np.testing.assert_allclose(f.laplacian(x), lap_fd, rtol=0, atol=5e-6)
        # negative control: dropping the -(D-1) x.grad P term of Delta_S is detected
        wrong = lap_fd + 3 * np.sum(x * Polynomial.quadratic(A, f_b, 0.7, manifold=Euclidean(4)).gradient(x), axis=1)
        assert np.max(np.abs(f.laplacian(x) - wrong)) > 1e-2


class TestEuclideanFunctions:
    def test_quadratic_and_cubic_vs_sympy(self, rng):
        X = sp.symbols("x0:3", real=True)
        A = rng.standard_normal((3, 3))
        b = rng.standard_normal(3)
        expr = sum(A[i, j] * X[i] * X[j] for i in range(3) for j in range(3)) + sum(b[i] * X[i] for i in range(3)) - 1.5
        expr = expr + 0.25 * X[0] * X[1] * X[2] ** 2
        f = Polynomial.quadratic(A, b, -1.5, manifold=Euclidean(3))
        f = Polynomial({**{e: c for e, c in f.terms.items()}, (1, 1, 2): 0.25}, manifold=Euclidean(3))
        x = rng.standard_normal((30, 3))
        val = sp.lambdify(X, expr, "numpy")(*x.T)
        grad = np.stack([sp.lambdify(X, sp.diff(expr, X[i]), "numpy")(*x.T) + 0 * x[:, 0] for i in range(3)], axis=1)
        lap = sp.lambdify(X, sum(sp.diff(expr, X[i], 2) for i in range(3)), "numpy")(*x.T) + 0 * x[:, 0]
        np.testing.assert_allclose(f(x), val, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(f.gradient(x), grad, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(f.laplacian(x), lap, rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(Coordinate(1, Euclidean(3)).laplacian(x), 0.0)
        np.testing.assert_allclose(Coordinate(1, Euclidean(3)).gradient(x), np.tile([0.0, 1.0, 0.0], (30, 1)))

    @pytest.mark.parametrize("d", [1, 2, 3])
    def test_gaussian_bump_vs_sympy(self, rng, d):
        X = sp.symbols(f"x0:{d}", real=True)
        c = rng.standard_normal(d)
        w = 0.7
        expr = sp.exp(-sum((X[i] - c[i]) ** 2 for i in range(d)) / (2 * w**2))
        x = c + rng.standard_normal((30, d))
        val = sp.lambdify(X, expr, "numpy")(*x.T)
        grad = np.stack([sp.lambdify(X, sp.diff(expr, X[i]), "numpy")(*x.T) for i in range(d)], axis=1)
        lap = sp.lambdify(X, sum(sp.diff(expr, X[i], 2) for i in range(d)), "numpy")(*x.T)
        f = GaussianBump(c, w)
        np.testing.assert_allclose(f(x), val, rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(f.gradient(x), grad, rtol=1e-13, atol=1e-15)
        # (r^2/w^4 - d/w^2) f cancels near |x - c| = w sqrt(d): absolute rounding ~ eps d/w^2
        np.testing.assert_allclose(f.laplacian(x), lap, rtol=1e-12, atol=100 * EPS * d / w**2)


# ---------------------------------------------------------------- backends
@pytest.mark.parametrize("fun", [FourierMode(3, 0.2), SphericalHarmonic(3, -2), Coordinate(2, Sphere(2)),
                                 Polynomial({(2, 0, 1): 1.5, (0, 1, 0): -1.0}, manifold=Sphere(2)),
                                 GaussianBump([0.5, -0.5], 0.8),
                                 Polynomial.quadratic(np.eye(2), [1.0, 0.0], manifold=Euclidean(2))], ids=repr)
def test_backend_neutral(fun, xp, rng):
    man = fun.manifold
    x = rng.standard_normal((15, man.ambient_dim)) if isinstance(man, Euclidean) else man.sample(15, rng=rng)
    xa = xp.asarray(x)
    for name in ("__call__", "gradient", "laplacian"):
        out = getattr(fun, name)(xa)
        assert type(out) is type(xa)
        # exact algebra across backends: rtol 4 sqrt(eps)
        np.testing.assert_allclose(to_numpy(out), getattr(fun, name)(x), rtol=4 * np.sqrt(EPS), atol=1e-14)


# ---------------------------------------------------------------- bad input
def test_bad_input():
    with pytest.raises(InputError, match=r"k must be an integer in \[0, inf\)"):
        FourierMode(-1)
    with pytest.raises(InputError, match=r"m must be an integer in \[-2, 2\]"):
        SphericalHarmonic(2, 3)
    with pytest.raises(InputError, match=r"l must be an integer in \[0, 8\]"):
        SphericalHarmonic(9, 0)
    with pytest.raises(InputError, match=r"i must be an integer in \[0, 2\]"):
        Coordinate(3, Sphere(2))
    with pytest.raises(InputError, match="width must be in"):
        GaussianBump([0.0, 0.0], 0.0)
    with pytest.raises(InputError, match="exponents"):
        Polynomial({(1, -1): 1.0}, manifold=Euclidean(2))
    with pytest.raises(InputError, match="finite real coefficients"):
        Polynomial({(1, 0): float("nan")}, manifold=Euclidean(2))
    with pytest.raises(InputError, match=r"A must be a finite array of shape \(3, 3\)"):
        Polynomial.quadratic(np.eye(2), manifold=Sphere(2))
    with pytest.raises(InputError, match=r"x must be an array of shape \(n, 3\)"):
        SphericalHarmonic(1, 0)(np.ones((4, 2)))
    with pytest.raises(InputError, match="manifold must be"):
        Polynomial({(1,): 1.0}, manifold="R")
