r"""Linear stability of the uniform state and of equally spaced clusters for self-attention dynamics.

The exact references of the MS checks (metastable clusters from near-uniform data), written from
the definitions with NumPy and SciPy only; nothing here imports :mod:`spectral`'s numerics.

The dynamics
------------
Tokens ``x_i`` on the unit sphere ``S^(d-1)`` move by (Geshkovski, Letrouit, Polyanskiy & Rigollet,
arXiv 2312.10794)

.. math:: \dot x_i = P^\perp_{x_i}\Big(\frac{1}{Z_i}\sum_j e^{\beta\langle x_i, x_j\rangle} x_j\Big),
          \qquad Z_i = n \ \text{(USA)}, \quad Z_i = \sum_k e^{\beta\langle x_i, x_k\rangle} \ \text{(SA)}.

On the circle ``x = (cos theta, sin theta)`` this is
``theta_i' = (1/Z_i) sum_j g(theta_j - theta_i)`` with ``g(u) = sin(u) e^(beta cos u)``. Bruno,
Pasqualotto & Agazzi (arXiv 2410.23228) study (USA) (their public experiments integrate
``theta_i' = -(1/n) sum_j e^(beta cos(theta_i - theta_j)) sin(theta_i - theta_j)``); Geshkovski,
Koubbi, Polyanskiy & Rigollet (arXiv 2410.06833) prove their metastability theorem for (SA) and
write (USA) with ``e^(beta (<x_i, x_j> - 1)) / n``, i.e. (USA) on the clock ``e^beta t``.

Growth rates of the uniform state (:func:`growth_rate`)
-------------------------------------------------------
The mean-field limit moves a probability density ``rho`` by ``d_t rho + div(rho v[rho]) = 0``.
Linearise at the uniform density on the circle, ``rho = (1 + eps cos k theta) / (2 pi)``:

.. math:: v(\theta) = \frac{\epsilon}{2\pi}\int_0^{2\pi} \sin(\phi-\theta) e^{\beta\cos(\phi-\theta)}
          \cos k\phi \, d\phi = -\epsilon A_k \sin k\theta, \qquad
          A_k = \frac{1}{2\pi}\int_0^{2\pi} \sin u \, \sin ku \, e^{\beta\cos u}\, du,

and ``d_t rho = -(1/2pi) d_theta v`` gives the growth rate ``lambda_k = k A_k`` (USA). Since
``sin(u) e^(beta cos u) = -(1/beta) d/du e^(beta cos u)`` and ``e^(beta cos u) = sum_m I_m(beta) e^(imu)``,
an integration by parts gives ``A_k = k I_k(beta) / beta``:

.. math:: \lambda_k^{\rm USA} = \frac{k^2 I_k(\beta)}{\beta}, \qquad
          \lambda_k^{\rm SA} = \frac{k^2 I_k(\beta)}{\beta I_0(\beta)}

(for (SA) the normaliser is ``Z = I_0(beta)`` at the uniform state and its perturbation multiplies a
vanishing numerator). Every mode ``k >= 1`` grows for ``beta > 0``; the fastest is
``k*(beta) = argmax_k k^2 I_k(beta)`` (:func:`dominant_mode`), the same for both normalisations. On
``S^(d-1)`` the same computation with a spherical harmonic ``Y_l`` (Funk-Hecke) gives

.. math:: \lambda_l = \frac{l(l+d-2)}{\beta}\,\kappa_l, \qquad
          \kappa_l = \frac{|S^{d-2}|}{|S^{d-1}|}\int_{-1}^1 e^{\beta t}\frac{C_l^{(d-2)/2}(t)}{C_l^{(d-2)/2}(1)}
          (1-t^2)^{(d-3)/2} dt = \Gamma(d/2) \Big(\frac{2}{\beta}\Big)^{d/2-1} I_{l+d/2-1}(\beta)

(Gegenbauer polynomials ``C_l``; Chebyshev ``T_l`` for ``d = 2``, where ``kappa_l = I_l``): the
"rescaled Gegenbauer coefficient" whose maximising index sets the periodicity in arXiv 2410.23228.
:func:`growth_rate_quadrature` computes both integrals by quadrature, independently of the closed
form. Since ``I_k(beta) ~ e^beta e^(-k^2 / (2 beta)) / sqrt(2 pi beta)``, ``k* ~ sqrt(2 beta)`` and
``lambda^SA_(k*) -> 2/e``.

For ``n`` particles the Fourier coefficients ``c_k = (1/n) sum_j e^(i k theta_j)`` of (USA) solve
the exact quadratic system (:func:`fourier_velocity`)

.. math:: \dot c_k = \frac{k}{\beta}\sum_{m\in\mathbb Z} m I_m(\beta)\, c_m c_{k-m}
          = \lambda_k c_k + \frac{k}{\beta}\sum_{m \ne 0, k} m I_m(\beta) c_m c_{k-m},

whose linear part is ``lambda_k`` for any ``n`` (``c_0 = 1``); for i.i.d. uniform starts every
``|c_m|`` is of order ``n^(-1/2)``, so the quadratic remainder is ``n^(-1/2)`` relative.

Which mode wins at finite n (:func:`winner_probabilities`)
-----------------------------------------------------------
The linear theory with random initial amplitudes: ``c_k(0)`` complex Gaussian with
``E |c_k(0)|^2 = s_k^2`` (``1/n`` for i.i.d. uniform points; ``(1 - e^(-k^2 sigma^2)) / n`` for a
lattice ``2 pi j / n`` jittered by ``N(0, sigma^2)``), ``|c_k(t)| = |c_k(0)| e^(lambda_k t)``; the
winner is the first mode to reach the level ``a``. Its law is a one-dimensional integral
(``|c_k(0)|^2`` is exponential):

.. math:: P(\text{winner} = j) = \int_0^\infty f_j(t) \prod_{k \ne j} \big(1 - e^{-a^2 e^{-2\lambda_k t}/s_k^2}\big)\,dt,

``f_j`` the density of mode ``j``'s hitting time. The winner is ``k*`` with probability tending to
1 only as ``log(1/s) (1 - lambda_(k'/k*)) -> infinity``: near a transition (``lambda_k = lambda_(k+1)``,
:func:`mode_transition`) the limit needs astronomically many tokens.

Equally spaced clusters (:func:`cluster_escape_rates`)
------------------------------------------------------
``k`` point clusters of equal mass at ``theta_q = 2 pi q / k`` are an equilibrium (``g`` is odd).
Perturbing ``theta_q + xi_q`` gives ``xi_q' = (1/S) sum_(p != q) g'(theta_p - theta_q)(xi_p - xi_q)``,
``g'(u) = e^(beta cos u)(cos u - beta sin^2 u)``, ``S = sum_j e^(beta cos(2 pi j / k))`` (SA) or ``k``
(USA); the matrix is circulant, with eigenvalues

.. math:: \mu_l = \frac{1}{S}\sum_{j=1}^{k-1} g'(2\pi j/k)\big(\cos(2\pi j l/k) - 1\big), \qquad l = 0, \dots, k-1,

``mu_0 = 0`` (rotations). The largest is the rate at which the clusters leave the equilibrium: for
(SA) it is ``~ beta sin^2(2 pi/k) e^(-beta (1 - cos(2 pi / k)))``, so the time spent near ``k``
clusters grows like ``e^(beta (1 - cos(2 pi / k)))``, the exponent ``1 - alpha`` (``alpha`` the cosine
between neighbouring clusters) of Geshkovski, Koubbi, Polyanskiy & Rigollet's metastability theorem.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from spectral.floor.validation import InputError, check_int, check_option, check_real

__all__ = ["NORMALISATIONS", "growth_rate", "growth_rate_quadrature", "dominant_mode", "mode_transition",
           "fourier_velocity", "angle_velocity", "winner_probabilities", "amplitude_scale",
           "cluster_escape_rates", "cluster_escape_rate", "cluster_escape_rate_quadrature", "cluster_escape_mode",
           "merge_time", "cap_cosine", "separation_margin", "separation_margin_max", "escape_time_bound"]

NORMALISATIONS = ("softmax", "uniform")
#: e^beta overflows float64 beyond this (the (USA) rates carry e^beta)
_MAX_BETA = 700.0


def _beta(beta, *, positive=True) -> float:
    return check_real("beta", beta, low=0.0 if positive else -_MAX_BETA, high=_MAX_BETA,
                      low_open=positive)


def _modes(k, name="k", low=1) -> np.ndarray:
    a = np.asarray(k)
    if a.dtype.kind not in "iu" and not (a.dtype.kind == "f" and np.all(a == np.round(a))):
        raise InputError(f"{name} must be integers >= {low}, got {k!r}")
    a = a.astype(np.int64)
    if np.any(a < low):
        raise InputError(f"{name} must be integers >= {low}, got {k!r}")
    return a


def _kappa(l, beta, d):
    """``kappa_l`` of the module docstring, scaled by ``e^-beta`` (``ive``): no overflow."""
    from scipy.special import gammaln, ive

    nu = l + d / 2.0 - 1.0
    return np.exp(gammaln(d / 2.0) + (d / 2.0 - 1.0) * math.log(2.0 / beta)) * ive(nu, beta)


def growth_rate(k, beta, *, normalisation="uniform", d=2):
    r"""Growth rate of mode ``k`` of the uniform state: ``k^2 I_k(beta) / beta`` on the circle (USA).

    Parameters
    ----------
    k : int or array of int
        Fourier mode on ``S^1`` (``d = 2``) or spherical-harmonic degree on ``S^(d-1)``, ``>= 1``.
    beta : float
        Inverse temperature, ``0 < beta <= 700``.
    normalisation : {"uniform", "softmax"}
        (USA): ``l (l + d - 2) kappa_l / beta``; (SA): the same divided by ``kappa_0``
        (``I_0(beta)`` on the circle).
    d : int
        Ambient dimension (tokens on ``S^(d-1)``), ``>= 2``.

    Returns
    -------
    float or numpy.ndarray
        ``lambda_k`` (module docstring), the shape of ``k``.

    Examples
    --------
    >>> round(float(growth_rate(3, 5.0)), 4)          # 9 I_3(5) / 5
    18.5961
    """
    k = _modes(k)
    beta = _beta(beta)
    check_option("normalisation", normalisation, NORMALISATIONS)
    d = check_int("d", d, low=2)
    rate = k * (k + d - 2) * _kappa(k, beta, d) / beta
    if normalisation == "uniform":
        rate = rate * math.exp(beta)
    else:
        rate = rate / _kappa(0, beta, d)
    return rate if rate.ndim else float(rate)


def growth_rate_quadrature(k, beta, *, normalisation="uniform", d=2) -> float:
    """:func:`growth_rate` by quadrature of the linearised velocity, without Bessel functions.

    ``d = 2``: ``lambda_k = (k / 2 pi) int_0^(2 pi) sin u sin(k u) e^(beta cos u) du`` (the velocity
    of the perturbed density; module docstring), for (SA) divided by ``(1/2 pi) int e^(beta cos u) du``.
    ``d >= 3``: the Funk-Hecke integral of ``e^(beta t)`` against the normalised Gegenbauer polynomial
    ``C_k^((d-2)/2)(t) / C_k^((d-2)/2)(1)`` with weight ``(1 - t^2)^((d-3)/2)``, times ``k (k + d - 2) / beta``.
    Integrands are scaled by ``e^-beta`` (exact relative accuracy for large beta) and integrated by
    ``scipy.integrate.quad`` to ``epsrel = 1e-11`` (agreement with the closed form: 1e-12 measured).
    """
    from scipy.integrate import IntegrationWarning
    from scipy.special import eval_gegenbauer, gammaln

    def quad(*args, **kw):  # quad warns when round-off stops it short of epsrel: the measured agreement says how far
        from scipy.integrate import quad as _quad

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", IntegrationWarning)
            return _quad(*args, **kw)

    k = int(_modes(k))
    beta = _beta(beta)
    check_option("normalisation", normalisation, NORMALISATIONS)
    d = check_int("d", d, low=2)
    opts = dict(epsabs=0.0, epsrel=1e-11, limit=400)
    if d == 2:
        # integrand symmetric about pi: 2 x int_0^pi; points where e^(beta (cos u - 1)) is concentrated
        num = 2.0 * quad(lambda u: math.sin(u) * math.sin(k * u) * math.exp(beta * (math.cos(u) - 1.0)),
                         0.0, math.pi, points=[min(1.0, 3.0 / math.sqrt(beta))], **opts)[0]
        rate = k * num / (2.0 * math.pi)
        if normalisation == "softmax":
            z = 2.0 * quad(lambda u: math.exp(beta * (math.cos(u) - 1.0)), 0.0, math.pi,
                           points=[min(1.0, 3.0 / math.sqrt(beta))], **opts)[0] / (2.0 * math.pi)
            return rate / z
        return rate * math.exp(beta)
    alpha = (d - 2) / 2.0
    # |S^(d-2)| / |S^(d-1)| = Gamma(d/2) / (sqrt(pi) Gamma((d-1)/2))
    ratio = math.exp(gammaln(d / 2.0) - gammaln((d - 1) / 2.0)) / math.sqrt(math.pi)
    weight = (d - 3) / 2.0
    edge = max(-1.0, 1.0 - 9.0 / beta)

    def kappa(deg):
        top = eval_gegenbauer(deg, alpha, 1.0)

        def f(t):
            return math.exp(beta * (t - 1.0)) * eval_gegenbauer(deg, alpha, t) / top

        wvar = "alg" if weight != 0.0 else None
        if wvar is None:
            return ratio * (quad(f, -1.0, edge, **opts)[0] + quad(f, edge, 1.0, **opts)[0])
        # (1 - t^2)^w = (1 + t)^w (1 - t)^w: each end's algebraic factor as quad's weight, the other explicit
        return ratio * (quad(lambda t: f(t) * (1.0 - t) ** weight, -1.0, edge, weight="alg", wvar=(weight, 0.0),
                             **opts)[0]
                        + quad(lambda t: f(t) * (1.0 + t) ** weight, edge, 1.0, weight="alg", wvar=(0.0, weight),
                               **opts)[0])

    rate = k * (k + d - 2) * kappa(k) / beta
    if normalisation == "softmax":
        return rate / kappa(0)
    return rate * math.exp(beta)


def _mode_range(beta: float, d: int) -> np.ndarray:
    # the maximiser is ~ sqrt(2 beta); kappa_l decays like e^(-l^2 / (2 beta)) far beyond
    top = int(math.ceil(3.0 * math.sqrt(2.0 * beta + 1.0) + 4 + d))
    return np.arange(1, top + 1)


def dominant_mode(beta, *, d=2) -> int:
    """``k*(beta) = argmax_k lambda_k`` (the same for (SA) and (USA)); the smaller one at an exact tie."""
    beta = _beta(beta)
    ks = _modes(_mode_range(beta, d))
    rates = growth_rate(ks, beta, d=d)
    return int(ks[int(np.argmax(rates))])


def mode_transition(k, *, d=2) -> float:
    """The ``beta`` at which modes ``k`` and ``k + 1`` grow at the same rate (``k*`` changes there).

    Solved by ``brentq`` on ``log lambda_k - log lambda_(k+1)``, which changes sign once (the ratio
    ``lambda_(k+1)/lambda_k`` increases with beta).
    """
    from scipy.optimize import brentq

    k = int(_modes(k))
    d = check_int("d", d, low=2)

    def gap(b):
        return math.log(growth_rate(k, b, d=d)) - math.log(growth_rate(k + 1, b, d=d))

    lo, hi = 1e-3, 1.0
    while gap(hi) > 0.0:
        hi *= 2.0
        if hi > _MAX_BETA:  # pragma: no cover - transitions are near (k + 1/2)^2 / 2
            raise InputError(f"no transition of mode {k} below beta = {_MAX_BETA:g}")
    return float(brentq(gap, lo, hi, xtol=1e-13, rtol=1e-14))


def angle_velocity(theta, beta, *, normalisation="uniform") -> np.ndarray:
    """``theta_i'`` of (USA)/(SA) on the circle, pair by pair: ``(1/Z_i) sum_j sin(theta_j - theta_i) e^(beta cos)``.

    Written from the definition in angles (no tokens in R^2); ``theta`` of shape ``(..., n)``.
    """
    theta = np.asarray(theta, dtype=float)
    beta = check_real("beta", beta, low=-_MAX_BETA, high=_MAX_BETA)
    check_option("normalisation", normalisation, NORMALISATIONS)
    u = theta[..., None, :] - theta[..., :, None]  # u[i, j] = theta_j - theta_i
    if normalisation == "uniform":
        w = np.exp(beta * np.cos(u))
        return np.sum(np.sin(u) * w, axis=-1) / theta.shape[-1]
    w = np.exp(beta * (np.cos(u) - 1.0))
    return np.sum(np.sin(u) * w, axis=-1) / np.sum(w, axis=-1)


def fourier_velocity(theta, k, beta) -> complex:
    """``dc_k/dt`` of (USA) from the Bessel expansion ``(k / beta) sum_m m I_m(beta) c_m c_(k-m)``.

    ``c_m = (1/n) sum_j e^(i m theta_j)`` of the angles ``theta`` (shape ``(n,)``); the sum runs over
    ``|m| <= M`` with ``M`` where ``I_m(beta) / I_0(beta) < 1e-18`` (module docstring). An exact identity
    for any ``n``: the derivative of the empirical coefficient, computed without the particle velocities.
    """
    from scipy.special import ive

    theta = np.asarray(theta, dtype=float).ravel()
    k = int(k)
    beta = _beta(beta)
    M = 1
    while ive(M, beta) > 1e-18 * ive(0, beta):
        M += 1
    m = np.arange(-M, M + 1)
    c = np.exp(1j * np.outer(m, theta)).mean(axis=1)  # c[m + M]
    ck_m = np.exp(1j * np.outer(k - m, theta)).mean(axis=1)
    return complex((k / beta) * math.exp(beta) * np.sum(m * ive(np.abs(m), beta) * c * ck_m))


def amplitude_scale(k, n, *, start="iid", jitter=0.0) -> np.ndarray:
    """``s_k = sqrt(E |c_k(0)|^2)`` of the starts: ``1/sqrt(n)`` (``"iid"``) or ``sqrt((1 - e^(-k^2 jitter^2))/n)``.

    ``"lattice"``: ``theta_j = 2 pi j / n + jitter N(0, 1)``; for ``0 < k < n``
    ``E |c_k|^2 = (1 - |E e^(i k jitter Z)|^2) / n = (1 - e^(-k^2 jitter^2)) / n`` (independent jitters; the
    lattice's own sum vanishes).
    """
    k = _modes(k)
    n = check_int("n", n, low=2)
    check_option("start", start, ("iid", "lattice"))
    if start == "iid":
        return np.full(k.shape, 1.0 / math.sqrt(n))
    jitter = check_real("jitter", jitter, low=0.0, low_open=True)
    if np.any(k >= n):
        raise InputError(f"modes k must be below n = {n} for a lattice start, got {k.max()}")
    return np.sqrt(-np.expm1(-(k * jitter) ** 2) / n)


def winner_probabilities(beta, scales, *, level=1.0, normalisation="uniform", modes=None) -> np.ndarray:
    r"""The law of the first mode to reach ``level`` in the linear theory with Gaussian initial amplitudes.

    Parameters
    ----------
    beta : float
        Inverse temperature.
    scales : array of float, shape (K,)
        ``s_k = sqrt(E |c_k(0)|^2)`` of modes ``1..K`` (:func:`amplitude_scale`).
    level : float
        The amplitude ``a`` at which a mode counts as grown (module docstring); the answer depends on
        it only through ``log(a / s)``.
    normalisation : {"uniform", "softmax"}
        The rates (their ratios, hence the law, are the same for both).
    modes : array of int, optional
        The modes of ``scales`` (default ``1..K``).

    Returns
    -------
    numpy.ndarray of shape (K,)
        ``P(winner = k)`` (sums to 1 up to the quadrature's 1e-10).
    """
    from scipy.integrate import quad

    beta = _beta(beta)
    s = np.asarray(scales, dtype=float).ravel()
    ks = np.arange(1, s.size + 1) if modes is None else _modes(modes)
    if ks.shape != s.shape or not np.all(s > 0) or not np.all(np.isfinite(s)):
        raise InputError("scales must be positive and finite, one per mode")
    level = check_real("level", level, low=0.0, low_open=True)
    lam = np.asarray(growth_rate(ks, beta, normalisation=normalisation), dtype=float)
    # in the clock tau = lambda_max t the answer is the same; log survival of each mode at time t:
    # P(t_k > t) = P(|c_k|^2 < a^2 e^(-2 lambda_k t)) = 1 - exp(-a^2 e^(-2 lambda_k t) / s_k^2)
    lam = lam / lam.max()
    r = (level / s) ** 2

    def x(k, t):
        return r[k] * np.exp(-2.0 * lam[k] * t)

    def log_alive(k, t):  # log P(t_k > t) = log(1 - e^(-x)), x -> 0 as t -> infinity
        return np.log(-np.expm1(-x(k, t)))

    def density(j, t):  # f_j(t) = d/dt P(t_j <= t) = 2 lambda_j x e^(-x)
        return 2.0 * lam[j] * x(j, t) * np.exp(-x(j, t))

    # when each mode crosses: x_k = 1 at t_k = log(r_k) / (2 lambda_k). Modes slower than a tenth of the
    # fastest cross after T below (P(t_k < T) <= e^(-r_k e^(-2 lambda_k T)), negligible) and are survival factors
    centres = np.log(np.maximum(r, 1.0)) / (2.0 * lam)
    fast = lam >= 0.1
    T = float(np.max(np.log(np.maximum(r[fast], 1.0) * 1e16) / (2.0 * lam[fast])))
    t_lo = float(max(0.0, np.min(np.log(np.maximum(r, 1.0) / 60.0) / (2.0 * lam))))
    pts = sorted({float(c) for c in centres if t_lo < c < T})
    out = np.zeros(ks.size)
    with np.errstate(divide="ignore", under="ignore"):
        for j in range(ks.size):
            if centres[j] > T:
                continue

            def f(t, j=j):
                logs = sum(log_alive(k, t) for k in range(ks.size) if k != j)
                return density(j, t) * math.exp(logs)

            edges = [t_lo, *pts, T]
            out[j] = sum(quad(f, a, b, epsabs=1e-14, epsrel=1e-11, limit=200)[0] for a, b in zip(edges, edges[1:]))
    return out


def _g_prime(u, beta):
    return np.exp(beta * np.cos(u)) * (np.cos(u) - beta * np.sin(u) ** 2)


def cluster_escape_rates(k, beta, *, normalisation="softmax") -> np.ndarray:
    """The eigenvalues ``mu_0..mu_(k-1)`` of ``k`` equally spaced equal clusters on the circle (module docstring).

    ``mu_0 = 0`` is the rotation; a positive ``mu_l`` is unstable (the clusters' spacing perturbed in
    the pattern ``e^(2 pi i q l / k)`` grows at that rate). (USA) rates are on the clock of
    ``theta' = (1/n) sum ...`` (carry ``e^(beta cos(2 pi / k))``); (SA) divides by ``S``.
    """
    k = check_int("k", k, low=2)
    beta = check_real("beta", beta, low=0.0, high=_MAX_BETA)
    check_option("normalisation", normalisation, NORMALISATIONS)
    j = np.arange(1, k)
    gp = _g_prime(2.0 * np.pi * j / k, beta)
    if normalisation == "uniform":
        S = float(k)
    else:
        gp = gp * np.exp(-beta)  # S e^-beta = sum_j e^(beta (cos - 1)): no overflow
        S = float(np.sum(np.exp(beta * (np.cos(2.0 * np.pi * np.arange(k) / k) - 1.0))))
    ls = np.arange(k)
    return np.array([np.sum(gp * (np.cos(2.0 * np.pi * j * l / k) - 1.0)) for l in ls]) / S


def cluster_escape_rate(k, beta, *, normalisation="softmax") -> float:
    """``max_l mu_l``: the rate at which ``k`` equally spaced clusters leave their equilibrium."""
    return float(np.max(cluster_escape_rates(k, beta, normalisation=normalisation)))


def cluster_escape_rate_quadrature(k, beta, *, normalisation="softmax", h=1e-5) -> float:
    """:func:`cluster_escape_rate` from a numerical Jacobian of :func:`angle_velocity` (central differences).

    The ``k x k`` Jacobian of the angle velocities at ``theta_q = 2 pi q / k`` by central differences of
    step ``h`` (error ``O(h^2)``, about 1e-9 relative), its largest real eigenvalue: no circulant algebra.
    """
    k = check_int("k", k, low=2)
    theta0 = 2.0 * np.pi * np.arange(k) / k
    J = np.empty((k, k))
    for q in range(k):
        e = np.zeros(k)
        e[q] = h
        J[:, q] = (angle_velocity(theta0 + e, beta, normalisation=normalisation)
                   - angle_velocity(theta0 - e, beta, normalisation=normalisation)) / (2.0 * h)
    return float(np.max(np.linalg.eigvals(J).real))


def cluster_escape_mode(k, beta, *, normalisation="softmax") -> int:
    """The pattern ``l`` of the largest escape rate (``xi_q = cos(2 pi q l / k)`` is its eigenvector); smallest at ties."""
    mu = cluster_escape_rates(k, beta, normalisation=normalisation)
    return int(np.argmax(mu > mu.max() * (1.0 - 1e-12)))


def merge_time(theta0, beta, *, normalisation="softmax", rho1=0.999, t_max=None, rtol=1e-12, atol=1e-14) -> float:
    """First time two of the tokens at angles ``theta0`` reach inner product ``rho1`` (``nan`` if not by ``t_max``).

    :func:`angle_velocity` integrated by ``solve_ivp`` (DOP853) with a terminal event on
    ``max_(i != j) cos(theta_i - theta_j) - rho1``: the reference of the escape times, in angles, without
    :mod:`spectral`.
    """
    from scipy.integrate import solve_ivp

    theta0 = np.asarray(theta0, dtype=float).ravel()
    if theta0.size < 2:
        raise InputError("theta0 must hold at least two angles")
    rho1 = check_real("rho1", rho1, low=-1.0, high=1.0, low_open=True, high_open=True)
    iu = np.triu_indices(theta0.size, 1)

    def closest(t, y):
        return float(np.max(np.cos(y[iu[0]] - y[iu[1]]))) - rho1

    if closest(0.0, theta0) >= 0.0:
        return 0.0
    closest.terminal, closest.direction = True, 1.0
    t_max = 1e300 if t_max is None else float(t_max)
    sol = solve_ivp(lambda t, y: angle_velocity(y, beta, normalisation=normalisation), (0.0, t_max), theta0,
                    method="DOP853", rtol=rtol, atol=atol, events=closest)
    if sol.status == -1:  # pragma: no cover - smooth right-hand side
        raise RuntimeError(f"solve_ivp failed: {sol.message}")
    return float(sol.t_events[0][0]) if sol.t_events[0].size else float("nan")


def cap_cosine(k, eps) -> float:
    """``alpha``: the largest cosine between points of two neighbouring caps ``{<x, w_q> >= 1 - 2 eps}``.

    Centres ``w_q`` equally spaced on the circle (angle ``2 pi / k``), caps of angular radius
    ``arccos(1 - 2 eps)`` (Geshkovski, Koubbi, Polyanskiy & Rigollet, arXiv 2410.06833, section 2: ``alpha(eps)``).
    """
    k = check_int("k", k, low=2)
    eps = check_real("eps", eps, low=0.0, high=1.0 / 16.0)
    gap = 2.0 * math.pi / k - 2.0 * math.acos(1.0 - 2.0 * eps)
    return 1.0 if gap <= 0.0 else math.cos(gap)


def separation_margin(k, beta, eps, n) -> float:
    """``gamma(beta) = 1 - alpha - 8 eps - log(2 n^2 / eps) / beta`` of the metastability theorem's hypothesis.

    The configuration of ``n`` tokens in ``k`` equally spaced caps is ``(beta, eps)``-separated when this is
    positive (arXiv 2410.06833, section 2, the definition before the main theorem; ``alpha`` from
    :func:`cap_cosine`).
    """
    beta = _beta(beta)
    n = check_int("n", n, low=2)
    eps = check_real("eps", eps, low=0.0, high=1.0 / 16.0, low_open=True)
    return 1.0 - cap_cosine(k, eps) - 8.0 * eps - math.log(2.0 * n * n / eps) / beta


def escape_time_bound(k, beta, eps, n) -> float:
    """The theorem's lower bound ``(eps / n) e^((1 - alpha) beta)`` on the time the tokens stay in their ``2 eps`` caps."""
    beta = _beta(beta)
    return (eps / n) * math.exp((1.0 - cap_cosine(k, eps)) * beta)


def separation_margin_max(k, beta, n) -> float:
    """``max_(0 < eps <= 1/16) gamma(beta)`` of :func:`separation_margin`: the best case of the hypothesis.

    A scan of ``eps`` over 2000 log-spaced values in ``[1e-14, 1/16]`` refined by ``minimize_scalar`` (bounded,
    in ``log eps``) around the best: positive exactly when some ``eps`` makes ``k`` equally spaced caps of ``n``
    tokens ``(beta, eps)``-separated.
    """
    from scipy.optimize import minimize_scalar

    k = check_int("k", k, low=2)
    beta = _beta(beta)
    n = check_int("n", n, low=2)
    logs = np.linspace(math.log(1e-14), math.log(1.0 / 16.0), 2000)
    eps = np.exp(logs)
    gap = 2.0 * math.pi / k - 2.0 * np.arccos(1.0 - 2.0 * eps)
    alpha = np.where(gap <= 0.0, 1.0, np.cos(np.maximum(gap, 0.0)))
    gamma = 1.0 - alpha - 8.0 * eps - np.log(2.0 * n * n / eps) / beta
    i = int(np.argmax(gamma))
    lo, hi = logs[max(i - 1, 0)], logs[min(i + 1, logs.size - 1)]
    if hi > lo:
        res = minimize_scalar(lambda le: -separation_margin(k, beta, math.exp(le), n), bounds=(lo, hi),
                              method="bounded", options={"xatol": 1e-10})
        return float(max(gamma[i], -res.fun))
    return float(gamma[i])
