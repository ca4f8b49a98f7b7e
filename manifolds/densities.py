"""Probability densities on the circle, the spheres and R^d, with exact log-gradients.

Densities are taken with respect to the Riemannian volume: on S^1 they
integrate to 1 over the angle, on S^2 over the area, on R^d over Lebesgue
measure.  ``grad_log_pdf`` returns the Riemannian gradient as an ambient
vector tangent to the manifold (the drift ``grad log p`` of DRIFT eq. (1)).

``pdf``, ``log_pdf`` and ``grad_log_pdf`` are backend neutral (the namespace
comes from ``x``); ``sample`` and, on S^1, ``cdf``, ``angle_pdf``,
``quantile_angles`` and ``quantile_grid`` are host references that return
NumPy arrays (draws use a NumPy ``Generator``, so a seed gives the same points
on every backend).  :func:`circle_density` names the two non-uniform laws on
S^1 that the FNA density checks use.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod

import numpy as np

from spectral.floor.backend import from_numpy
from spectral.floor.validation import InputError, as_generator, check_int, check_option, check_real

from .base import Manifold
from .circle import Circle
from .euclidean import Euclidean
from .points import as_points, check_points_memory
from .sphere import Sphere

__all__ = [
    "CIRCLE_DENSITIES",
    "circle_density",
    "Density",
    "Uniform",
    "VonMises",
    "CosineDensity",
    "VonMisesFisher",
    "GaussianMixture",
]

TWO_PI = 2.0 * math.pi


def _const(xp, values, like):
    """Host constants moved to the namespace, device and dtype of ``like``."""
    arr = from_numpy(np.asarray(values, dtype=np.float64), like=like)
    return xp.astype(arr, like.dtype)


def _dot_const(x, vec):
    """``x @ vec`` for a host vector ``vec`` of Python floats (keeps ``x``'s dtype and device)."""
    acc = None
    for k, v in enumerate(vec):
        term = x[:, k] * float(v)
        acc = term if acc is None else acc + term
    return acc


def _invert_circle_cdf(cdf, pdf, u, *, coarse: int = 4096):
    """Solve ``cdf(theta) = u`` on ``[0, 2 pi]`` by Newton steps safeguarded by bisection.

    ``cdf`` is increasing from 0 to 1 and ``pdf`` is its derivative.  The CDF is
    first tabulated on ``coarse + 1`` equispaced angles; each root starts from
    linear interpolation inside its table cell, which is also its initial
    bracket.  A Newton step leaving the (closed) bracket, or a zero pdf, is
    replaced by bisection, so the iteration converges for every continuous
    positive density; it stops when every step is below ``8 eps * 2 pi``.
    """
    grid = np.linspace(0.0, TWO_PI, coarse + 1)
    table = np.maximum.accumulate(np.clip(cdf(grid), 0.0, 1.0))
    table[0], table[-1] = 0.0, 1.0
    idx = np.clip(np.searchsorted(table, u, side="right") - 1, 0, coarse - 1)
    lo, hi = grid[idx], grid[idx + 1]
    f_lo, f_hi = table[idx], table[idx + 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(f_hi > f_lo, (u - f_lo) / (f_hi - f_lo), 0.5)
    t = lo + np.clip(frac, 0.0, 1.0) * (hi - lo)
    # a root is done when its Newton step is below 8 ulps of 2 pi or its residual is at the
    # rounding level of the CDF (4 eps); only the remaining roots are iterated
    step_tol = 8 * np.finfo(np.float64).eps * TWO_PI
    active = np.arange(u.size)
    for _ in range(100):
        if active.size == 0:
            break
        ta, ua, la, ha = t[active], u[active], lo[active], hi[active]
        resid = cdf(ta) - ua
        la = np.where(resid <= 0, ta, la)
        ha = np.where(resid >= 0, ta, ha)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            cand = ta - resid / pdf(ta)
        # closed bracket: a converged iterate sits on one end of it and must not be bisected away
        bad = ~((cand >= la) & (cand <= ha))
        cand = np.where(bad, 0.5 * (la + ha), cand)
        cand = np.where(resid == 0, ta, cand)
        done = (np.abs(cand - ta) <= step_tol) | (np.abs(resid) <= 4 * np.finfo(np.float64).eps)
        t[active], lo[active], hi[active] = np.where(np.abs(resid) <= 4 * np.finfo(np.float64).eps, ta, cand), la, ha
        active = active[~done]
    return t


class Density(ABC):
    """A probability density on ``manifold`` w.r.t. its Riemannian volume."""

    manifold: Manifold

    @abstractmethod
    def log_pdf(self, x):
        """``log p(x)`` for points ``x`` of shape ``(n, ambient_dim)``; shape ``(n,)``."""

    @abstractmethod
    def grad_log_pdf(self, x):
        """Riemannian gradient of ``log p`` as ambient tangent vectors, shape ``(n, ambient_dim)``."""

    @abstractmethod
    def _sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` host draws."""

    def pdf(self, x):
        """Density ``p(x)`` (``exp(log_pdf(x))``), shape ``(n,)``, in the namespace of ``x``."""
        xp, x = as_points(x, self.manifold.ambient_dim)
        return xp.exp(self.log_pdf(x))

    def sample(self, n: int, *, rng=None) -> np.ndarray:
        """``n`` i.i.d. points, host NumPy float64 of shape ``(n, ambient_dim)``.

        Parameters
        ----------
        n : int
            Number of points (>= 1).
        rng : numpy.random.Generator or int, optional
            Random source (SPEC 7; no global state).
        """
        n = check_int("n", n, low=1)
        self._check_draws_memory(n)
        return self._sample(n, as_generator(rng))

    def _check_draws_memory(self, n: int) -> None:
        """The memory guard of ``n`` draws: the result and the temporaries of the samplers here (a mixture's
        (n, d, d) Cholesky factors, a rejection sampler's 2 n candidates), before anything is drawn."""
        d = self.manifold.ambient_dim
        check_points_memory(n, 8 * (d * d + 4 * d + 8), what=f"draws of {type(self).__name__}")


class _CircleLaw(ABC):
    """Mixin for laws on S^1: exact CDF in the angle and the deterministic quantile grid."""

    manifold: Manifold

    @abstractmethod
    def _angle_pdf(self, theta: np.ndarray) -> np.ndarray:
        """Density in the angle (host)."""

    @abstractmethod
    def _angle_cdf(self, theta: np.ndarray) -> np.ndarray:
        """``int_0^theta p`` (host)."""

    def _require_circle(self, what: str):
        if self.manifold != Circle():
            raise InputError(f"{what} is defined only for densities on the circle (Sphere(1)), not on "
                             f"{self.manifold!r}")

    def _angles(self, theta, what: str) -> np.ndarray:
        self._require_circle(what)
        theta = np.asarray(theta, dtype=np.float64)
        if not np.all(np.isfinite(theta)):
            raise InputError("theta must be finite angles (radians)")
        return theta

    def cdf(self, theta) -> np.ndarray:
        """``F(theta) = int_0^theta p(t) dt`` for angles ``theta`` (host NumPy; S^1 only).

        Defined for every real ``theta`` (``F(theta + 2 pi) = F(theta) + 1``);
        on ``[0, 2 pi]`` it increases from 0 to 1.
        """
        return self._angle_cdf(self._angles(theta, "cdf"))

    def angle_pdf(self, theta) -> np.ndarray:
        """The density in the angle, ``p(cos theta, sin theta)``, at angles ``theta`` (host NumPy; S^1 only).

        Examples
        --------
        >>> import math
        >>> float(CosineDensity(0.5).angle_pdf(0.0) * 2 * math.pi)
        1.5
        """
        return self._angle_pdf(self._angles(theta, "angle_pdf"))

    def quantile_angles(self, n: int) -> np.ndarray:
        """Angles ``theta_j`` at the quantiles ``F(theta_j) = (j + 1/2) / n``, ``j = 0..n-1`` (S^1 only).

        Host NumPy, ascending in ``(0, 2 pi)``.  Each root of the exact
        (series or closed-form) CDF is found by Newton steps safeguarded by
        bisection, started inside its cell of a 4096-cell CDF table, and
        iterated until the step is below 8 ulps of ``2 pi`` or the residual in
        ``F`` is at rounding level: the angles are exact to rounding, and
        ``n = 4e5`` takes ~0.25 s for the von Mises law at ``kappa = 1``.
        The points of this grid are the deterministic "sample" of the density
        checks on S^1 (FNA-12, FNA-14, DRIFT).

        Examples
        --------
        >>> theta = Uniform(Circle()).quantile_angles(4)
        >>> [round(float(t / math.pi), 12) for t in theta]
        [0.25, 0.75, 1.25, 1.75]
        """
        self._require_circle("quantile_angles")
        n = check_int("n", n, low=1)
        # the Newton iteration holds about 24 arrays of n (angles, brackets, CDF values, indices, masks)
        check_points_memory(n, 8 * 24, what=f"the quantile grid of {type(self).__name__}")
        u = (np.arange(n, dtype=np.float64) + 0.5) / n
        return _invert_circle_cdf(self._angle_cdf, self._angle_pdf, u)

    def quantile_grid(self, n: int) -> np.ndarray:
        """The points ``(cos theta_j, sin theta_j)`` of :meth:`quantile_angles`, shape ``(n, 2)`` (host)."""
        self._require_circle("quantile_grid")
        theta = self.quantile_angles(n)
        return np.stack([np.cos(theta), np.sin(theta)], axis=1)


class Uniform(_CircleLaw, Density):
    """The uniform law ``p = 1 / volume`` on a compact manifold (circle or sphere).

    Parameters
    ----------
    manifold : Circle or Sphere
        ``Euclidean`` is refused (no uniform probability law on R^d).
    """

    def __init__(self, manifold: Manifold):
        if not isinstance(manifold, Manifold):
            raise InputError(f"manifold must be a Circle() or Sphere(dim), got {manifold!r}")
        if not math.isfinite(manifold.volume):
            raise InputError(f"manifold must have finite volume (Circle or Sphere) for Uniform, got {manifold!r}")
        self.manifold = manifold
        self._log_vol = math.log(manifold.volume)

    def __repr__(self):
        return f"Uniform({self.manifold!r})"

    def log_pdf(self, x):
        """``-log(volume)`` at every point (NaN at a point with a NaN or inf coordinate)."""
        xp, x = as_points(x, self.manifold.ambient_dim)
        finite = xp.all(xp.isfinite(x), axis=1)
        return xp.where(finite, xp.zeros_like(x[:, 0]) - self._log_vol, x[:, 0] * math.nan)

    def grad_log_pdf(self, x):
        """Zero vectors (NaN at a point with a NaN or inf coordinate)."""
        xp, x = as_points(x, self.manifold.ambient_dim)
        finite = xp.all(xp.isfinite(x), axis=1)
        return xp.where(finite[:, None], xp.zeros_like(x), x * math.nan)

    def _sample(self, n, rng):
        return self.manifold._sample_uniform(n, rng)

    def _angle_pdf(self, theta):
        return np.full_like(theta, 1.0 / TWO_PI)

    def _angle_cdf(self, theta):
        return theta / TWO_PI


class VonMises(_CircleLaw, Density):
    """Von Mises law on S^1: ``p(theta) = exp(kappa cos(theta - mu)) / (2 pi I_0(kappa))``.

    Parameters
    ----------
    mu : float
        Mean angle (radians).
    kappa : float
        Concentration, ``kappa >= 0`` (0 is uniform).

    Notes
    -----
    In ambient coordinates ``log p(x) = kappa <x, m> - log(2 pi I_0(kappa))``
    with ``m = (cos mu, sin mu)``, so ``grad log p = kappa (m - <x, m> x)``.
    The CDF is the Fourier series
    ``F(theta) = theta / (2 pi) + (1/pi) sum_k (I_k/I_0)(kappa) (sin k(theta - mu) + sin k mu) / k``.
    """

    def __init__(self, mu: float = 0.0, kappa: float = 1.0):
        self.mu = check_real("mu", mu)
        self.kappa = check_real("kappa", kappa, low=0.0)
        self.manifold = Circle()
        self.mean_direction = np.array([math.cos(self.mu), math.sin(self.mu)])
        from scipy.special import ive  # here: scipy.special costs ~100 ms at the start-up of every check

        # log(2 pi I_0(kappa)) with I_0 = ive(0, kappa) e^kappa (no overflow).
        self._log_norm = math.log(TWO_PI) + math.log(ive(0, self.kappa)) + self.kappa
        kmax = int(40 + 12 * math.sqrt(self.kappa))
        ratios = ive(np.arange(1, kmax + 1), self.kappa) / ive(0, self.kappa)
        keep = ratios > 1e-18 * ratios[0] if self.kappa > 0 else np.zeros(kmax, dtype=bool)
        self._ks = np.arange(1, kmax + 1)[keep].astype(np.float64)
        self._ratios = ratios[keep]

    def __repr__(self):
        return f"VonMises(mu={self.mu!r}, kappa={self.kappa!r})"

    def log_pdf(self, x):
        """``kappa <x, m> - log(2 pi I_0(kappa))``."""
        xp, x = as_points(x, 2)
        return self.kappa * _dot_const(x, self.mean_direction) - self._log_norm

    def grad_log_pdf(self, x):
        """``kappa (m - <x, m> x)`` (tangent at unit ``x``)."""
        xp, x = as_points(x, 2)
        m = _const(xp, self.mean_direction, x)
        return self.kappa * (m[None, :] - _dot_const(x, self.mean_direction)[:, None] * x)

    def _sample(self, n, rng):
        theta = rng.vonmises(self.mu, self.kappa, size=n)
        return np.stack([np.cos(theta), np.sin(theta)], axis=1)

    def _angle_pdf(self, theta):
        return np.exp(self.kappa * np.cos(theta - self.mu) - self._log_norm)

    def _angle_cdf(self, theta):
        k = self._ks
        const = np.sum(self._ratios * np.sin(k * self.mu) / k)
        flat = theta.reshape(-1)
        series = np.empty_like(flat)
        # chunks of <= 2^21 (point, term) pairs bound the memory for large n and kappa
        rows = max(1, 2**21 // max(k.size, 1))
        for s in range(0, flat.size, rows):
            t = flat[s : s + rows, None]
            series[s : s + rows] = np.sum(self._ratios * np.sin(k * (t - self.mu)) / k, axis=-1)
        return theta / TWO_PI + (series.reshape(theta.shape) + const) / math.pi


class CosineDensity(_CircleLaw, Density):
    """``p(theta) = (1 + a cos(theta - mu)) / (2 pi)`` on S^1, ``|a| < 1``.

    With the default ``amplitude=0.5`` this is the density "rho proportional
    to 1 + 0.5 cos x" of the FNA-12 and DRIFT checks.

    Parameters
    ----------
    amplitude : float
        ``a`` with ``-1 < a < 1`` (so that ``p > 0``).
    mu : float
        Angle of the maximum (radians).

    Notes
    -----
    ``grad log p = a (m - <x, m> x) / (1 + a <x, m>)`` with ``m = (cos mu, sin mu)``;
    ``F(theta) = (theta + a (sin(theta - mu) + sin mu)) / (2 pi)``.
    """

    def __init__(self, amplitude: float = 0.5, mu: float = 0.0):
        self.amplitude = check_real("amplitude", amplitude, low=-1.0, high=1.0, low_open=True, high_open=True)
        self.mu = check_real("mu", mu)
        self.manifold = Circle()
        self.mean_direction = np.array([math.cos(self.mu), math.sin(self.mu)])

    def __repr__(self):
        return f"CosineDensity(amplitude={self.amplitude!r}, mu={self.mu!r})"

    def log_pdf(self, x):
        """``log(1 + a <x, m>) - log(2 pi)``."""
        xp, x = as_points(x, 2)
        return xp.log(1.0 + self.amplitude * _dot_const(x, self.mean_direction)) - math.log(TWO_PI)

    def grad_log_pdf(self, x):
        """``a (m - <x, m> x) / (1 + a <x, m>)``."""
        xp, x = as_points(x, 2)
        m = _const(xp, self.mean_direction, x)
        c = _dot_const(x, self.mean_direction)
        return self.amplitude * (m[None, :] - c[:, None] * x) / (1.0 + self.amplitude * c)[:, None]

    def _sample(self, n, rng):
        # Rejection from the uniform law: accept with probability p / p_max.
        a = self.amplitude
        out = np.empty(0)
        while out.size < n:
            m = max(2 * (n - out.size), 64)
            theta = rng.uniform(0.0, TWO_PI, size=m)
            accept = rng.uniform(0.0, 1.0 + abs(a), size=m) < 1.0 + a * np.cos(theta - self.mu)
            out = np.concatenate([out, theta[accept]])
        theta = out[:n]
        return np.stack([np.cos(theta), np.sin(theta)], axis=1)

    def _angle_pdf(self, theta):
        return (1.0 + self.amplitude * np.cos(theta - self.mu)) / TWO_PI

    def _angle_cdf(self, theta):
        a, mu = self.amplitude, self.mu
        return (theta + a * (np.sin(theta - mu) + math.sin(mu))) / TWO_PI


#: Names of the two non-uniform laws on S^1 of the FNA density checks (FNA-12, FNA-14).
CIRCLE_DENSITIES = ("cosine", "vonmises")


def circle_density(name: str) -> Density:
    """One of the two non-uniform laws on S^1 that the FNA density checks compare (FNA-12, FNA-14).

    Parameters
    ----------
    name : {"cosine", "vonmises"}
        ``"cosine"``: ``CosineDensity(0.5)``, ``(1 + 0.5 cos x) / (2 pi)`` (smooth, ratio 3 between
        its largest and smallest value); ``"vonmises"``: ``VonMises(0, 1)``,
        ``exp(cos x) / (2 pi I_0(1))`` (ratio e^2 = 7.4).

    Examples
    --------
    >>> circle_density("vonmises")
    VonMises(mu=0.0, kappa=1.0)
    """
    check_option("name", name, CIRCLE_DENSITIES)
    return CosineDensity(0.5, 0.0) if name == "cosine" else VonMises(0.0, 1.0)


class VonMisesFisher(Density):
    """Von Mises-Fisher law on S^dim: ``p(x) = C_D(kappa) exp(kappa <mu, x>)``, ``D = dim + 1``.

    Parameters
    ----------
    mu : array-like of shape (D,)
        Mean direction, a unit vector (``| |mu| - 1 | <= 1e-10``), ``D >= 2``.
    kappa : float
        Concentration ``kappa >= 0``.

    Notes
    -----
    ``C_D(kappa) = kappa^(D/2-1) / ((2 pi)^(D/2) I_{D/2-1}(kappa))`` w.r.t. surface
    measure (``kappa / (4 pi sinh kappa)`` on S^2); for ``kappa < 1e-6`` the
    expansion ``log C = -log|S^dim| - kappa^2 / (2 D)`` (error ``O(kappa^4)``) is
    used.  ``grad log p = kappa (mu - <x, mu> x)``.  Sampling uses
    ``scipy.stats.vonmises_fisher`` (Wood 1994) with the given generator.
    """

    def __init__(self, mu, kappa: float = 1.0):
        mu = np.asarray(mu, dtype=np.float64)
        if mu.ndim != 1 or mu.shape[0] < 2 or not np.all(np.isfinite(mu)):
            raise InputError(f"mu must be a finite 1-D unit vector of length >= 2, got {mu!r}")
        if abs(np.linalg.norm(mu) - 1.0) > 1e-10:
            raise InputError(f"mu must be a unit vector (| |mu| - 1 | <= 1e-10), got |mu| = {np.linalg.norm(mu)!r}")
        self.mu = mu / np.linalg.norm(mu)
        self.kappa = check_real("kappa", kappa, low=0.0)
        D = mu.shape[0]
        self.manifold = Circle() if D == 2 else Sphere(D - 1)
        log_vol = math.log(self.manifold.volume)
        k = self.kappa
        if k < 1e-6:
            self._log_c = -log_vol - k * k / (2.0 * D)
        else:
            from scipy.special import ive  # here: scipy.special costs ~100 ms at the start-up of every check

            nu = D / 2.0 - 1.0
            self._log_c = nu * math.log(k) - (D / 2.0) * math.log(TWO_PI) - (math.log(ive(nu, k)) + k)

    def __repr__(self):
        return f"VonMisesFisher(mu={self.mu.tolist()!r}, kappa={self.kappa!r})"

    def log_pdf(self, x):
        """``log C_D(kappa) + kappa <mu, x>``."""
        xp, x = as_points(x, self.mu.shape[0])
        return self.kappa * _dot_const(x, self.mu) + self._log_c

    def grad_log_pdf(self, x):
        """``kappa (mu - <x, mu> x)`` (tangent at unit ``x``)."""
        xp, x = as_points(x, self.mu.shape[0])
        m = _const(xp, self.mu, x)
        return self.kappa * (m[None, :] - _dot_const(x, self.mu)[:, None] * x)

    def _sample(self, n, rng):
        if self.kappa == 0.0:
            return self.manifold._sample_uniform(n, rng)
        from scipy.stats import vonmises_fisher

        pts = vonmises_fisher(self.mu, self.kappa).rvs(n, random_state=rng)
        return np.asarray(pts, dtype=np.float64).reshape(n, self.mu.shape[0])


class GaussianMixture(Density):
    """Gaussian mixture ``p(x) = sum_k w_k N(x; m_k, S_k)`` on R^d.

    Parameters
    ----------
    means : array-like of shape (K, d)
        Component means (a 1-D array is one component).
    covariances : float or array-like
        Scalar ``s`` (every ``S_k = s I``), shape ``(K,)`` (``S_k = s_k I``),
        ``(K, d)`` (diagonal) or ``(K, d, d)`` (full).  Each ``S_k`` must be
        symmetric (to ``1e-12`` relative) and positive definite (Cholesky).
    weights : array-like of shape (K,), optional
        ``w_k >= 0`` with ``|sum w - 1| <= 1e-12``; equal weights by default.

    Notes
    -----
    ``grad log p(x) = - sum_k r_k(x) S_k^{-1} (x - m_k)`` with responsibilities
    ``r_k = w_k N_k(x) / p(x)``, evaluated with a log-sum-exp.
    """

    def __init__(self, means, covariances, weights=None):
        means = np.asarray(means, dtype=np.float64)
        if means.ndim == 1:
            means = means[None, :]
        if means.ndim != 2 or means.shape[0] < 1 or means.shape[1] < 1 or not np.all(np.isfinite(means)):
            raise InputError(f"means must be a finite array of shape (K, d) with K, d >= 1, got shape {means.shape}")
        K, d = means.shape
        cov = np.asarray(covariances, dtype=np.float64)
        if not np.all(np.isfinite(cov)):  # before broadcasting: inf * 0 off the diagonal would warn first
            raise InputError("covariances must be finite")
        if cov.ndim == 0:
            cov = np.broadcast_to(cov * np.eye(d), (K, d, d)).copy()
        elif cov.shape == (K,):
            cov = cov[:, None, None] * np.eye(d)[None]
        elif cov.shape == (K, d):
            cov = np.stack([np.diag(c) for c in cov])
        elif cov.shape != (K, d, d):
            raise InputError(
                f"covariances must be a scalar or have shape ({K},), ({K}, {d}) or ({K}, {d}, {d}), got {cov.shape}"
            )
        chol = np.empty_like(cov)
        for k in range(K):
            scale = np.max(np.abs(cov[k]))
            if np.max(np.abs(cov[k] - cov[k].T)) > 1e-12 * max(scale, 1e-300):
                raise InputError(f"covariances[{k}] must be symmetric (to 1e-12 relative)")
            try:
                chol[k] = np.linalg.cholesky(cov[k])
            except np.linalg.LinAlgError:
                raise InputError(
                    f"covariances[{k}] must be positive definite (all eigenvalues > 0), "
                    f"got eigenvalues {np.linalg.eigvalsh(cov[k])}"
                ) from None
        if weights is None:
            w = np.full(K, 1.0 / K)
        else:
            w = np.asarray(weights, dtype=np.float64)
            if w.shape != (K,) or not np.all(np.isfinite(w)):
                raise InputError(f"weights must be a finite array of shape ({K},), got {w!r}")
            if np.any(w < 0):
                raise InputError(f"weights must be >= 0, got {w!r}")
            if abs(w.sum() - 1.0) > 1e-12:
                raise InputError(f"weights must sum to 1 (within 1e-12), got sum {w.sum()!r}")
        self.means = means
        self.covariances = cov
        self.weights = w
        self.manifold = Euclidean(d)
        self._chol = chol
        self._prec = np.linalg.inv(cov)
        self._prec = 0.5 * (self._prec + np.transpose(self._prec, (0, 2, 1)))
        logdet = 2.0 * np.sum(np.log(np.diagonal(chol, axis1=1, axis2=2)), axis=1)
        self._active = [k for k in range(K) if w[k] > 0]
        self._log_coef = {k: float(math.log(w[k]) - 0.5 * (d * math.log(TWO_PI) + logdet[k])) for k in self._active}

    @classmethod
    def fna_three_modes(cls) -> "GaussianMixture":
        """The FNA paper's Fig. 2b mixture: means (3, 0), (-3, 0), (0, sqrt 3), covariance I/4, equal weights."""
        return cls([[3.0, 0.0], [-3.0, 0.0], [0.0, math.sqrt(3.0)]], 0.25)

    def __repr__(self):
        return f"GaussianMixture(K={self.means.shape[0]}, d={self.means.shape[1]})"

    def _components(self, x):
        xp, x = as_points(x, self.means.shape[1])
        logs, pgrads = [], []
        for k in self._active:
            diff = x - _const(xp, self.means[k], x)[None, :]
            pd = diff @ _const(xp, self._prec[k], x)
            logs.append(self._log_coef[k] - 0.5 * xp.sum(pd * diff, axis=1))
            pgrads.append(pd)
        L = xp.stack(logs, axis=1)
        mx = xp.max(L, axis=1, keepdims=True)
        logp = mx[:, 0] + xp.log(xp.sum(xp.exp(L - mx), axis=1))
        return xp, L, logp, pgrads

    def log_pdf(self, x):
        """``log sum_k w_k N(x; m_k, S_k)`` (log-sum-exp)."""
        return self._components(x)[2]

    def grad_log_pdf(self, x):
        """``- sum_k r_k(x) S_k^{-1} (x - m_k)``."""
        xp, L, logp, pgrads = self._components(x)
        r = xp.exp(L - logp[:, None])
        g = None
        for j, pd in enumerate(pgrads):
            term = -r[:, j][:, None] * pd
            g = term if g is None else g + term
        return g

    def _sample(self, n, rng):
        return self._sample_with_labels(n, rng)[0]

    def _sample_with_labels(self, n, rng):
        K, d = self.means.shape
        comp = rng.choice(K, size=n, p=self.weights)
        z = rng.standard_normal((n, d))
        return self.means[comp] + np.einsum("nij,nj->ni", self._chol[comp], z), comp

    def sample_with_labels(self, n: int, *, rng=None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` i.i.d. points and the component each was drawn from (component first, then the
        Gaussian; the same draws as :meth:`sample` for the same ``rng``)."""
        n = check_int("n", n, low=1)
        self._check_draws_memory(n)
        return self._sample_with_labels(n, as_generator(rng))
