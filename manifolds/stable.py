"""Symmetric alpha-stable laws: exact ground truth for the Levy claims of the FNA paper (eqs. 7, 8, 10, 26).

The law S(alpha, 0, scale) has characteristic function ``exp(-|scale u|^alpha)``, ``0 < alpha <= 2``
(alpha = 2 is the Gaussian N(0, 2 scale^2)). This module gives, independently of any attention
code and of ``scipy.stats.levy_stable``:

* :func:`cms_sample` -- the Chambers-Mallows-Stuck sampler (``rng`` in, no global state);
* :func:`char_fn` -- the characteristic function ``exp(-|scale u|^alpha)`` (FNA eq. 26);
* :func:`stable_pdf` -- the density of S(alpha, 0, 1), by Fourier-inversion quadrature
  (:func:`pdf_quadrature`) in the core and the Bergstrom/Feller power series (:func:`pdf_series`,
  coefficients :func:`series_terms`) in the tail;
* :func:`periodised_stable_pdf` -- ``sum_m p_scale(y + 2 pi m)`` on the circle, the image terms
  summed in closed form through the Hurwitz zeta function;
* :func:`density_tail_constant`, :func:`ccdf_tail_constant` -- the 1-D tail constants of the
  density and of ``P(|X| > x)``;
* :func:`gauss_legendre_panels` -- composite Gauss-Legendre nodes and weights used by the
  quadratures here and by the Levy checks.

(``c_{d,alpha}``, the profile mass ``M0`` and the geodesic multiplier live in
:mod:`manifolds.kernel_spectra`.) Everything here is NumPy/SciPy reference code on the host.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.validation import InputError, as_generator, check_real

__all__ = [
    "SERIES_SWITCH",
    "density_tail_constant",
    "ccdf_tail_constant",
    "gauss_legendre_panels",
    "cms_sample",
    "char_fn",
    "series_terms",
    "pdf_quadrature",
    "pdf_series",
    "stable_pdf",
    "periodised_stable_pdf",
]

#: ``|z|`` beyond which :func:`stable_pdf` uses the tail series (it agrees with the quadrature to
#: ~1e-15 there).
SERIES_SWITCH = 30.0


def _stable_alpha(alpha) -> float:
    return check_real("alpha", alpha, low=0, high=2, low_open=True)


def density_tail_constant(alpha: float) -> float:
    """``lim x^(1+alpha) p_1(x) = Gamma(1+alpha) sin(pi alpha/2) / pi`` for S(alpha, 0, 1) in 1-D.

    The first term of the tail series (:func:`series_terms`); FNA eq. (8) for d = 1.

    Examples
    --------
    >>> round(density_tail_constant(1.0), 12) == round(1 / math.pi, 12)  # Cauchy: 1/(pi x^2)
    True
    """
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    return math.gamma(1 + alpha) * math.sin(math.pi * alpha / 2) / math.pi


def ccdf_tail_constant(alpha: float) -> float:
    """``lim x^alpha P(|X| > x) = 2 Gamma(alpha) sin(pi alpha/2) / pi`` for S(alpha, 0, 1) in 1-D.

    Twice the integral of :func:`density_tail_constant` ``x^-(1+alpha)`` from ``x`` to infinity.
    """
    alpha = _stable_alpha(alpha)
    return 2 * math.gamma(alpha) * math.sin(math.pi * alpha / 2) / math.pi


def gauss_legendre_panels(edges, order: int = 24):
    """Nodes and weights of composite Gauss-Legendre quadrature on consecutive panels ``edges``.

    Each panel ``[edges[i], edges[i+1]]`` gets ``order`` nodes (exact for polynomials of degree
    ``2 order - 1`` on each panel). Returns ``(nodes, weights)``, flat arrays.

    Examples
    --------
    >>> x, w = gauss_legendre_panels([0.0, 0.5, 2.0], order=3)
    >>> round(float(w @ x**5), 12)  # int_0^2 x^5 dx = 64/6
    10.666666666667
    """
    edges = np.asarray(edges, dtype=float)
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise InputError("edges must be an increasing sequence of at least two numbers")
    x, w = np.polynomial.legendre.leggauss(order)
    a, b = edges[:-1, None], edges[1:, None]
    half = (b - a) / 2
    nodes = (a + b) / 2 + half * x[None, :]
    weights = half * w[None, :]
    return nodes.ravel(), weights.ravel()


def cms_sample(alpha: float, size, *, scale: float = 1.0, rng=None) -> np.ndarray:
    """Symmetric alpha-stable samples with characteristic function ``exp(-|scale u|^alpha)``.

    Chambers, Mallows and Stuck (1976) for beta = 0:
    ``X = sin(alpha V) / cos(V)^(1/alpha) * (cos((1-alpha) V) / W)^((1-alpha)/alpha)``,
    ``V ~ U(-pi/2, pi/2)``, ``W ~ Exp(1)``; alpha = 1 gives ``tan V`` (Cauchy) and alpha = 2 the
    Gaussian N(0, 2 scale^2). ``rng`` is None, a seed or a ``numpy.random.Generator`` (SPEC 7);
    ``V`` is drawn first, then ``W``.
    """
    alpha = _stable_alpha(alpha)
    scale = check_real("scale", scale, low=0, low_open=True)
    g = as_generator(rng)
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
    alpha = _stable_alpha(alpha)
    return np.exp(-np.abs(scale * np.asarray(u, dtype=float)) ** alpha)


def pdf_quadrature(z, alpha: float) -> np.ndarray:
    """``(1/pi) int_0^inf cos(u z) exp(-u^alpha) du`` by composite Gauss-Legendre (absolute error ~1e-15).

    The inverse Fourier transform of ``exp(-|u|^alpha)``: the stable density for ``alpha <= 2``.
    Any ``alpha > 0`` is accepted: for ``alpha > 2`` the same integral is the would-be "heat
    kernel" of ``(-Delta)^(alpha/2)``, which takes negative values (FNA-5). Panels: geometric near
    0, then of width ``<= min(0.5, pi / (2 max|z|))`` (a quarter period of the cosine) up to
    ``45^(1/alpha)``, where ``exp(-45) ~ 3e-20`` is below double precision.
    """
    alpha = check_real("alpha", alpha, low=0, low_open=True)
    z = np.asarray(z, dtype=float)
    upper = 45.0 ** (1 / alpha)
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


def series_terms(alpha: float, terms: int = 40) -> list[tuple[float, float]]:
    """Pairs ``(a_k, p_k)`` of the tail series ``p_1(x) = sum_k a_k x^-p_k``, ``k = 1..terms``.

    ``a_k = (-1)^(k+1) Gamma(k alpha + 1) / k! sin(k pi alpha / 2) / pi``, ``p_k = k alpha + 1``
    (Bergstrom 1952; Feller II, XVII.6): convergent for alpha < 1, asymptotic for alpha > 1.
    ``a_1`` is :func:`density_tail_constant`.
    """
    alpha = _stable_alpha(alpha)
    out = []
    for k in range(1, terms + 1):
        a = (-1) ** (k + 1) * math.exp(math.lgamma(k * alpha + 1) - math.lgamma(k + 1)) \
            * math.sin(k * math.pi * alpha / 2) / math.pi
        out.append((a, k * alpha + 1))
    return out


def pdf_series(x, alpha: float, terms: int = 40) -> np.ndarray:
    """The tail series of :func:`series_terms` summed at ``x > 0`` (accurate for ``x >= 30``)."""
    x = np.asarray(x, dtype=float)
    total = np.zeros(x.shape)
    for a, p in series_terms(alpha, terms):
        total = total + a * x ** (-p)
    return total


def stable_pdf(z, alpha: float) -> np.ndarray:
    """Density of the symmetric stable law with characteristic function ``exp(-|u|^alpha)``.

    ``|z| <= 30``: Fourier inversion by Gauss-Legendre quadrature (:func:`pdf_quadrature`, to
    ~1e-15 absolute); ``|z| > 30``: the tail series (:func:`pdf_series`, 40 terms; asymptotic for
    alpha > 1, its terms fall below 1e-16 relative long before they grow again at ``|z| >= 30``).
    alpha = 2 gives the Gaussian ``exp(-z^2/4)/sqrt(4 pi)`` exactly.

    Examples
    --------
    >>> round(float(stable_pdf(0.0, 1.0)), 12) == round(1 / math.pi, 12)  # Cauchy density at 0
    True
    """
    alpha = _stable_alpha(alpha)
    z = np.abs(np.asarray(z, dtype=float))
    if alpha == 2:
        return np.exp(-(z**2) / 4) / math.sqrt(4 * math.pi)
    out = np.empty(z.shape)
    core = z <= SERIES_SWITCH
    out[core] = pdf_quadrature(z[core], alpha)
    out[~core] = pdf_series(z[~core], alpha)
    return out


def periodised_stable_pdf(y, alpha: float, scale: float) -> np.ndarray:
    """``P(y) = sum_m p_scale(y + 2 pi m)`` with ``p_scale(x) = p_1(x/scale)/scale``, ``|y| <= pi``.

    The m = 0 term is :func:`stable_pdf`; the images (``|y + 2 pi m| >= pi``, beyond the series
    switch when ``scale <= pi/30``) are summed in closed form term by term of the tail series
    with the Hurwitz zeta function: ``sum_{m>=1} (2 pi m + y)^-p = (2 pi)^-p zeta(p, 1 + y/(2 pi))``.
    Its Fourier coefficients are ``exp(-(scale |k|)^alpha) / (2 pi)`` exactly: the law of a stable
    increment wrapped onto the circle S^1.
    """
    from scipy.special import zeta

    alpha = _stable_alpha(alpha)
    scale = check_real("scale", scale, low=0, high=math.pi / SERIES_SWITCH, low_open=True)
    y = np.asarray(y, dtype=float)
    if np.any(np.abs(y) > math.pi + 1e-12):
        raise InputError("y must lie in [-pi, pi]")
    out = stable_pdf(y / scale, alpha) / scale
    if alpha == 2:
        for m in range(1, 4):  # Gaussian images: exp(-(pi/scale)^2/4) underflows for scale <= 0.1
            out = out + (stable_pdf((y + 2 * math.pi * m) / scale, 2) + stable_pdf((y - 2 * math.pi * m) / scale, 2)) / scale
        return out
    two_pi = 2 * math.pi
    q = y / two_pi
    zmin = math.pi / scale  # nearest image, in units of the scale
    lead = abs(series_terms(alpha, 1)[0][0])
    terms = [(a, p) for a, p in series_terms(alpha) if abs(a) * zmin ** (alpha + 1 - p) > 1e-18 * lead]
    for a, p in terms:
        # sum over m >= 1 of |y + 2 pi m|^-p and |y - 2 pi m|^-p, in units of the scale
        images = (zeta(p, 1 + q) + zeta(p, 1 - q)) * two_pi ** (-p)
        out = out + a * scale ** (p - 1) * images
    return out
