"""Exact finite-eps spectrum of continuum heat-kernel attention on the unit sphere S^d (Bessel ratios).

With ``W(x, y) = exp(-|x - y|^2 / (2 eps))`` (ambient distance) and the uniform density on the unit
sphere S^d in R^(d+1), continuum attention is ``(T_eps f)(x) = int W(x, y) f(y) dy / int W(x, y) dy``.
Since ``|x - y|^2 = 2 - 2 x.y``, the kernel is ``e^(-1/eps) exp(x.y / eps)``, a zonal function, and by
Funk-Hecke every spherical harmonic of degree ``l`` is an eigenfunction with eigenvalue

    eta_l(eps) = I_(l + nu)(1/eps) / I_nu(1/eps),   nu = (d - 1) / 2

(the Gegenbauer expansion ``e^(r t) = Gamma(nu) (r/2)^-nu sum_l (l + nu) I_(l+nu)(r) C_l^nu(t)``; for
d = 1, ``e^(r cos theta) = I_0(r) + 2 sum_k I_k(r) cos k theta``). This is the exact bias-free operator
of DRIFT Theorem 1 (Singer 2006) at finite ``eps``: ``(eta_l - 1) / eps -> -l (l + d - 1) / 2``, the
eigenvalue of ``(1/2) Delta``, with an ``O(eps)`` bias. Host SciPy code (``scipy.special.ive``,
exponentially scaled, so no overflow at small ``eps``).
"""

from __future__ import annotations

from spectral.floor.validation import check_int, check_real

__all__ = ["heat_kernel_eigenvalue"]


def heat_kernel_eigenvalue(dim: int, degree: int, eps: float) -> float:
    """Eigenvalue ``I_(l + nu)(1/eps) / I_nu(1/eps)``, ``nu = (dim - 1)/2``, of heat attention on S^dim.

    Parameters
    ----------
    dim : int
        Dimension ``d >= 1`` of the sphere S^d (S^1: ``cos(k theta)``; S^2: the zonal ``P_l(z)``).
    degree : int
        Fourier mode ``k`` on S^1, spherical-harmonic degree ``l`` on S^d, ``>= 0``.
    eps : float
        Bandwidth ``> 0`` of ``W = exp(-|x - y|^2 / (2 eps))``.

    Returns
    -------
    float
        ``eta`` with ``T_eps f = eta f`` (module docstring): ``I_k(1/eps) / I_0(1/eps)`` on S^1 and
        ``I_(l+1/2)(1/eps) / I_(1/2)(1/eps)`` on S^2.

    Examples
    --------
    >>> round(heat_kernel_eigenvalue(1, 0, 0.1), 15)   # constants are fixed
    1.0
    >>> eps = 1e-4                                      # (eta - 1) / eps -> -l (l + d - 1) / 2
    >>> round((heat_kernel_eigenvalue(2, 2, eps) - 1) / eps, 2)
    -3.0
    """
    from scipy.special import ive

    dim = check_int("dim", dim, low=1)
    degree = check_int("degree", degree, low=0)
    eps = check_real("eps", eps, low=0.0, low_open=True)
    r = 1.0 / eps
    nu = (dim - 1) / 2
    return float(ive(degree + nu, r) / ive(nu, r))
