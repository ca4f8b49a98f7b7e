r"""Graph-Laplacian constants and finite-eps continuum spectra on S^1 and S^2, from the definitions.

The exact references of the graph-Laplacian convergence papers (Calder & Garcia Trillos, ACHA 2022,
arXiv 1910.13476; Garcia Trillos, Gerlach, Hein & Slepcev, FoCM 2020, arXiv 1801.10108; Cheng & Wu,
ACHA 2022, arXiv 2101.09875), computed without :mod:`spectral`'s graph code:

* the kernel constants by quadrature: the unit-ball volume ``alpha_m`` (by the recursion
  ``alpha_m = 2 pi / m alpha_(m-2)``), ``sigma_eta = int_{B_1} z_1^2 dz`` (slices of the ball) and the
  moments ``m_0, m_2`` of ``h(r) = exp(-r/4) / (4 pi)^(m/2)`` (radial integrals);
* the eigenvalues of the continuum operators at finite ``eps`` on the unit sphere with uniform density
  (Funk-Hecke: every spherical harmonic of degree ``l`` is an eigenfunction of a zonal kernel):

  - eps-graph (indicator of the chord ball, ``|x - y| <= eps``), unnormalised
    ``L_eps u(x) = 2 / (sigma_eta eps^(m+2)) int_{|x-y|<=eps} (u(x) - u(y)) dV(y)``: on S^1 with
    ``theta_0 = 2 arcsin(eps/2)``, ``lambda_k = 4 / (sigma_1 eps^3) (theta_0 - sin(k theta_0)/k)``; on S^2 with
    ``t_0 = 1 - eps^2/2``, ``lambda_l = 2 pi 2 / (sigma_2 eps^4) [(1 - t_0) - (P_(l-1)(t_0) - P_(l+1)(t_0))/(2l+1)]``
    (``int_t^1 P_l = (P_(l-1)(t) - P_(l+1)(t))/(2l+1)``); the random-walk form divides the kernel
    integral by the cap's volume instead and multiplies by ``2 (m + 2) / eps^2``;
  - Gaussian ``K(x, y) = eps^(-m/2) exp(-|x-y|^2/(4 eps)) / (4 pi)^(m/2)`` with ``|x - y|^2 = 2 - 2 x.y``:
    ``int K (1 - Y(y)/Y(x)) dV`` is ``2 pi (I_0(z) - I_k(z)) e^(-z)`` on S^1 and ``4 pi (i_0(z) - i_l(z))
    e^(-z)`` on S^2 (``z = 1/(2 eps)``, ``i_l`` the modified spherical Bessel function), times
    ``eps^(-m/2) (4 pi)^(-m/2)``; unnormalised ``L_un`` divides by ``(m_2/2) eps``, the random-walk ``L_rw``
    is ``(1 - I_k/I_0) / eps`` (``(1 - i_l/i_0) / eps`` on S^2);

  each tends to the Laplace-Beltrami eigenvalue ``l (l + m - 1)`` as ``eps -> 0``;
* the exact eigenspaces at sample points (``cos k theta, sin k theta``; the ``2l + 1`` real spherical
  harmonics of :class:`manifolds.SphericalHarmonic`) and the distance of computed eigenvectors to them:
  the root-mean-square sine of the principal angles in a weighted inner product.

Host NumPy/SciPy only.
"""

from __future__ import annotations

import math

import numpy as np

from manifolds import functions
from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = [
    "KERNELS",
    "NORMALIZATIONS",
    "continuum_eigenvalue",
    "eigenspace_basis",
    "eigenspace_distance",
    "gaussian_moments",
    "indicator_moment",
    "laplace_beltrami_eigenvalue",
    "unit_ball_volume",
]

KERNELS = ("indicator", "gaussian")
NORMALIZATIONS = ("unnormalized", "random_walk")


def unit_ball_volume(m: int) -> float:
    """``alpha_m`` by the recursion ``alpha_m = (2 pi / m) alpha_(m-2)``, ``alpha_0 = 1``, ``alpha_1 = 2``."""
    m = check_int("m", m, low=0)
    vol = 1.0 if m % 2 == 0 else 2.0
    for j in range(2 + m % 2, m + 1, 2):
        vol *= 2.0 * math.pi / j
    return vol


def indicator_moment(m: int) -> float:
    """``sigma_eta = int_{B_1 in R^m} z_1^2 dz`` by quadrature over slices ``z_1 = t``.

    The slice at ``t`` is an ``(m-1)``-ball of radius ``sqrt(1 - t^2)``:
    ``int_{-1}^1 t^2 alpha_(m-1) (1 - t^2)^((m-1)/2) dt``.
    """
    from scipy.integrate import quad

    m = check_int("m", m, low=1)
    a = unit_ball_volume(m - 1)
    val, _ = quad(lambda t: t * t * a * (1.0 - t * t) ** ((m - 1) / 2), -1.0, 1.0, epsabs=0, epsrel=1e-13)
    return float(val)


def gaussian_moments(m: int) -> tuple[float, float]:
    """``(m_0, m_2) = (int h(|u|^2) du, int h(|u|^2) u_1^2 du)`` for ``h(r) = exp(-r/4) / (4 pi)^(m/2)``.

    Radial quadrature: ``|S^(m-1)| int_0^inf h(r^2) r^(m-1) dr`` and ``(1/m)`` of the same with ``r^(m+1)``
    (``|S^(m-1)| = m alpha_m``).
    """
    from scipy.integrate import quad

    m = check_int("m", m, low=1)
    area = m * unit_ball_volume(m)
    c = (4.0 * math.pi) ** (-m / 2)
    m0, _ = quad(lambda r: c * math.exp(-r * r / 4) * r ** (m - 1), 0.0, np.inf, epsabs=0, epsrel=1e-13)
    m2, _ = quad(lambda r: c * math.exp(-r * r / 4) * r ** (m + 1), 0.0, np.inf, epsabs=0, epsrel=1e-13)
    return float(area * m0), float(area * m2 / m)


def laplace_beltrami_eigenvalue(sphere_dim: int, degree: int) -> float:
    """``l (l + m - 1)``: the eigenvalue of ``-Delta`` on the unit sphere S^m for degree ``l``."""
    sphere_dim = check_int("sphere_dim", sphere_dim, low=1, high=2)
    degree = check_int("degree", degree, low=0)
    return float(degree * (degree + sphere_dim - 1))


def continuum_eigenvalue(sphere_dim: int, degree: int, eps: float, *, kernel: str,
                         normalization: str = "unnormalized") -> float:
    """The eigenvalue on degree-``l`` harmonics of the continuum graph Laplacian at finite ``eps`` (module docstring).

    Parameters
    ----------
    sphere_dim : {1, 2}
        The unit sphere S^1 (in R^2) or S^2 (in R^3), uniform density.
    degree : int
        Fourier mode ``k`` (S^1) or spherical-harmonic degree ``l`` (S^2), ``>= 0``.
    eps : float
        Chord radius of the indicator kernel (``0 < eps < 2``) or the Gaussian bandwidth (``> 0``).
    kernel : {"indicator", "gaussian"}
    normalization : {"unnormalized", "random_walk"}
        For uniform density the density-corrected Laplacian equals the random-walk one.

    Returns
    -------
    float
        Tends to ``l (l + m - 1)`` as ``eps -> 0``.
    """
    from scipy.special import eval_legendre, ive

    m = check_int("sphere_dim", sphere_dim, low=1, high=2)
    l = check_int("degree", degree, low=0)
    kernel = check_option("kernel", kernel, KERNELS)
    normalization = check_option("normalization", normalization, NORMALIZATIONS)
    if kernel == "indicator":
        eps = check_real("eps", eps, low=0.0, high=2.0, low_open=True, high_open=True)
        if m == 1:
            th = 2.0 * math.asin(eps / 2.0)
            integral = 2.0 * th - (2.0 * math.sin(l * th) / l if l else 2.0 * th)  # int (1 - cos k theta)
            cap = 2.0 * th
        else:
            t0 = 1.0 - eps * eps / 2.0
            tail = (eval_legendre(l - 1, t0) - eval_legendre(l + 1, t0)) / (2 * l + 1) if l else 1.0 - t0
            integral = 2.0 * math.pi * ((1.0 - t0) - tail)
            cap = 2.0 * math.pi * (1.0 - t0)
        if normalization == "unnormalized":
            return float(2.0 / (indicator_moment(m) * eps ** (m + 2)) * integral)
        return float(2.0 * (m + 2) / eps**2 * integral / cap)
    eps = check_real("eps", eps, low=0.0, low_open=True)
    z = 1.0 / (2.0 * eps)
    nu = (m - 1) / 2.0  # S^1: I_k; S^2: i_l(z) = sqrt(pi / (2z)) I_(l + 1/2)(z)
    i0, il = ive(nu, z), ive(l + nu, z)
    if normalization == "random_walk":
        return float((1.0 - il / i0) / eps)
    if m == 1:
        integral = 2.0 * math.pi * (i0 - il)
    else:
        integral = 4.0 * math.pi * math.sqrt(math.pi / (2.0 * z)) * (i0 - il)
    _, m2 = gaussian_moments(m)
    return float(eps ** (-m / 2) * (4.0 * math.pi) ** (-m / 2) * integral / ((m2 / 2.0) * eps))


def eigenspace_basis(points, sphere_dim: int, degree: int) -> np.ndarray:
    """The eigenfunctions of degree ``l`` at the points: ``(n, 2)`` on S^1, ``(n, 2l + 1)`` on S^2 (``l <= 8``)."""
    m = check_int("sphere_dim", sphere_dim, low=1, high=2)
    l = check_int("degree", degree, low=0, high=8)
    x = np.asarray(points, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] != m + 1:
        raise InputError(f"points must have shape (n, {m + 1}) on S^{m}, got {x.shape}")
    if l == 0:
        return np.ones((x.shape[0], 1))
    if m == 1:
        theta = np.arctan2(x[:, 1], x[:, 0])
        return np.stack([np.cos(l * theta), np.sin(l * theta)], axis=1)

    return np.stack([np.asarray(functions.SphericalHarmonic(l, j)(x)) for j in range(-l, l + 1)], axis=1)


def eigenspace_distance(vectors, basis, weights=None) -> float:
    """Root-mean-square sine of the principal angles between ``span(vectors)`` and ``span(basis)``.

    Both are orthonormalised in ``<u, v> = sum_i w_i u_i v_i`` (``weights`` ``w``; default 1), and the
    result is ``sqrt(1 - |Q_B^T Q_V|_F^2 / g)`` with ``g`` the number of vectors: 0 when the computed
    space lies in the exact eigenspace, 1 when it is orthogonal to it. For one vector it is the sine of
    its angle to the eigenspace; it does not depend on the basis chosen inside either space.
    """
    v = np.asarray(vectors, dtype=np.float64)
    b = np.asarray(basis, dtype=np.float64)
    v = v[:, None] if v.ndim == 1 else v
    b = b[:, None] if b.ndim == 1 else b
    if v.shape[0] != b.shape[0]:
        raise InputError(f"vectors and basis must have the same number of rows, got {v.shape[0]} and {b.shape[0]}")
    if weights is None:
        root = np.ones(v.shape[0])
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (v.shape[0],) or not np.all(w > 0):
            raise InputError("weights must be a positive vector with one entry per row")
        root = np.sqrt(w)
    qv, _ = np.linalg.qr(root[:, None] * v)
    qb, _ = np.linalg.qr(root[:, None] * b)
    overlap = float(np.sum((qb.T @ qv) ** 2)) / v.shape[1]
    return math.sqrt(max(0.0, 1.0 - overlap))
