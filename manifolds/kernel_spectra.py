"""Exact continuum spectra of radial FNA kernels on S^1 and S^2 (the references of ``verify.weyl``).

A radial score ``C(x, y) = Phi(d(x, y) / s)`` on a compact homogeneous manifold with the uniform
density defines, as the number of points goes to infinity at fixed scale ``s``, the Markov operator
``(A f)(x) = int Phi(d(x, y)/s) f(y) dy / int Phi(d(x, y)/s) dy``. Its eigenfunctions are the Fourier
modes ``e^{ikx}`` on S^1 and the spherical harmonics of degree ``l`` on S^2, and its eigenvalues are
one-dimensional integrals:

* S^1 (geodesic distance ``y``; chordal distance: ``2 sin(y/2)`` inside Phi):
  ``1 - eta_k = N_k / Z``, ``N_k = 4 int_0^pi Phi(y/s) sin^2(k y/2) dy``, ``Z = 2 int_0^pi Phi(y/s) dy``;
* S^2 (Funk-Hecke, geodesic distance ``theta``):
  ``1 - eta_l = int_0^pi Phi(theta/s) (1 - P_l(cos theta)) sin theta dtheta / int_0^pi Phi(theta/s) sin theta dtheta``,
  multiplicity ``2l + 1``.

The generator eigenvalues are ``lambda = -log(eta) / t`` with ``t = s^alpha``. As ``s -> 0`` on S^1,
``lambda_k -> m(k) / M0`` with the geodesic fractional multiplier
``m(k) = int_{-pi}^{pi} (1 - cos k y) |y|^-(1+alpha) dy`` (closed form through the upper incomplete gamma
function) and ``M0 = int_{R^d} Phi(|z|) dz``.

This module is the *independent* reference: it evaluates the profile ``Phi`` from its closed form
itself (it imports nothing of :mod:`spectral` but the input validators), and uses only NumPy/SciPy
quadrature. :func:`circle_relaxation_of` and :func:`sphere_relaxation_of` take any radial profile
``Phi(z)`` given as a function (a user's kernel held to the Weyl law by ``verify.weyl --kernel
module:function``); the FNA functions below are those applied to ``Phi_alpha``. The integrals are
computed by Gauss-Legendre on panels that are geometric near 0 (they resolve the kernel core of width
``s``) and no longer than a quarter period ``pi / (2 k)`` elsewhere (they resolve the oscillation);
the result agrees with mpmath quadrature to about 1e-14 relative (``tests/manifolds/test_kernel_spectra.py``).

References
----------
"Fractional neural attention" (FNA): eqs. (9)-(10) (profile),
(7) (constant ``c_{d,alpha}``), (22) and Fig. 2a (Weyl law), Theorem 2 (limit operator).
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = [
    "DISTANCES",
    "profile",
    "circle_relaxation_of",
    "sphere_relaxation_of",
    "fractional_constant",
    "profile_mass",
    "circle_relaxation",
    "circle_eigenvalues",
    "circle_generator_eigenvalues",
    "sphere_relaxation",
    "sphere_eigenvalues",
    "sphere_generator_eigenvalues",
    "geodesic_multiplier",
    "limit_generator_eigenvalues",
    "limit_asymptote",
]

DISTANCES = ("geodesic", "chordal")

_GL_NODES = 24  # Gauss-Legendre nodes per panel: each panel's integrand is analytic in an ellipse
# with rho >= 5.8 (nearest singularity of (1 + y/s)^-p at y = -s), so 24 nodes give rho^-48 < 1e-30.
_LAGUERRE_NODES = 100  # tail integral of m(k): 100 nodes give 7e-15 relative at k pi = pi (measured
# against mpmath.quadosc for alpha in [0.3, 1.99]); the error only decreases for larger k.


# ----------------------------------------------------------------------------------- validation


def _alpha(alpha, *, below_two: bool = False) -> float:
    """``0 < alpha <= 2`` (``< 2`` where the fractional constants need it)."""
    return check_real("alpha", alpha, low=0.0, high=2.0, low_open=True, high_open=below_two)


def _degrees(k, name: str) -> np.ndarray:
    k = np.asarray(k)
    if k.dtype.kind not in "iu" and not (k.dtype.kind == "f" and np.all(np.isfinite(k)) and np.all(k == np.round(k))):
        raise InputError(f"{name} must hold integers >= 0, got {k!r}")
    if np.any(k < 0):
        raise InputError(f"{name} must hold integers >= 0, got a minimum of {int(np.min(k))}")
    return k.astype(np.int64)


# ---------------------------------------------------------------------------------- the profile


def profile(z, *, alpha, dim=1):
    r"""The FNA score profile :math:`\Phi_\alpha(z)`, written out independently of :mod:`spectral`.

    Parameters
    ----------
    z : array_like of float
        Scaled distances ``d / s >= 0``.
    alpha : float
        Order in ``(0, 2]``.
    dim : float, optional
        Exponent dimension ``d_M`` (intrinsic dimension of the point set), ``>= 1``.

    Returns
    -------
    numpy.ndarray
        :math:`(1 + z)^{-(d_M + \alpha)}` for ``alpha < 2`` and :math:`e^{-z^2}` for ``alpha = 2``
        (FNA eqs. 9-10).
    """
    alpha = _alpha(alpha)
    dim = check_real("dim", dim, low=1.0)
    z = np.asarray(z, dtype=float)
    if alpha < 2.0:
        return (1.0 + z) ** (-(dim + alpha))
    return np.exp(-z * z)


def fractional_constant(d, alpha) -> float:
    r"""The constant :math:`c_{d,\alpha}` of the singular-integral fractional Laplacian (FNA eq. 7).

    .. math::

        c_{d,\alpha} = \frac{\alpha\, 2^{\alpha-1}\, \Gamma((d+\alpha)/2)}{\pi^{d/2}\, \Gamma(1-\alpha/2)},
        \qquad 0 < \alpha < 2,

    so that :math:`c_{d,\alpha} \int_{\mathbb R^d} (1 - \cos \xi\cdot z) |z|^{-d-\alpha} dz = |\xi|^\alpha`.
    """
    d = check_real("d", d, low=1.0)
    alpha = _alpha(alpha, below_two=True)  # c_(d, alpha) vanishes at alpha = 2
    return alpha * 2.0 ** (alpha - 1.0) * math.gamma((d + alpha) / 2.0) / (
        math.pi ** (d / 2.0) * math.gamma(1.0 - alpha / 2.0)
    )


def profile_mass(alpha, dim=1) -> float:
    r"""Mass :math:`M_0 = \int_{\mathbb R^{d}} \Phi_\alpha(|z|)\, dz` of the profile in dimension ``dim``.

    ``|S^{d-1}| Gamma(d) Gamma(alpha) / Gamma(d + alpha)`` for ``alpha < 2`` (``2/alpha`` for d = 1,
    ``2 pi / (alpha (alpha + 1))`` for d = 2) and ``pi^(d/2)`` for the Gaussian ``alpha = 2``.
    """
    alpha = _alpha(alpha)
    d = check_real("dim", dim, low=1.0)
    if alpha >= 2.0:
        return math.pi ** (d / 2.0)
    sphere_area = 2.0 * math.pi ** (d / 2.0) / math.gamma(d / 2.0)
    return sphere_area * math.gamma(d) * math.gamma(alpha) / math.gamma(d + alpha)


# ---------------------------------------------------------------------------------- quadrature


def _panels(scale: float, kmax: int, *, upper: float = math.pi) -> np.ndarray:
    """Panel edges on [0, upper]: [0, s], then doubling up to a quarter period, then <= pi/(2 kmax)."""
    quarter = math.pi / (2.0 * max(int(kmax), 1))
    edges = [0.0]
    edge = min(scale, upper, quarter)
    while edge < upper:
        edges.append(edge)
        if edge < quarter:
            edge = min(2.0 * edge, quarter, upper)
        else:
            edge = min(edge + quarter, upper)
    edges.append(upper)
    return np.unique(np.asarray(edges))


def _nodes(scale: float, kmax: int, per_panel: int = _GL_NODES) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights (``per_panel`` per panel) on the panels of :func:`_panels`."""
    x, w = np.polynomial.legendre.leggauss(per_panel)
    edges = _panels(scale, kmax)
    a, b = edges[:-1, None], edges[1:, None]
    nodes = 0.5 * (b - a) * x[None, :] + 0.5 * (b + a)
    weights = 0.5 * (b - a) * w[None, :]
    return nodes.ravel(), weights.ravel()


def _profile_function(phi):
    if not callable(phi):
        raise InputError(f"phi must be a function Phi(z) of the scaled distance, got {type(phi).__name__}")
    return phi


def _profile_values(phi, z: np.ndarray) -> np.ndarray:
    """``Phi(z)`` as float64 of the shape of ``z`` (values not judged: a NaN propagates to the spectrum)."""
    out = np.asarray(phi(z), dtype=float)
    if out.shape != z.shape:
        raise InputError(f"phi must return an array of the shape of its argument z {z.shape}, got shape {out.shape}")
    return out


def _per_panel(nodes) -> int:
    return check_int("nodes", nodes, low=2)


def circle_relaxation_of(phi, k, *, scale, distance="geodesic", nodes=_GL_NODES):
    r"""``1 - eta_k`` of the continuum Markov operator of a radial profile ``Phi`` on S^1 (uniform density).

    The same integrals as :func:`circle_relaxation` for any profile: the score of two points at
    distance ``r`` is ``Phi(r / scale)``.

    Parameters
    ----------
    phi : callable
        ``Phi(z)`` of a float64 array of scaled distances ``z >= 0`` (any shape), returning an array of
        the same shape; it should be integrable, non-negative and smooth on the scale of the panels
        (geometric from ``z = 1`` down to 0, at most a quarter period ``pi / (2 k_max)`` elsewhere).
        Compare with ``nodes`` doubled to see whether the quadrature resolves it.
    k : array_like of int
        Fourier frequencies ``>= 0``.
    scale : float
        Kernel scale ``s > 0``.
    distance : {"geodesic", "chordal"}
        Distance inside Phi: the arc ``y`` or the chord ``2 sin(y/2)``.
    nodes : int, optional
        Gauss-Legendre nodes per panel (24: exact to rounding for the FNA profiles).

    Returns
    -------
    numpy.ndarray of float, shape of ``k``
        :math:`N_k / Z` with :math:`N_k = 4\int_0^\pi \Phi(r(y)/s) \sin^2(k y/2)\,dy`,
        :math:`Z = 2\int_0^\pi \Phi(r(y)/s)\,dy` (computed without cancellation).
    """
    phi = _profile_function(phi)
    k = _degrees(k, "k")
    scale = check_real("scale", scale, low=0.0, low_open=True)
    distance = check_option("distance", distance, DISTANCES)
    kmax = int(np.max(k)) if k.size else 1
    y, w = _nodes(scale, kmax, _per_panel(nodes))
    r = y if distance == "geodesic" else 2.0 * np.sin(0.5 * y)
    wphi = w * _profile_values(phi, r / scale)
    z = 2.0 * np.sum(wphi)
    flat = k.ravel().astype(float)
    s2 = np.sin(0.5 * flat[:, None] * y[None, :]) ** 2
    n_k = 4.0 * (s2 @ wphi)
    return (n_k / z).reshape(k.shape)


def circle_relaxation(k, *, alpha, scale, dim=1, distance="geodesic"):
    r"""``1 - eta_k`` of the continuum FNA Markov operator on S^1 (uniform density, scale ``s``).

    Parameters
    ----------
    k : array_like of int
        Fourier frequencies ``>= 0``.
    alpha : float
        Kernel order in ``(0, 2]`` (``2``: Gaussian profile).
    scale : float
        Kernel scale ``s > 0`` (the paper's kappa).
    dim : float, optional
        Exponent dimension of the profile (1 is the intrinsic dimension of S^1).
    distance : {"geodesic", "chordal"}
        Distance inside Phi: the arc ``y`` or the chord ``2 sin(y/2)``.

    Returns
    -------
    numpy.ndarray of float, shape of ``k``
        :math:`N_k / Z` with :math:`N_k = 4\int_0^\pi \Phi(r(y)/s) \sin^2(k y/2)\,dy`,
        :math:`Z = 2\int_0^\pi \Phi(r(y)/s)\,dy` (computed without cancellation).
    """
    k = _degrees(k, "k")
    alpha = _alpha(alpha)
    dim = check_real("dim", dim, low=1.0)
    return circle_relaxation_of(lambda z: profile(z, alpha=alpha, dim=dim), k, scale=scale, distance=distance)


def circle_eigenvalues(k, *, alpha, scale, dim=1, distance="geodesic"):
    """Eigenvalues ``eta_k`` of the continuum FNA Markov operator on S^1 (see :func:`circle_relaxation`)."""
    return 1.0 - circle_relaxation(k, alpha=alpha, scale=scale, dim=dim, distance=distance)


def circle_generator_eigenvalues(k, *, alpha, scale, dim=1, distance="geodesic", time=None):
    r"""Generator eigenvalues :math:`\lambda_k = -\log(\eta_k)/t` of the continuum operator on S^1.

    ``t = scale**alpha`` unless ``time`` is given; computed as ``-log1p(-(1-eta))/t``.
    """
    gap = circle_relaxation(k, alpha=alpha, scale=scale, dim=dim, distance=distance)
    t = float(scale) ** float(alpha) if time is None else check_real("time", time, low=0.0, low_open=True)
    return -np.log1p(-gap) / t


def sphere_relaxation_of(phi, l, *, scale, nodes=_GL_NODES):
    r"""``1 - eta_l`` of the continuum operator of a radial profile ``Phi`` on S^2 by Funk-Hecke (geodesic).

    The same integrals as :func:`sphere_relaxation` for any profile (see :func:`circle_relaxation_of`
    for what ``phi`` and ``nodes`` are).

    Returns
    -------
    numpy.ndarray
        :math:`\int_0^\pi \Phi(\theta/s)(1 - P_l(\cos\theta))\sin\theta\,d\theta /
        \int_0^\pi \Phi(\theta/s)\sin\theta\,d\theta`, with ``1 - P_l(cos theta)`` taken from
        ``P_l(1 - 2 u)``, ``u = sin^2(theta/2)``, by the three-term recurrence for ``1 - P_l``
        (no cancellation near ``theta = 0``).
    """
    phi = _profile_function(phi)
    l = _degrees(l, "l")
    scale = check_real("scale", scale, low=0.0, low_open=True)
    lmax = int(np.max(l)) if l.size else 1
    theta, w = _nodes(scale, lmax, _per_panel(nodes))
    wphi = w * _profile_values(phi, theta / scale) * np.sin(theta)
    z = np.sum(wphi)
    # q_l = 1 - P_l(x), x = 1 - 2u. Recurrence (l+1) P_{l+1} = (2l+1) x P_l - l P_{l-1} rewritten for q:
    # (l+1) q_{l+1} = (2l+1) (x q_l + 2u) - l q_{l-1}, exact in exact arithmetic, and every term is
    # O(u) near theta = 0, so the relative accuracy is kept where 1 - P_l is tiny.
    u = np.sin(0.5 * theta) ** 2
    x = 1.0 - 2.0 * u
    q = np.zeros((lmax + 1, theta.size))
    if lmax >= 1:
        q[1] = 2.0 * u
    for n in range(1, lmax):
        q[n + 1] = ((2 * n + 1) * (x * q[n] + 2.0 * u) - n * q[n - 1]) / (n + 1)
    return (q[l.ravel()] @ wphi / z).reshape(l.shape)


def sphere_relaxation(l, *, alpha, scale, dim=2):
    r"""``1 - eta_l`` of the continuum FNA operator on S^2 by Funk-Hecke (geodesic distance).

    Parameters
    ----------
    l : array_like of int
        Degrees ``>= 0`` (multiplicity ``2l + 1``).
    alpha, scale : float
        Kernel order in ``(0, 2]`` and scale ``s > 0``.
    dim : float, optional
        Exponent dimension of the profile (2 is the intrinsic dimension of S^2).

    Returns
    -------
    numpy.ndarray
        :math:`\int_0^\pi \Phi(\theta/s)(1 - P_l(\cos\theta))\sin\theta\,d\theta /
        \int_0^\pi \Phi(\theta/s)\sin\theta\,d\theta` (:func:`sphere_relaxation_of` with
        ``Phi_alpha``).
    """
    l = _degrees(l, "l")
    alpha = _alpha(alpha)
    dim = check_real("dim", dim, low=1.0)
    return sphere_relaxation_of(lambda z: profile(z, alpha=alpha, dim=dim), l, scale=scale)


def sphere_eigenvalues(l, *, alpha, scale, dim=2):
    """Funk-Hecke eigenvalues ``eta_l`` of the continuum FNA operator on S^2 (:func:`sphere_relaxation`)."""
    return 1.0 - sphere_relaxation(l, alpha=alpha, scale=scale, dim=dim)


def sphere_generator_eigenvalues(l, *, alpha, scale, dim=2, time=None):
    """Generator eigenvalues ``-log(eta_l) / t`` on S^2, ``t = scale**alpha`` unless ``time`` is given."""
    gap = sphere_relaxation(l, alpha=alpha, scale=scale, dim=dim)
    t = float(scale) ** float(alpha) if time is None else check_real("time", time, low=0.0, low_open=True)
    return -np.log1p(-gap) / t


# ---------------------------------------------------------------------------------- s -> 0 limit


def _cos_tail(a: np.ndarray, alpha: float) -> np.ndarray:
    r""":math:`\int_a^\infty \cos u\, u^{-1-\alpha} du = \Re[e^{-i\pi\alpha/2}\Gamma(-\alpha, -ia)]` for ``a > 0``.

    The upper incomplete gamma function of imaginary argument is evaluated through its Laplace
    representation (rotate the contour to ``u = a + i y``):
    :math:`e^{-i\pi\alpha/2}\Gamma(-\alpha,-ia) = i e^{ia}\int_0^\infty e^{-y}(a+iy)^{-1-\alpha}dy`,
    a smooth, exponentially damped integrand (Gauss-Laguerre).
    """
    from scipy.special import roots_laguerre

    y, w = roots_laguerre(_LAGUERRE_NODES)
    a = np.asarray(a, dtype=float)
    vals = (a.ravel()[:, None] + 1j * y[None, :]) ** (-1.0 - alpha) @ w
    return (1j * np.exp(1j * a.ravel()) * vals).real.reshape(a.shape)


def geodesic_multiplier(k, *, alpha):
    r"""The geodesic fractional multiplier :math:`m(k) = \int_{-\pi}^{\pi}(1-\cos ky)|y|^{-1-\alpha}dy`.

    Closed form (``0 < alpha < 2``):

    .. math::

        m(k) = |k|^\alpha \Bigl[\frac{1}{c_{1,\alpha}} - 2 T(|k|\pi)\Bigr],\quad
        T(a) = \int_a^\infty (1-\cos u) u^{-1-\alpha} du
             = \frac{a^{-\alpha}}{\alpha} - \Re\bigl[e^{-i\pi\alpha/2}\,\Gamma(-\alpha, -ia)\bigr],

    with the upper incomplete gamma function :math:`\Gamma`. This is the *non-periodised* operator
    (the kernel truncated at the antipode), not the spectral :math:`|k|^\alpha`.
    """
    alpha = _alpha(alpha, below_two=True)  # the multiplier of the fractional operator
    k = np.abs(_degrees(k, "k")).astype(float)
    c = fractional_constant(1, alpha)
    out = np.zeros_like(k)
    pos = k > 0
    a = k[pos] * math.pi
    tail = a ** (-alpha) / alpha - _cos_tail(a, alpha)
    out[pos] = k[pos] ** alpha * (1.0 / c - 2.0 * tail)
    return out


def limit_generator_eigenvalues(k, *, alpha, dim=1):
    r"""The ``s -> 0`` limit of the S^1 generator eigenvalues: :math:`m(k)/M_0` (``k^2/4`` for ``alpha = 2``).

    ``dim`` is the profile's exponent dimension: the S^1 limit :math:`m(k)/M_0` holds for the
    intrinsic ``dim = 1`` (with another exponent the tail is not :math:`|y|^{-1-\alpha}`).
    """
    alpha = _alpha(alpha)
    if check_real("dim", dim, low=1.0) != 1.0:
        raise InputError(f"dim must be 1 (the intrinsic dimension of S^1) for this limit, got {dim!r}")
    k = _degrees(k, "k").astype(float)
    if alpha >= 2.0:
        # Gaussian: 1 - eta_k = 1 - exp(-k^2 s^2 / 4) + O(e^{-pi^2/s^2}), t = s^2.
        return k * k / 4.0
    return geodesic_multiplier(k, alpha=alpha) / profile_mass(alpha, 1)


def limit_asymptote(k, *, alpha):
    r"""Large-``k`` asymptote of :math:`m(k)/M_0`: :math:`k^\alpha/(M_0 c_{1,\alpha}) - 2/(\alpha\pi^\alpha M_0)`."""
    alpha = _alpha(alpha, below_two=True)  # the fractional asymptote
    k = _degrees(k, "k").astype(float)
    m0 = profile_mass(alpha, 1)
    return k**alpha / (m0 * fractional_constant(1, alpha)) - 2.0 / (alpha * math.pi**alpha * m0)
