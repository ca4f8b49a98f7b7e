"""Small-scale expansion of the FNA generator spectrum on S^1 (FNA-13, proof of Lemma 1).

For the FNA profile ``Phi(z) = (1 + z)^-(1 + alpha)`` (``d_M = 1``, ``1 < alpha < 2``) only the tail
matches the stable kernel, so the generator eigenvalues ``lambda_k(s) = (1 - eta_k(s)) / s^alpha``
of the row-normalised kernel at scale ``s`` approach their limit ``lambda_k = m(k) / M0`` with

    lambda_k(s) - lambda_k = A k^alpha [-C_alpha (k s)^(2 - alpha) + C'_alpha (k s) + ...],

``A = 1 / (M0 c_{1,alpha})`` the constant of the line limit ``A k^alpha`` (FNA-10),
``C_alpha = -2 Gamma(alpha - 2) c_{1,alpha} / Gamma(alpha + 1)`` (the finite-part second moment of
``Phi``, ``c_{1,alpha} = Gamma(1 + alpha) sin(pi alpha / 2) / pi``) and ``C'_alpha = -tan(pi alpha / 2)``
(the ``|xi|^(alpha + 1)`` term of the tail expansion of ``Phi``'s Fourier transform). Relative to
``lambda_k`` the coefficients carry the factor ``A k^alpha / lambda_k`` (the circle's low modes sit
below the line law: 1.062 at alpha = 1.2, k = 2; 1.021 at k = 5; -> 1 as k grows). The paper's proof
implies a bias ``O(t) = O(s^alpha)``; the exact stable kernel has none.
"""

from __future__ import annotations

import math

from manifolds import kernel_spectra
from spectral.floor.validation import check_real

__all__ = ["generator_bias_constants"]


def generator_bias_constants(alpha) -> tuple[float, float]:
    """``(C_alpha, C'_alpha)`` of ``lambda_k(s) - lambda_k = A k^alpha [-C (k s)^(2-alpha) + C' (k s) + ...]``.

    Parameters
    ----------
    alpha : float
        FNA order in (1, 2) (the FNA eq. 10 profile with ``d_M = 1``).

    Returns
    -------
    tuple of float
        ``C_alpha > 0`` and ``C'_alpha = -tan(pi alpha / 2) > 0`` (module docstring).

    Examples
    --------
    >>> c, c_prime = generator_bias_constants(1.5)
    >>> round(c, 12), round(c_prime, 12)
    (1.595769121606, 1.0)
    """
    alpha = check_real("alpha", alpha, low=1.0, high=2.0, low_open=True, high_open=True)
    c1 = kernel_spectra.fractional_constant(1, alpha)
    return -2 * math.gamma(alpha - 2) * c1 / math.gamma(alpha + 1), -math.tan(math.pi * alpha / 2)
