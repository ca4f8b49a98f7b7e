"""Fractional neural attention scores ``Phi_alpha(d / kappa)`` and their time step and bandwidths.

The FNA profile is a power law ``(1 + z)^-(d_M + alpha)`` for ``0 < alpha < 2`` (multiscale) and
``exp(-z^(alpha/(alpha-1)))`` for ``alpha >= 2`` (local); the score of query ``i`` for key ``j`` is
``Phi_alpha(d_ij / kappa)`` with ``d`` the Euclidean distance of the projected tokens (FNA eq. 13)
or the geodesic distance on the sphere (A.1, eq. 39). One attention step is read as ``exp(-t L)``
with ``t = kappa^alpha`` (:func:`fna_time`). :func:`paper_kappa` and :func:`matched_half_width_kappa`
are the bandwidth conventions of the mechanism checks.

Underflow is flushed to exact zero (subnormal scores slow eigensolvers down 100x).

References
----------
"Fractional neural attention" (FNA), eqs. (9), (10), (13), (39); Methods "Text classification";
Appendix A.1.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.arrays import as_distances
from spectral.profiles import TileProfile, declares_profile
from spectral.floor.validation import check_option, check_real

__all__ = ["fna_kernel", "fna_profile", "fna_tile_profile", "fna_time", "matched_half_width_kappa", "paper_kappa"]

KAPPA_VARIANTS = ("text", "sphere")


def _check_alpha(alpha) -> float:
    """``alpha > 0`` (``0 < alpha < 2``: power law, ``alpha >= 2``: local profile)."""
    return check_real("alpha", alpha, low=0.0, low_open=True)


def _check_dim(dim, name: str = "dim") -> float:
    """Intrinsic dimension of the point set (head or manifold dimension for the bandwidths), ``>= 1``."""
    return check_real(name, dim, low=1.0)


def _profile(alpha: float, dim: float, scale: float = 1.0) -> TileProfile:
    """The :class:`~spectral.profiles.TileProfile` of ``Phi_alpha(d / scale)`` (checked parameters)."""
    label = f"fna_kernel(alpha={alpha:g}, scale={scale:g}, dim={dim:g})"
    if alpha < 2.0:
        return TileProfile.power(dim + alpha, scale, name=label)
    return TileProfile.local(alpha / (alpha - 1.0), scale, name=label)


def fna_tile_profile(*, alpha, scale, dim) -> TileProfile:
    """Tile profile of ``functools.partial(fna_kernel, alpha=, scale=, dim=)`` (parameters checked as the kernel
    checks them): the power law ``exp(-(dim + alpha) log(1 + d / scale))`` or the local ``exp(-(d / scale)^p)``."""
    alpha = _check_alpha(alpha)
    dim = _check_dim(dim)
    scale = check_real("scale", scale, low=0.0, low_open=True)
    return _profile(alpha, dim, scale)


def fna_profile(z, *, alpha, dim):
    r"""The FNA score profile :math:`\Phi_\alpha(z)` (FNA eqs. 9 and 10).

    Parameters
    ----------
    z : array of shape (...)
        Scaled distances ``d / kappa``, finite and ``>= 0``.
    alpha : float
        Fractional order, ``> 0``.  ``0 < alpha < 2``: multiscale power law;
        ``alpha >= 2``: local (light-tailed) profile.
    dim : float
        Intrinsic dimension ``d_M`` of the point set (``>= 1``; 1 on S^1, 2 on
        S^2).  Only the power law depends on it.

    Returns
    -------
    array of shape (...)
        Same namespace and floating dtype as ``z`` (integers give float64).

    Notes
    -----
    .. math::

        \Phi_\alpha(z) = (1 + z)^{-(d_M + \alpha)} \quad (0 < \alpha < 2), \qquad
        \Phi_\alpha(z) = \exp\bigl(-z^{\alpha/(\alpha-1)}\bigr) \quad (\alpha \ge 2),

    so ``Phi_2(z) = exp(-z^2)``.  ``d_M`` must be the intrinsic dimension: with
    the ambient one the tail is too light (ledger FNA-10).
    Values below the smallest normal float are flushed to exact 0.

    References
    ----------
    "Fractional neural attention" (FNA), eqs. (9), (10).

    Examples
    --------
    >>> import numpy as np
    >>> from spectral import fna_profile
    >>> fna_profile(np.array([0.0, 1.0]), alpha=1.0, dim=1)
    array([1.  , 0.25])
    """
    alpha = _check_alpha(alpha)
    dim = _check_dim(dim)
    xp, z = as_distances(z, "z")
    if xp is np:  # the numpy path works in place on its argument
        z = np.array(z, copy=True)
    return _profile(alpha, dim).scaled(z)


@declares_profile(fna_tile_profile)
def fna_kernel(dist, *, alpha, scale, dim):
    r"""FNA scores :math:`C_{ij} = \Phi_\alpha(d_{ij} / \kappa)` (FNA eqs. 9, 10, 13; A.1 eq. 39).

    Parameters
    ----------
    dist : array of shape (n, m)
        Distances between queries and keys, finite and ``>= 0``: Euclidean
        ``|W_Q x_i - W_K x_j|`` for eq. 13, geodesic for the sphere variant (A.1).
    alpha : float
        Fractional order ``> 0`` (see :func:`fna_profile`).
    scale : float
        The paper's ``kappa``, ``> 0``.  Generator time ``t = scale**alpha`` (:func:`fna_time`).
    dim : float
        Intrinsic dimension ``d_M >= 1`` of the point set.

    Returns
    -------
    array of shape (n, m)
        Scores in ``(0, 1]`` (exact 0 after underflow), dtype of ``dist``.

    Examples
    --------
    >>> import numpy as np
    >>> from spectral import fna_kernel
    >>> fna_kernel(np.array([[0.0, 2.0]]), alpha=2.0, scale=2.0, dim=1)
    array([[1.        , 0.36787944]])
    """
    alpha = _check_alpha(alpha)
    scale = check_real("scale", scale, low=0.0, low_open=True)
    dim = _check_dim(dim)
    xp, d = as_distances(dist)
    z = d / scale  # a new array: the profile may overwrite it
    return _profile(alpha, dim, scale).scaled(z)


def fna_time(scale, alpha) -> float:
    """Generator time ``t = scale**alpha`` of one FNA step.

    With ``lambda = -log(eta) / t`` the eigenvalues of ``A = N_R(C)`` approach
    those of the (fractional) generator as ``scale -> 0``; the paper writes
    ``kappa = sqrt(eps)``, ``t = eps**(alpha/2)`` (FNA Methods, Fig. 2a).
    """
    alpha = _check_alpha(alpha)
    scale = check_real("scale", scale, low=0.0, low_open=True)
    return scale**alpha


def paper_kappa(d, alpha, *, variant="text") -> float:
    r"""The FNA paper's bandwidth ``kappa`` (Methods "Text classification"; Appendix A.1).

    Parameters
    ----------
    d : float
        ``variant="text"``: head dimension ``d_H``; ``variant="sphere"``: the
        intrinsic dimension ``d_M`` of the sphere.  ``>= 1``.
    alpha : float
        ``> 0``; ``alpha < 2`` uses the multiscale convention, ``alpha >= 2`` the
        local one (the paper states it for ``alpha = 2``).
    variant : {"text", "sphere"}
        Methods "Text classification" or Appendix A.1.

    Returns
    -------
    float
        text: ``sqrt(d) / (2**(1/d) - 1)`` (alpha < 2), ``sqrt(d)`` (alpha >= 2);
        sphere: ``pi / (pi**(1/d) - 1)`` (alpha < 2), ``1`` (alpha >= 2).

    Notes
    -----
    The text convention makes ``Phi_alpha(sqrt(d) / kappa) = 2**(-(d+alpha)/d)``:
    the score only halves at distance ``sqrt(d)``, so rows are nearly uniform
    (ledger FNA-16).
    """
    d = _check_dim(d, "d")
    alpha = _check_alpha(alpha)
    check_option("variant", variant, KAPPA_VARIANTS)
    if variant == "text":
        return math.sqrt(d) / (2.0 ** (1.0 / d) - 1.0) if alpha < 2.0 else math.sqrt(d)
    return math.pi / (math.pi ** (1.0 / d) - 1.0) if alpha < 2.0 else 1.0


def _half_width(alpha: float, d: float) -> float:
    """z with Phi_alpha(z) = 1/2."""
    if alpha < 2.0:
        return 2.0 ** (1.0 / (d + alpha)) - 1.0
    return math.log(2.0) ** ((alpha - 1.0) / alpha)


def matched_half_width_kappa(kappa1, d, alpha1) -> float:
    r"""Gaussian (alpha = 2) bandwidth with the same half-maximum width as ``Phi_alpha1`` (protocol iii).

    The mechanism checks compare FNA with a Gaussian kernel under three bandwidth protocols: (i) the
    paper's kappa, (ii) equal kappa, (iii) equal half-maximum width; this is (iii).

    ``Phi_alpha1(r / kappa1) = 1/2`` at ``r = kappa1 (2**(1/(d+alpha1)) - 1)`` for
    ``alpha1 < 2``; ``exp(-(r/kappa2)^2) = 1/2`` at ``r = kappa2 sqrt(ln 2)``, so

    .. math:: \kappa_2 = \kappa_1 \, (2^{1/(d+\alpha_1)} - 1) / \sqrt{\ln 2}.

    For ``alpha1 >= 2`` the local profile's half width ``(ln 2)^((alpha1-1)/alpha1)``
    replaces ``2**(1/(d+alpha1)) - 1`` (so ``alpha1 = 2`` returns ``kappa1``).
    """
    kappa1 = check_real("kappa1", kappa1, low=0.0, low_open=True)
    d = _check_dim(d, "d")
    alpha1 = check_real("alpha1", alpha1, low=0.0, low_open=True)
    return kappa1 * _half_width(alpha1, d) / math.sqrt(math.log(2.0))
