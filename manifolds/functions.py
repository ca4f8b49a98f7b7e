"""Test functions with exact values, gradients and Laplace-Beltrami operators.

Every function ``f`` has ``f.manifold``, ``f(x)`` (shape ``(n,)``),
``f.gradient(x)`` (Riemannian gradient as ambient tangent vectors, shape
``(n, ambient_dim)``) and ``f.laplacian(x)`` (shape ``(n,)``), all backend
neutral (namespace from ``x``).  The Laplacian is the negative-semidefinite
Laplace-Beltrami operator: ``Delta cos(k theta) = -k^2 cos(k theta)`` and
``Delta Y_lm = -l (l + 1) Y_lm``.

On spheres, a polynomial ``P`` of the ambient coordinates is restricted to the
unit sphere S^(D-1) in R^D; with ambient gradient ``g`` and Hessian ``H`` at a
unit vector ``x``:

.. math::

    \\nabla_S f = g - (x \\cdot g) x, \\qquad
    \\Delta_S f = \\operatorname{tr} H - x^T H x - (D - 1)\\, x \\cdot g,

(the ambient Laplacian minus the radial part ``d^2/dr^2 + (D-1)/r d/dr`` at ``r = 1``).
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from fractions import Fraction
from numbers import Integral, Real

import numpy as np

from spectral.floor.validation import InputError, check_int, check_real

from .base import Manifold
from .circle import Circle, row_angles
from .euclidean import Euclidean
from .points import as_points
from .sphere import Sphere

__all__ = [
    "ManifoldFunction",
    "FourierMode",
    "Polynomial",
    "SphericalHarmonic",
    "Coordinate",
    "GaussianBump",
]


class ManifoldFunction(ABC):
    """A smooth function on ``manifold`` with exact gradient and Laplace-Beltrami operator."""

    manifold: Manifold

    @abstractmethod
    def __call__(self, x):
        """Values, shape ``(n,)``."""

    @abstractmethod
    def gradient(self, x):
        """Riemannian gradient (ambient, tangent), shape ``(n, ambient_dim)``."""

    @abstractmethod
    def laplacian(self, x):
        """Laplace-Beltrami ``Delta f`` (negative semidefinite convention), shape ``(n,)``."""


class FourierMode(ManifoldFunction):
    """``f(theta) = cos(k theta + phase)`` on S^1.

    Gradient ``-k sin(k theta + phase) (-sin theta, cos theta)``; Laplacian ``-k^2 f``.

    Parameters
    ----------
    k : int
        Wavenumber, ``k >= 0``.
    phase : float
        Phase in radians (``phase = -pi/2`` gives ``sin(k theta)``).
    """

    def __init__(self, k: int, phase: float = 0.0):
        self.k = check_int("k", k, low=0)
        self.phase = check_real("phase", phase)
        self.manifold = Circle()

    def __repr__(self):
        return f"FourierMode(k={self.k}, phase={self.phase!r})"

    def _theta(self, x):
        xp, x = as_points(x, 2)
        return xp, x, row_angles(xp, x)  # NaN for a non-finite point

    def __call__(self, x):
        xp, x, t = self._theta(x)
        return xp.cos(self.k * t + self.phase)

    def gradient(self, x):
        xp, x, t = self._theta(x)
        d = -self.k * xp.sin(self.k * t + self.phase)
        return xp.stack([-d * xp.sin(t), d * xp.cos(t)], axis=1)

    def laplacian(self, x):
        xp, x, t = self._theta(x)
        return -float(self.k * self.k) * xp.cos(self.k * t + self.phase)


# ------------------------------------------------------------------ polynomials
def _poly_mul(p, q):
    out = {}
    for ep, cp in p.items():
        for eq, cq in q.items():
            e = tuple(a + b for a, b in zip(ep, eq))
            out[e] = out.get(e, 0) + cp * cq
    return {e: c for e, c in out.items() if c != 0}


def _poly_add(p, q):
    out = dict(p)
    for e, c in q.items():
        out[e] = out.get(e, 0) + c
    return {e: c for e, c in out.items() if c != 0}


def _poly_derivative(p, i):
    out = {}
    for e, c in p.items():
        if e[i] > 0:
            e2 = e[:i] + (e[i] - 1,) + e[i + 1 :]
            out[e2] = out.get(e2, 0) + c * e[i]
    return out


def _poly_eval(xp, x, terms, powers):
    acc = xp.zeros_like(x[:, 0])
    for e, c in terms.items():
        mono = None
        for i, ei in enumerate(e):
            if ei:
                mono = powers[i][ei] if mono is None else mono * powers[i][ei]
        acc = acc + (float(c) if mono is None else float(c) * mono)
    return acc


class Polynomial(ManifoldFunction):
    """Polynomial ``P(x) = sum_e c_e x^e`` of the ambient coordinates, on R^d or restricted to a sphere.

    Parameters
    ----------
    terms : mapping
        ``{exponent tuple of length ambient_dim: coefficient}``, exponents
        non-negative integers, coefficients finite reals.
    manifold : Euclidean or Sphere (keyword-only)
        On ``Euclidean(d)`` the gradient is ``grad P`` and the Laplacian
        ``sum_i d^2 P / dx_i^2``; on a sphere see the module docstring.
    """

    def __init__(self, terms, *, manifold: Manifold):
        if not isinstance(manifold, (Euclidean, Sphere)):
            raise InputError(f"manifold must be Euclidean(d), Sphere(dim) or Circle(), got {manifold!r}")
        D = manifold.ambient_dim
        clean = {}
        for e, c in dict(terms).items():
            e = tuple(e)
            if len(e) != D or any(isinstance(a, bool) or not isinstance(a, Integral) or a < 0 for a in e):
                raise InputError(f"terms keys must be tuples of {D} integers >= 0 (exponents), got {e!r}")
            if isinstance(c, bool) or not isinstance(c, (Real, Fraction)) or not math.isfinite(float(c)):
                raise InputError(f"terms values must be finite real coefficients, got {c!r} for {e!r}")
            clean[tuple(int(a) for a in e)] = c
        self.terms = clean
        self.manifold = manifold
        self.degree = max((sum(e) for e in clean), default=0)
        self._grad = [_poly_derivative(clean, i) for i in range(D)]
        self._hess = [[_poly_derivative(self._grad[i], j) for j in range(D)] for i in range(D)]

    @classmethod
    def quadratic(cls, A, b=None, c: float = 0.0, *, manifold: Manifold) -> "Polynomial":
        """``x^T A x + b . x + c`` (``A`` of shape (D, D), ``b`` of shape (D,), ``D = ambient_dim``)."""
        D = manifold.ambient_dim
        A = np.asarray(A, dtype=np.float64)
        if A.shape != (D, D) or not np.all(np.isfinite(A)):
            raise InputError(f"A must be a finite array of shape ({D}, {D}), got shape {A.shape}")
        b = np.zeros(D) if b is None else np.asarray(b, dtype=np.float64)
        if b.shape != (D,) or not np.all(np.isfinite(b)):
            raise InputError(f"b must be a finite array of shape ({D},), got shape {b.shape}")
        c = check_real("c", c)
        terms = {}
        unit = np.eye(D, dtype=int)
        for i in range(D):
            for j in range(D):
                e = tuple(unit[i] + unit[j])
                terms[e] = terms.get(e, 0.0) + float(A[i, j])
            terms[tuple(unit[i])] = terms.get(tuple(unit[i]), 0.0) + float(b[i])
        terms[(0,) * D] = c
        return cls({e: v for e, v in terms.items() if v != 0.0}, manifold=manifold)

    def __repr__(self):
        return f"Polynomial(degree={self.degree}, terms={len(self.terms)}, manifold={self.manifold!r})"

    def _setup(self, x):
        xp, x = as_points(x, self.manifold.ambient_dim)
        powers = []
        for i in range(x.shape[1]):
            col = x[:, i]
            pw = {1: col}
            for e in range(2, self.degree + 1):
                pw[e] = pw[e - 1] * col
            powers.append(pw)
        return xp, x, powers

    def _ambient_grad(self, xp, x, powers):
        return xp.stack([_poly_eval(xp, x, g, powers) for g in self._grad], axis=1)

    def __call__(self, x):
        xp, x, powers = self._setup(x)
        return _poly_eval(xp, x, self.terms, powers)

    def gradient(self, x):
        xp, x, powers = self._setup(x)
        g = self._ambient_grad(xp, x, powers)
        if isinstance(self.manifold, Euclidean):
            return g
        return g - xp.sum(x * g, axis=1, keepdims=True) * x

    def laplacian(self, x):
        xp, x, powers = self._setup(x)
        D = x.shape[1]
        trace = None
        for i in range(D):
            hii = _poly_eval(xp, x, self._hess[i][i], powers)
            trace = hii if trace is None else trace + hii
        if isinstance(self.manifold, Euclidean):
            return trace
        xhx = None
        for i in range(D):
            for j in range(D):
                term = x[:, i] * x[:, j] * _poly_eval(xp, x, self._hess[i][j], powers)
                xhx = term if xhx is None else xhx + term
        g = self._ambient_grad(xp, x, powers)
        return trace - xhx - (D - 1) * xp.sum(x * g, axis=1)


def _spherical_harmonic_terms(l: int, m: int):
    """Exact monomial coefficients (Fractions) and the float prefactor of the real Y_lm.

    Real form in Cartesian coordinates (e.g. Wikipedia, "Spherical harmonics",
    real form): ``Y_lm = N Pi_l^|m|(z, r) A_m(x, y)`` (``m > 0``), ``B_|m|`` for
    ``m < 0``, with ``A_m + i B_m = (x + i y)^m`` and

    ``Pi_l^m = sum_k (-1)^k 2^-l C(l,k) C(2l-2k,l) (l-2k)!/(l-2k-m)! r^2k z^(l-2k-m)``.

    ``N = sqrt(2) sqrt((2l+1)/(4 pi) (l-|m|)!/(l+|m|)!)`` for ``m != 0`` (the
    ``sqrt(2)`` dropped for ``m = 0``); no Condon-Shortley sign, as in the usual
    real-harmonic tables (``Y_{1,-1}``, ``Y_{1,0}``, ``Y_{1,1}`` proportional to
    ``y``, ``z``, ``x``).  ``r^2`` is kept as ``x^2 + y^2 + z^2`` so the polynomial
    is homogeneous and harmonic.
    """
    am = abs(m)
    r2 = {(2, 0, 0): Fraction(1), (0, 2, 0): Fraction(1), (0, 0, 2): Fraction(1)}
    pi_lm = {}
    r2k = {(0, 0, 0): Fraction(1)}
    for k in range((l - am) // 2 + 1):
        coef = Fraction((-1) ** k * math.comb(l, k) * math.comb(2 * l - 2 * k, l) * math.factorial(l - 2 * k),
                        2**l * math.factorial(l - 2 * k - am))
        zpow = {(0, 0, l - 2 * k - am): coef}
        pi_lm = _poly_add(pi_lm, _poly_mul(r2k, zpow))
        r2k = _poly_mul(r2k, r2)
    ab = {}
    for p in range(am + 1):
        q = am - p
        if m >= 0:
            s = {0: 1, 1: 0, 2: -1, 3: 0}[q % 4]
        else:
            s = {0: 0, 1: 1, 2: 0, 3: -1}[q % 4]
        if s:
            ab[(p, q, 0)] = Fraction(s * math.comb(am, p))
    terms = _poly_mul(pi_lm, ab)
    norm = math.sqrt((2 * l + 1) / (4 * math.pi) * math.factorial(l - am) / math.factorial(l + am))
    if m != 0:
        norm *= math.sqrt(2.0)
    return terms, norm


class SphericalHarmonic(Polynomial):
    """Real orthonormal spherical harmonic ``Y_lm`` on S^2 (``0 <= l <= 8``, ``|m| <= l``).

    ``Y_lm`` is a homogeneous harmonic polynomial of degree ``l`` in ``(x, y, z)``
    (closed form in :func:`_spherical_harmonic_terms`), so
    ``Delta_S Y_lm = -l (l + 1) Y_lm`` and ``int_{S^2} Y_lm Y_l'm' = delta``.
    ``m > 0`` is the ``cos(m phi)`` member, ``m < 0`` the ``sin(|m| phi)``
    member; no Condon-Shortley sign (``Y_11``, ``Y_1,-1``, ``Y_10`` are
    ``sqrt(3 / (4 pi))`` times ``x``, ``y``, ``z``; ``sympy.Znm`` differs by
    ``(-1)^m`` for ``m > 0`` and by ``-1`` for ``m < 0``).  Degrees are
    capped at 8 because the monomial form loses accuracy by cancellation at
    high degree.
    """

    def __init__(self, l: int, m: int):
        l = check_int("l", l, low=0, high=8)
        m = check_int("m", m, low=-l, high=l)
        terms, norm = _spherical_harmonic_terms(l, m)
        super().__init__({e: float(c) * norm for e, c in terms.items()}, manifold=Sphere(2))
        self.l, self.m = l, int(m)

    def __repr__(self):
        return f"SphericalHarmonic(l={self.l}, m={self.m})"


class Coordinate(Polynomial):
    """The ambient coordinate ``x_i`` restricted to a sphere (or circle) or on R^d.

    On S^dim: ``grad = e_i - x_i x``, ``Delta x_i = -dim x_i`` (a degree-1 harmonic).
    On R^d: ``grad = e_i``, ``Delta x_i = 0``.
    """

    def __init__(self, i: int, manifold: Manifold):
        if not isinstance(manifold, (Euclidean, Sphere)):
            raise InputError(f"manifold must be Euclidean(d), Sphere(dim) or Circle(), got {manifold!r}")
        D = manifold.ambient_dim
        i = check_int("i", i, low=0, high=D - 1)
        e = [0] * D
        e[i] = 1
        super().__init__({tuple(e): 1.0}, manifold=manifold)
        self.i = int(i)

    def __repr__(self):
        return f"Coordinate({self.i}, {self.manifold!r})"


class GaussianBump(ManifoldFunction):
    """``f(x) = exp(-|x - c|^2 / (2 w^2))`` on R^d.

    Gradient ``-(x - c) f / w^2``; Laplacian ``(|x - c|^2 / w^4 - d / w^2) f``.

    Parameters
    ----------
    center : array-like of shape (d,)
    width : float
        ``w > 0``.
    """

    def __init__(self, center, width: float):
        center = np.asarray(center, dtype=np.float64)
        if center.ndim != 1 or center.shape[0] < 1 or not np.all(np.isfinite(center)):
            raise InputError(f"center must be a finite 1-D array of length d >= 1, got {center!r}")
        self.center = center
        self.width = check_real("width", width, low=0.0, low_open=True)
        self.manifold = Euclidean(center.shape[0])

    def __repr__(self):
        return f"GaussianBump(center={self.center.tolist()!r}, width={self.width!r})"

    def _parts(self, x):
        xp, x = as_points(x, self.center.shape[0])
        diff = xp.stack([x[:, k] - float(c) for k, c in enumerate(self.center)], axis=1)
        r2 = xp.sum(diff * diff, axis=1)
        f = xp.exp(-r2 / (2.0 * self.width**2))
        # exp(-inf) = 0 would pass a point with an infinite coordinate as a far one: NaN there
        return xp, diff, r2, xp.where(xp.all(xp.isfinite(x), axis=1), f, f * math.nan)

    def __call__(self, x):
        return self._parts(x)[3]

    def gradient(self, x):
        xp, diff, r2, f = self._parts(x)
        return -diff * (f / self.width**2)[:, None]

    def laplacian(self, x):
        xp, diff, r2, f = self._parts(x)
        w2 = self.width**2
        return (r2 / w2**2 - self.center.shape[0] / w2) * f
