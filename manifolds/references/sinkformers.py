r"""Exact references of the Sinkformers family: heat moments, finite-eps continuum operators, vMF point sets.

Sinkformers (Sander, Ablin, Blondel & Peyre, AISTATS 2022, arXiv 2110.11773) normalise attention with
Sinkhorn's algorithm; with the Gaussian kernel ``k(x, y) = exp(-|x - y|^2 / (2 eps)) = exp(-(1 - <x, y>) / eps)``
on the unit circle S^1 and sphere S^2 everything below is computed from the definitions, without
:mod:`spectral`:

* heat moments: the heat equation ``d p / dt = D Delta p`` from a von Mises density on S^1 keeps
  ``E[cos k(theta - mu)] = (I_k(kappa) / I_0(kappa)) e^(-k^2 D t)``, and from a von Mises-Fisher density
  on S^2 ``E[P_l(<mu, x>)] = (I_(l+1/2)(kappa) / I_(1/2)(kappa)) e^(-l(l+1) D t)``
  (:func:`circle_heat_moment`, :func:`sphere_heat_moment`);
* kernel symbols: ``int k(theta) e^(-i k theta) d theta = 2 pi e^(-1/eps) I_k(1/eps)`` on S^1 and the
  Funk-Hecke multiplier ``2 pi int_(-1)^1 e^(-(1-t)/eps) P_l(t) dt = 4 pi sqrt(pi eps / 2) e^(-1/eps)
  I_(l+1/2)(1/eps)`` on S^2 (from ``int e^(zt) P_l(t) dt = 2 i_l(z)``, the modified spherical Bessel function);
* the continuum operators at finite ``eps`` of the two normalisations of the kernel against a density
  ``p``: row (SoftMax) ``(T f)(x) = int k(x, y) f(y) p(y) dy / int k(x, y) p(y) dy`` and doubly stochastic
  (Sinkhorn) ``(P f)(x) = d(x) int k(x, y) d(y) f(y) p(y) dy`` with ``d(x) int k(x, y) d(y) p(y) dy = 1``,
  so that ``(P f)(x) = K(d p f)(x) / K(d p)(x)``: on S^1 by FFT with the exact symbol on a uniform grid
  (trigonometric interpolation elsewhere, spectrally accurate for ``2 pi / M << sqrt(eps)``); on S^2 for
  zonal ``p`` and ``f`` (functions of ``z = <mu, x>``) by Legendre series with the Funk-Hecke multipliers
  (Gauss-Legendre quadrature in ``z``). The scaling ``d`` solves its defining equation by the damped
  fixed point ``log d <- (log d - log K(d p)) / 2`` to a residual ``<= 1e-12`` (asserted);
  :class:`ContinuumOperators` returns ``(T f - f) / eps``, ``(P f - f) / eps`` and ``d``;
* :func:`vmf_fibonacci_points`: a deterministic low-discrepancy point set of a von Mises-Fisher law on
  S^2 (inverse CDF in ``z``, golden-angle azimuths), the S^2 analogue of a quantile grid.

Host NumPy/SciPy only.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.polynomial import legendre

from spectral.floor.validation import InputError, check_int, check_real

__all__ = ["ContinuumOperators", "circle_continuum", "circle_heat_moment", "circle_kernel_symbol",
           "sphere_continuum", "sphere_heat_moment", "sphere_kernel_symbol", "vmf_fibonacci_points"]

#: Residual of the continuum scaling's defining equation ``d K(d p) = 1`` accepted (asserted on return).
SCALING_RESIDUAL = 1e-12


def circle_heat_moment(k: int, t, *, kappa: float, diffusivity: float):
    """``E[cos k(theta - mu)]`` at time ``t`` of ``dp/dt = D p''`` from a von Mises law of concentration ``kappa``.

    ``(I_k(kappa) / I_0(kappa)) e^(-k^2 D t)``: the heat semigroup multiplies the ``k``-th Fourier coefficient
    by ``e^(-k^2 D t)``.
    """
    from scipy.special import ive

    k = check_int("k", k, low=0)
    kappa = check_real("kappa", kappa, low=0.0)
    diffusivity = check_real("diffusivity", diffusivity, low=0.0)
    t = np.asarray(t, dtype=float)
    return ive(k, kappa) / ive(0, kappa) * np.exp(-(k * k) * diffusivity * t)


def sphere_heat_moment(degree: int, t, *, kappa: float, diffusivity: float):
    """``E[P_l(<mu, x>)]`` at time ``t`` of ``dp/dt = D Delta p`` on S^2 from a vMF law of concentration ``kappa``.

    ``(I_(l+1/2)(kappa) / I_(1/2)(kappa)) e^(-l(l+1) D t)`` (``E_0[P_l] = i_l(kappa) / i_0(kappa)`` by
    ``int e^(kappa z) P_l(z) dz = 2 i_l(kappa)``; the heat semigroup multiplies degree ``l`` by
    ``e^(-l(l+1) D t)``).
    """
    from scipy.special import ive

    degree = check_int("degree", degree, low=0)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True)
    diffusivity = check_real("diffusivity", diffusivity, low=0.0)
    t = np.asarray(t, dtype=float)
    return ive(degree + 0.5, kappa) / ive(0.5, kappa) * np.exp(-degree * (degree + 1) * diffusivity * t)


def circle_kernel_symbol(eps: float, k):
    """``int_0^(2 pi) exp(-(1 - cos theta) / eps) e^(-i k theta) d theta = 2 pi e^(-1/eps) I_k(1/eps)``."""
    from scipy.special import ive

    eps = check_real("eps", eps, low=0.0, low_open=True)
    return 2.0 * math.pi * ive(np.abs(np.asarray(k)), 1.0 / eps)


def sphere_kernel_symbol(eps: float, degree):
    """Funk-Hecke multiplier ``2 pi int_(-1)^1 exp(-(1 - t)/eps) P_l(t) dt``.

    ``= 4 pi sqrt(pi eps / 2) e^(-1/eps) I_(l+1/2)(1/eps)`` (from ``int e^(zt) P_l(t) dt = 2 i_l(z)``).
    """
    from scipy.special import ive

    eps = check_real("eps", eps, low=0.0, low_open=True)
    return 4.0 * math.pi * math.sqrt(math.pi * eps / 2.0) * ive(np.asarray(degree) + 0.5, 1.0 / eps)


@dataclasses.dataclass(frozen=True)
class ContinuumOperators:
    """The finite-eps continuum operators at the evaluation points (see the module docstring).

    Attributes
    ----------
    softmax : ndarray of shape (n, len(fs))
        ``(T f - f) / eps`` (row normalisation), one column per function.
    sinkhorn : ndarray of shape (n, len(fs))
        ``(P f - f) / eps`` (doubly stochastic normalisation).
    scaling : ndarray
        The scaling ``d`` of the doubly stochastic normalisation (``d(x) int k d p = 1``).
    scaling_residual : float
        ``max |d K(d p) - 1|`` on the solver's grid.
    """

    softmax: np.ndarray
    sinkhorn: np.ndarray
    scaling: np.ndarray
    scaling_residual: float


def _scaling(apply_kernel, p, tol=SCALING_RESIDUAL, max_iter=500):
    """Solve ``d K(d p) = 1`` on the grid by ``u <- (u - log K(e^u p)) / 2``; assert the residual."""
    u = -0.5 * np.log(apply_kernel(p))
    for _ in range(max_iter):
        kd = apply_kernel(np.exp(u) * p)
        res = float(np.max(np.abs(np.exp(u) * kd - 1.0)))
        if res <= tol:
            return np.exp(u), res
        u = 0.5 * (u - np.log(kd))
    raise ArithmeticError(f"the continuum scaling did not reach {tol:g} (residual {res:.3g})")


def _circle_grid_size(eps: float) -> int:
    """Uniform grid points: the kernel's width sqrt(eps) resolved by >= 24 points, at least 1024."""
    m = max(1024, int(2 ** math.ceil(math.log2(24 * 2 * math.pi / math.sqrt(eps)))))
    if m > 2**20:
        raise InputError(f"eps = {eps:g} needs a continuum grid of {m} points: eps must be >= 1e-6")
    return m


def circle_continuum(pdf, fs, eps: float, theta) -> ContinuumOperators:
    """The two continuum operators on S^1 at angles ``theta`` (density ``pdf(theta)``, functions ``fs``).

    ``pdf`` and each of ``fs`` are vectorised callables of the angle (``pdf`` a density w.r.t. arc length,
    smooth and positive); the operators have one column per function. Convolutions by FFT on ``M``
    uniform points with the exact symbol :func:`circle_kernel_symbol`; values at ``theta`` by
    trigonometric interpolation of the band-limited convolutions.
    """
    eps = check_real("eps", eps, low=0.0, low_open=True)
    m = _circle_grid_size(eps)
    grid = 2.0 * math.pi * np.arange(m) / m
    wav = np.fft.rfftfreq(m, d=1.0 / m)
    symbol = circle_kernel_symbol(eps, wav)
    keep = symbol > 1e-18 * symbol[0]
    weights = np.where(wav == 0, 1.0, 2.0)
    if m % 2 == 0:
        weights = np.where(wav == m // 2, 1.0, weights)
    th = np.asarray(theta, dtype=float)
    phase = np.exp(1j * np.outer(th, wav[keep])) * weights[keep]  # real series in the rfft layout

    def coefficients(g):  # Fourier coefficients of the convolution K g, g sampled on the grid (columns)
        return np.fft.rfft(g, axis=0) / m * symbol.reshape((-1,) + (1,) * (g.ndim - 1))

    def on_grid(g):
        return np.fft.irfft(coefficients(g) * m, n=m, axis=0)

    def at(g):
        return (phase @ coefficients(g)[keep]).real

    p = np.asarray(pdf(grid), dtype=float)
    fv = np.stack([np.asarray(f(grid), dtype=float) for f in fs], axis=1)
    d, res = _scaling(on_grid, p)
    f_at = np.stack([np.asarray(f(th), dtype=float) for f in fs], axis=1)
    soft = at(p[:, None] * fv) / at(p)[:, None]
    kdp = at(d * p)
    sink = at((d * p)[:, None] * fv) / kdp[:, None]
    return ContinuumOperators(softmax=(soft - f_at) / eps, sinkhorn=(sink - f_at) / eps, scaling=1.0 / kdp,
                              scaling_residual=res)


def sphere_continuum(pdf_z, fs, eps: float, z, *, degree: int = 256) -> ContinuumOperators:
    """The two continuum operators on S^2 for zonal ``p`` and ``fs`` (functions of ``z = <mu, x>``) at ``z``.

    ``pdf_z(z)`` is the density w.r.t. surface area (e.g. ``kappa e^(kappa z) / (4 pi sinh kappa)``); the
    operators have one column per function of ``fs``. Legendre coefficients by Gauss-Legendre quadrature
    (``2 degree`` nodes), the kernel applied by the Funk-Hecke multipliers :func:`sphere_kernel_symbol` up
    to ``degree`` (they decay like ``e^(-l^2 eps / 2)``: ``degree^2 eps >= 80`` is required).
    """
    eps = check_real("eps", eps, low=0.0, low_open=True)
    degree = check_int("degree", degree, low=8)
    if degree ** 2 * eps < 80.0:
        raise InputError(f"degree = {degree} does not resolve eps = {eps:g}: need degree^2 eps >= 80 (raise degree)")
    nodes, weights = legendre.leggauss(2 * degree)
    ls = np.arange(degree + 1)
    vander = legendre.legvander(nodes, degree)  # P_l(nodes)
    lam = sphere_kernel_symbol(eps, ls)
    zz = np.asarray(z, dtype=float)
    at_z = legendre.legvander(zz, degree)

    def coefficients(g):  # Legendre coefficients of K g: lam_l (2l+1)/2 int g P_l (columns)
        c = vander.T @ (weights.reshape((-1,) + (1,) * (g.ndim - 1)) * g)
        return (lam * (2 * ls + 1) / 2.0).reshape((-1,) + (1,) * (g.ndim - 1)) * c

    p = np.asarray(pdf_z(nodes), dtype=float)
    fv = np.stack([np.asarray(f(nodes), dtype=float) for f in fs], axis=1)
    d, res = _scaling(lambda g: vander @ coefficients(g), p)
    f_at = np.stack([np.asarray(f(zz), dtype=float) for f in fs], axis=1)
    soft = (at_z @ coefficients(p[:, None] * fv)) / (at_z @ coefficients(p))[:, None]
    kdp = at_z @ coefficients(d * p)
    sink = (at_z @ coefficients((d * p)[:, None] * fv)) / kdp[:, None]
    return ContinuumOperators(softmax=(soft - f_at) / eps, sinkhorn=(sink - f_at) / eps, scaling=1.0 / kdp,
                              scaling_residual=res)


def vmf_fibonacci_points(n: int, *, kappa: float, mu) -> np.ndarray:
    """``n`` points of S^2 spread like a von Mises-Fisher law (concentration ``kappa``, mean direction ``mu``).

    ``z_i = F^-1((i + 1/2) / n)`` with the exact CDF ``F(z) = (e^(kappa z) - e^-kappa) / (e^kappa - e^-kappa)``
    of ``z = <mu, x>`` (``z = 1 + log(u + (1 - u) e^(-2 kappa)) / kappa``), azimuths ``i pi (3 - sqrt 5)``
    (golden angle), rotated so that the pole goes to ``mu``. Deterministic; its empirical moments of zonal
    functions are midpoint sums of the exact ones.
    """
    n = check_int("n", n, low=1)
    kappa = check_real("kappa", kappa, low=0.0, low_open=True)
    mu = np.asarray(mu, dtype=float)
    if mu.shape != (3,) or not np.all(np.isfinite(mu)) or abs(np.linalg.norm(mu) - 1.0) > 1e-10:
        raise InputError(f"mu must be a unit vector of R^3, got {mu!r}")
    u = (np.arange(n) + 0.5) / n
    z = 1.0 + np.log(u + (1.0 - u) * math.exp(-2.0 * kappa)) / kappa
    z = np.clip(z, -1.0, 1.0)
    phi = np.arange(n) * math.pi * (3.0 - math.sqrt(5.0))
    r = np.sqrt(np.maximum(1.0 - z * z, 0.0))
    pts = np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)
    # rotate e_3 to mu by the reflection pair (Householder twice = a rotation)
    e3 = np.array([0.0, 0.0, 1.0])
    if np.allclose(mu, e3):
        return pts
    if np.allclose(mu, -e3):
        return pts * np.array([1.0, -1.0, -1.0])
    h1 = e3 + mu
    h1 /= np.linalg.norm(h1)
    # reflect through the plane orthogonal to h1 (sends e3 to -mu), then through the plane orthogonal to mu
    pts = pts - 2.0 * np.outer(pts @ h1, h1)
    return pts - 2.0 * np.outer(pts @ mu, mu)
