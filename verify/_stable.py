"""Symmetric alpha-stable ground truth for the Levy checks (FNA paper eqs. 7, 8, 10, 26).

Private helpers shared by :mod:`verify.levy`, :mod:`verify.fna_rate` and the FNA figures:

* :func:`cms_sample` -- Chambers-Mallows-Stuck sampler (``rng`` in, no global state);
* :func:`char_fn` -- the characteristic function ``exp(-|scale u|^alpha)``;
* :func:`stable_pdf` -- the density of S(alpha, 0, 1) (S1), by Fourier-inversion quadrature in the
  core and the convergent/asymptotic power series in the tail (independent of scipy);
* :func:`periodised_stable_pdf` -- ``sum_m p_s(y + 2 pi m)`` on the circle, with the image terms
  summed in closed form through the Hurwitz zeta function;
* the 1-D density and CCDF tail constants (``c_{d,alpha}``, ``M0`` and the geodesic multiplier
  ``m(k)`` live in :mod:`manifolds.kernel_spectra`).

Everything here is NumPy/SciPy reference code (host only).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "density_tail_constant",
    "ccdf_tail_constant",
    "cms_sample",
    "char_fn",
    "stable_pdf",
    "periodised_stable_pdf",
    "gauss_legendre_panels",
]


def density_tail_constant(alpha: float) -> float:
    """``lim x^(1+alpha) p_1(x) = Gamma(1+alpha) sin(pi alpha/2) / pi`` for S(alpha, 0, 1) in 1-D."""
    return math.gamma(1 + alpha) * math.sin(math.pi * alpha / 2) / math.pi


def ccdf_tail_constant(alpha: float) -> float:
    """``lim x^alpha P(|X| > x) = 2 Gamma(alpha) sin(pi alpha/2) / pi`` for S(alpha, 0, 1) in 1-D."""
    return 2 * math.gamma(alpha) * math.sin(math.pi * alpha / 2) / math.pi


def gauss_legendre_panels(edges, order: int = 24):
    """Nodes and weights of composite Gauss-Legendre quadrature on consecutive panels ``edges``."""
    edges = np.asarray(edges, dtype=float)
    x, w = np.polynomial.legendre.leggauss(order)
    a, b = edges[:-1, None], edges[1:, None]
    half = (b - a) / 2
    nodes = (a + b) / 2 + half * x[None, :]
    weights = half * w[None, :]
    return nodes.ravel(), weights.ravel()


def _rng(rng):
    return np.random.default_rng(rng)


def cms_sample(alpha: float, size, *, scale: float = 1.0, rng=None) -> np.ndarray:
    """Symmetric alpha-stable samples with characteristic function ``exp(-|scale u|^alpha)``.

    Chambers-Mallows-Stuck (1976) for beta = 0:
    ``X = sin(alpha V) / cos(V)^(1/alpha) * (cos((1-alpha) V) / W)^((1-alpha)/alpha)``,
    ``V ~ U(-pi/2, pi/2)``, ``W ~ Exp(1)``. For alpha = 2 this is N(0, 2 scale^2).
    """
    if not 0 < alpha <= 2:
        raise ValueError(f"alpha must be in (0, 2], got {alpha!r}")
    g = _rng(rng)
    v = g.uniform(-math.pi / 2, math.pi / 2, size)
    w = g.standard_exponential(size)
    if alpha == 1.0:
        x = np.tan(v)
    else:
        x = (np.sin(alpha * v) / np.cos(v) ** (1 / alpha)
             * (np.cos((1 - alpha) * v) / w) ** ((1 - alpha) / alpha))
    return scale * x


def char_fn(u, alpha: float, scale: float = 1.0) -> np.ndarray:
    """``E exp(i u X) = exp(-|scale u|^alpha)`` for the symmetric stable law (FNA eq. 26)."""
    return np.exp(-np.abs(scale * np.asarray(u, dtype=float)) ** alpha)


_SWITCH = 30.0  # |z| beyond which the tail series is used (agrees with quadrature to ~1e-15 there)


def _pdf_quadrature(z: np.ndarray, alpha: float) -> np.ndarray:
    """``p_1(z) = (1/pi) int_0^inf cos(u z) exp(-u^alpha) du`` by composite Gauss-Legendre."""
    upper = 45.0 ** (1 / alpha)  # exp(-45) ~ 3e-20: truncation below double precision
    zmax = float(np.max(np.abs(z))) if z.size else 0.0
    width = min(0.5, math.pi / max(zmax, 1.0) / 2)
    geo = np.geomspace(1e-12, 1.0, 40) * min(1.0, upper)
    lin = np.arange(geo[-1], upper, width)
    edges = np.concatenate([[0.0], geo, lin[1:], [upper]])
    u, w = gauss_legendre_panels(edges, order=20)
    weights = w * np.exp(-u**alpha) / math.pi
    out = np.empty(z.shape)
    step = 256
    flat = z.ravel()
    res = out.ravel()
    for start in range(0, flat.size, step):
        block = flat[start:start + step]
        res[start:start + step] = np.cos(np.multiply.outer(block, u)) @ weights
    return res.reshape(z.shape)


def _series_terms(alpha: float, terms: int = 40):
    """Coefficients of ``p_1(x) = sum_k a_k x^-(k alpha + 1)`` (Bergstrom/Feller series)."""
    out = []
    for k in range(1, terms + 1):
        a = (-1) ** (k + 1) * math.exp(math.lgamma(k * alpha + 1) - math.lgamma(k + 1)) \
            * math.sin(k * math.pi * alpha / 2) / math.pi
        out.append((a, k * alpha + 1))
    return out


def _pdf_series(x: np.ndarray, alpha: float, terms: int = 40) -> np.ndarray:
    total = np.zeros(x.shape)
    for a, p in _series_terms(alpha, terms):
        total = total + a * x ** (-p)
    return total


def stable_pdf(z, alpha: float) -> np.ndarray:
    """Density of the symmetric stable law with characteristic function ``exp(-|u|^alpha)``.

    ``|z| <= 30``: Fourier inversion by Gauss-Legendre quadrature (to ~1e-15 absolute);
    ``|z| > 30``: the tail series ``(1/pi) sum_k (-1)^(k+1) Gamma(k alpha + 1)/k!
    sin(k pi alpha / 2) |z|^-(k alpha + 1)`` (40 terms; asymptotic for alpha > 1, its terms fall
    below 1e-16 relative long before they grow again at |z| >= 30). alpha = 2 gives the
    Gaussian ``exp(-z^2/4)/sqrt(4 pi)`` exactly.
    """
    if not 0 < alpha <= 2:
        raise ValueError(f"alpha must be in (0, 2], got {alpha!r}")
    z = np.abs(np.asarray(z, dtype=float))
    if alpha == 2:
        return np.exp(-(z**2) / 4) / math.sqrt(4 * math.pi)
    out = np.empty(z.shape)
    core = z <= _SWITCH
    out[core] = _pdf_quadrature(z[core], alpha)
    out[~core] = _pdf_series(z[~core], alpha)
    return out


def periodised_stable_pdf(y, alpha: float, scale: float) -> np.ndarray:
    """``P(y) = sum_m p_scale(y + 2 pi m)`` with ``p_scale(x) = p_1(x/scale)/scale``, ``|y| <= pi``.

    The m = 0 term is :func:`stable_pdf`; the images (``|y + 2 pi m| >= pi``, i.e. beyond the
    series switch when ``scale <= pi/30``) are summed in closed form term by term of the tail
    series with the Hurwitz zeta function: ``sum_{m>=1} (2 pi m + y)^-p = (2pi)^-p zeta(p, 1 + y/2pi)``.
    Its Fourier coefficients are ``exp(-(scale |k|)^alpha) / (2 pi)`` exactly.
    """
    from scipy.special import zeta

    if scale > math.pi / _SWITCH:
        raise ValueError(f"scale must be <= pi/{_SWITCH:g} for the image series, got {scale!r}")
    y = np.asarray(y, dtype=float)
    if np.any(np.abs(y) > math.pi + 1e-12):
        raise ValueError("y must lie in [-pi, pi]")
    out = stable_pdf(y / scale, alpha) / scale
    if alpha == 2:
        for m in range(1, 4):  # Gaussian images: exp(-(pi/scale)^2/4) underflows for scale <= 0.1
            out = out + (stable_pdf((y + 2 * math.pi * m) / scale, 2) + stable_pdf((y - 2 * math.pi * m) / scale, 2)) / scale
        return out
    two_pi = 2 * math.pi
    q = y / two_pi
    zmin = math.pi / scale  # nearest image, in units of the scale
    terms = [(a, p) for a, p in _series_terms(alpha) if abs(a) * zmin ** (alpha + 1 - p) > 1e-18 * abs(_series_terms(alpha, 1)[0][0])]
    for a, p in terms:
        # sum over m >= 1 of |y + 2 pi m|^-p and |y - 2 pi m|^-p, in units of the scale
        images = (zeta(p, 1 + q) + zeta(p, 1 - q)) * two_pi ** (-p)
        out = out + a * scale ** (p - 1) * images
    return out
