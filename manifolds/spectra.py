"""Exact Laplace-Beltrami spectra of the circle and the spheres.

On S^d the eigenfunctions of the Laplace-Beltrami operator are the spherical
harmonics of degree ``l`` (restrictions of homogeneous harmonic polynomials in
``d + 1`` variables), with eigenvalue ``-l (l + d - 1)`` and multiplicity

.. math::

    N(d, l) = \\binom{l + d}{d} - \\binom{l + d - 2}{d},

the dimension of the homogeneous polynomials of degree ``l`` minus that of
degree ``l - 2`` (Stein & Weiss, *Introduction to Fourier Analysis on
Euclidean Spaces*, ch. IV.2).  This gives 1, 2, 2, ... on S^1 (Fourier modes
``cos k t``, ``sin k t``) and ``2 l + 1`` on S^2.

The functions here return the eigenvalues of ``-Delta`` (non-negative,
ascending, repeated by multiplicity), which is what the FNA paper's Weyl-law
statements compare with (FNA eqs. 19-20).
"""

from __future__ import annotations

from math import comb

import numpy as np

from spectral.floor.backend import array_namespace
from spectral.floor.validation import InputError, check_int, check_real

__all__ = [
    "circle_eigenvalues",
    "sphere_multiplicity",
    "sphere_eigenvalues",
    "sphere_eigen_degrees",
    "spectral_fractional_symbol",
]


def sphere_multiplicity(dim: int, l: int) -> int:
    """Number of linearly independent spherical harmonics of degree ``l`` on S^dim.

    Parameters
    ----------
    dim : int
        Intrinsic dimension of the sphere (>= 1).
    l : int
        Degree (>= 0).

    Returns
    -------
    int
        ``C(l + dim, dim) - C(l + dim - 2, dim)`` (``C`` of a negative top is 0):
        2 for ``l >= 1`` on S^1, ``2 l + 1`` on S^2.
    """
    dim = check_int("dim", dim, low=1)
    l = check_int("l", l, low=0)
    lower = comb(l + dim - 2, dim) if l >= 2 else 0
    return comb(l + dim, dim) - lower


def sphere_eigen_degrees(dim: int, count: int) -> np.ndarray:
    """Degree ``l`` of each of the first ``count`` Laplace-Beltrami eigenvalues on S^dim.

    Returns an int64 array of length ``count``, non-decreasing; degree ``l``
    appears ``sphere_multiplicity(dim, l)`` times.
    """
    dim = check_int("dim", dim, low=1)
    count = check_int("count", count, low=1)
    degrees = []
    l = 0
    while len(degrees) < count:
        degrees.extend([l] * sphere_multiplicity(dim, l))
        l += 1
    return np.asarray(degrees[:count], dtype=np.int64)


def sphere_eigenvalues(dim: int, count: int) -> np.ndarray:
    """First ``count`` eigenvalues of ``-Delta`` on S^dim, ascending, with multiplicity.

    Eigenvalue ``l (l + dim - 1)`` repeated ``sphere_multiplicity(dim, l)`` times
    (float64 NumPy array).
    """
    degrees = sphere_eigen_degrees(dim, count).astype(np.float64)
    return degrees * (degrees + dim - 1)


def circle_eigenvalues(count: int) -> np.ndarray:
    """First ``count`` eigenvalues of ``-d^2/dt^2`` on S^1: 0, 1, 1, 4, 4, 9, 9, ...

    ``k^2`` with multiplicity 2 for ``k >= 1`` (modes ``cos k t`` and ``sin k t``).
    """
    return sphere_eigenvalues(1, count)


def spectral_fractional_symbol(eigenvalues, alpha: float):
    """Symbol of the spectral fractional Laplacian ``(-Delta)^(alpha/2)``: ``lambda^(alpha/2)``.

    Parameters
    ----------
    eigenvalues : array
        Eigenvalues ``lambda >= 0`` of ``-Delta`` (any shape, any array namespace).
    alpha : float
        Order, ``0 < alpha <= 2`` (FNA eq. 7: the fractional Laplacian of order alpha/2).

    Returns
    -------
    array
        ``lambda ** (alpha / 2)`` in the namespace of ``eigenvalues``.

    Notes
    -----
    On S^1 this is ``|k|^alpha``, the *periodised spectral* operator; the FNA
    kernel's limit is the geodesic multiplier
    (:func:`manifolds.kernel_spectra.geodesic_multiplier`), which differs at low k.
    """
    alpha = check_real("alpha", alpha, low=0.0, high=2.0, low_open=True)
    if not hasattr(eigenvalues, "shape"):
        eigenvalues = np.asarray(eigenvalues, dtype=np.float64)
    xp = array_namespace(eigenvalues)
    if not xp.isdtype(eigenvalues.dtype, "real floating"):
        eigenvalues = xp.astype(eigenvalues, xp.float64)
    if bool(xp.any(eigenvalues < 0)):
        raise InputError("eigenvalues must be >= 0 (eigenvalues of -Delta)")
    return eigenvalues ** (alpha / 2.0)
