r"""Exact references for the GA checks: self-attention maps Gaussian measures to Gaussian measures.

Castin, Ablin, Carrillo & Peyre, "A unified perspective on the dynamics of deep transformers" (arXiv
2501.18322; GA below) write the mean-field limit of ``n`` tokens moved by attention (the particle system
``dx_i/dt = sum_j P_ij V x_j`` of :func:`spectral.attention_flow` in ``R^d``) as the Transformer PDE
``d mu/dt + div(mu Gamma_mu) = 0`` with ``Gamma_mu(x) = int P(x, y) V y d mu(y)``, and show that for
several attention variants a Gaussian ``mu_0 = N(alpha_0, Sigma_0)`` stays Gaussian, its mean and
covariance solving closed ODEs. Everything here is derived again from those definitions with NumPy
and SciPy only; nothing imports the numerics of :mod:`spectral`.

Why Gaussians stay Gaussian: the velocity is affine
---------------------------------------------------
If ``Gamma_mu(x) = M x + c`` for ``mu = N(alpha, Sigma)``, the flow of ``mu`` is the push-forward by an
affine map, so ``mu_t`` is Gaussian and

.. math:: \dot\alpha = M\alpha + c, \qquad \dot\Sigma = M\Sigma + \Sigma M^\top .

For each variant ``Gamma_mu(x) = V m(x)`` with ``m(x)`` the mean of ``y`` under the attention weights of
``x``, and ``m`` is affine (scores ``s(x, y)``, inverse temperature ``beta``):

* softmax, dot product ``s = beta <x, B y>`` (``B = Q^T K``): the weights ``e^(beta <B^T x, y>)`` tilt
  ``N(alpha, Sigma)`` into ``N(alpha + beta Sigma B^T x, Sigma)``, so ``M = beta V Sigma B^T``,
  ``c = V alpha``;
* softmax, L2 ``s = -beta |Q x - K y|^2``: as a function of ``y`` the weight is
  ``e^(2 beta <K^T Q x, y> - beta |K y|^2)``, a Gaussian factor of precision ``2 beta K^T K`` times a tilt,
  so ``m(x) = G (alpha + 2 beta Sigma K^T Q x)`` with ``G = (I + 2 beta Sigma K^T K)^(-1)``:
  ``M = 2 beta V G Sigma K^T Q``, ``c = V G alpha``;
* Sinkhorn (doubly stochastic) attention: the weights are the density of the entropic coupling
  ``pi(x, y) ~ e^(x^T B' y + f(x) + g(y))`` whose marginals are both ``mu`` (``B' = beta B`` for dot
  products; ``2 beta Q^T K`` for L2, whose ``|Q x|^2`` and ``|K y|^2`` parts are absorbed by ``f`` and
  ``g``), and ``m(x) = E_pi[y | x]``. For Gaussian marginals ``pi`` is Gaussian with a cross-covariance
  ``C`` (:func:`sinkhorn_cross_covariance`), ``m(x) = alpha + C^T Sigma^(-1) (x - alpha)``, so
  ``d alpha/dt = V alpha`` and ``d Sigma/dt = V C^T + C V^T``;
* multi-head attention: the heads' velocities add, so do their ``M`` and ``c``.

Sinkhorn's Gaussian coupling in closed form
-------------------------------------------
Whiten ``u = Sigma^(-1/2)(x - alpha)``: the marginals become standard and the interaction
``u^T B~ v`` with ``B~ = Sigma^(1/2) B' Sigma^(1/2)``. A Gaussian pair with standard marginals and
cross-covariance ``C~`` has the off-diagonal precision block ``-(I - C~ C~^T)^(-1) C~``, which must equal
``-B~``. With the SVD ``B~ = U diag(s) W^T``, ``C~ = U diag(g(s)) W^T`` with ``g/(1 - g^2) = s``, i.e.
``g(s) = 2 s / (1 + sqrt(1 + 4 s^2))`` in ``[0, 1)``, and ``C = Sigma^(1/2) C~ Sigma^(1/2)``. (The
authors' public code for the paper states the same right-hand side in another closed form; the tests
compare the two.) Because ``|C~|_2 < 1``, ``|d Sigma/dt| <= 2 |V|_2 |Sigma|_2``: Sinkhorn attention
cannot blow up in finite time.

Closed forms of the softmax covariance
--------------------------------------
With ``V = lambda I`` the covariance equation is
``d Sigma/dt = 2 lambda beta Sigma B_s Sigma`` (``B_s = (B + B^T)/2``), so ``P = Sigma^(-1)`` solves
``dP/dt = -2 lambda beta B_s``: ``Sigma(t) = (Sigma_0^(-1) - 2 lambda beta t B_s)^(-1)``
(:func:`isotropic_value_covariance`). It blows up at
``T* = 1 / (2 lambda beta mu_max)``, ``mu_max`` the largest eigenvalue of
``Sigma_0^(1/2) B_s Sigma_0^(1/2)`` when positive (:func:`blowup_time`), and ``Sigma / tr Sigma`` tends to
the rank-one matrix of its top eigenvector. With ``K = -Q`` (``B_s = -Q^T Q``) and ``lambda beta > 0``
instead ``Sigma(t) -> Sigma_0 - Sigma_0 Q^T (Q Sigma_0 Q^T)^(-1) Q Sigma_0`` (Woodbury), whose rank is
``d - rank Q`` (:func:`projected_limit`): the tokens collapse onto a subspace (a point when ``Q`` is
invertible). With also ``B = b I``, the mean is closed: in the eigenbasis of ``Sigma_0`` (eigenvalues
``s_k``) ``alpha_k(t) = alpha_k(0) e^(lambda t) / sqrt(1 - 2 lambda beta b s_k t)``
(:func:`scalar_flow`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.validation import InputError, check_option, check_real

__all__ = ["GaussianAttention", "MomentFlow", "NORMALISATIONS", "KERNELS", "affine_velocity", "moment_rhs",
           "moment_flow", "sinkhorn_cross_covariance", "isotropic_value_covariance", "blowup_time",
           "projected_limit", "scalar_flow", "psd_sqrt", "gaussian_velocity_quadrature", "velocity_loop",
           "printed_sinkhorn_rhs"]

#: the normalisations whose mean-field velocity is affine on Gaussians (the uniform (USA) and sigmoid weights are
#: not normalised: their velocity on a Gaussian is not affine and Gaussians do not stay Gaussian)
NORMALISATIONS = ("softmax", "sinkhorn")
KERNELS = ("dot", "l2")


def _stack(a, name: str, d: int, rows: bool = False):
    if a is None:
        return None
    a = np.asarray(a, dtype=float)
    if a.ndim == 2:
        a = a[None]
    if a.ndim != 3 or a.shape[-1] != d or (not rows and a.shape[-2] != d) or not np.all(np.isfinite(a)):
        raise InputError(f"{name} must be a finite ({'r' if rows else d}, {d}) matrix or a stack of them, got "
                         f"shape {np.shape(a)}")
    return a


@dataclasses.dataclass(frozen=True)
class GaussianAttention:
    """One attention variant: the parameters of :func:`spectral.attention_flow` (Euclidean geometry).

    Attributes
    ----------
    d : int
        Token dimension.
    beta : float
        Inverse temperature (scores ``beta <Q x, K y>`` or ``-beta |Q x - K y|^2``).
    normalisation : {"softmax", "sinkhorn"}
    kernel : {"dot", "l2"}
    query_key : ndarray of shape (H, d, d), optional
        ``B_h = Q_h^T K_h`` (dot products only).
    query, key : ndarray of shape (H, r, d), optional
        ``Q_h`` and ``K_h`` (both or neither).
    value : ndarray of shape (H, d, d), optional
        ``V_h`` (default the identity); heads add.
    """

    d: int
    beta: float = 1.0
    normalisation: str = "softmax"
    kernel: str = "dot"
    query_key: np.ndarray | None = None
    query: np.ndarray | None = None
    key: np.ndarray | None = None
    value: np.ndarray | None = None

    def __post_init__(self):
        check_option("normalisation", self.normalisation, NORMALISATIONS)
        check_option("kernel", self.kernel, KERNELS)
        check_real("beta", self.beta)
        d = int(self.d)
        object.__setattr__(self, "query_key", _stack(self.query_key, "query_key", d))
        object.__setattr__(self, "query", _stack(self.query, "query", d, rows=True))
        object.__setattr__(self, "key", _stack(self.key, "key", d, rows=True))
        object.__setattr__(self, "value", _stack(self.value, "value", d))
        if (self.query is None) != (self.key is None) or (self.query is not None and self.query_key is not None):
            raise InputError("give query_key, or query and key")
        if self.kernel == "l2" and self.query_key is not None:
            raise InputError("kernel='l2' needs query and key")

    @property
    def heads(self) -> int:
        counts = [a.shape[0] for a in (self.query_key, self.query, self.key, self.value) if a is not None]
        return max(counts, default=1)

    def head(self, h: int):
        """``(Q_h, K_h, B_h, V_h)`` of head ``h`` (identities where not given; ``B_h = Q_h^T K_h``)."""
        eye = np.eye(self.d)

        def pick(a):
            return None if a is None else a[h if a.shape[0] > 1 else 0]

        V = pick(self.value)
        V = eye if V is None else V
        if self.query_key is not None:
            B = pick(self.query_key)
            return None, None, B, V
        Q, K = pick(self.query), pick(self.key)
        Q = eye if Q is None else Q
        K = eye if K is None else K
        return Q, K, Q.T @ K, V

    def flow_kwargs(self) -> dict:
        """Keyword arguments of :func:`spectral.attention_flow` for this variant (``geometry="euclidean"``)."""
        out = {"beta": float(self.beta), "normalisation": self.normalisation, "kernel": self.kernel,
               "geometry": "euclidean"}
        for name in ("query_key", "query", "key", "value"):
            a = getattr(self, name)
            if a is not None:
                out[name] = a[0] if a.shape[0] == 1 else a
        return out


def psd_sqrt(S) -> np.ndarray:
    """The symmetric square root of a positive semi-definite matrix (negative rounding clipped to 0)."""
    S = np.asarray(S, dtype=float)
    w, U = np.linalg.eigh(0.5 * (S + S.T))
    return (U * np.sqrt(np.clip(w, 0.0, None))) @ U.T


def sinkhorn_cross_covariance(cov, interaction) -> np.ndarray:
    """``C = Cov_pi(x, y)`` of the Gaussian coupling ``pi ~ e^(x^T B' y)`` with both marginals ``N(., cov)``.

    ``interaction`` is ``B'`` (``beta B`` for dot products). Closed form of the module docstring: SVD of
    ``Sigma^(1/2) B' Sigma^(1/2)``, singular values mapped by ``g(s) = 2 s / (1 + sqrt(1 + 4 s^2))``.
    """
    R = psd_sqrt(cov)
    U, s, Wt = np.linalg.svd(R @ np.asarray(interaction, dtype=float) @ R)
    g = 2.0 * s / (1.0 + np.sqrt(1.0 + 4.0 * s * s))
    return R @ ((U * g) @ Wt) @ R


def printed_sinkhorn_rhs(cov, Q, K, V) -> np.ndarray:
    """The Sinkhorn covariance right-hand side in the closed form of the authors' code (epsilon = 1, ``A = K^T Q``).

    ``V A^(-T) Sigma^(-1) C_S Sigma + transpose`` with
    ``C_S = (Sigma^(1/2) (4 Sigma^(1/2) A^T Sigma A Sigma^(1/2) + I)^(1/2) Sigma^(-1/2) - I) / 2``: a second,
    independently derived form of the right-hand side of :func:`moment_rhs` (it needs ``A`` invertible).
    """
    from scipy.linalg import sqrtm

    d = cov.shape[0]
    A = K.T @ Q
    R = np.real(sqrtm(cov))
    prod = R @ A.T
    CS = 0.5 * (R @ np.real(sqrtm(4.0 * prod @ cov @ prod.T + np.eye(d))) @ np.linalg.inv(R) - np.eye(d))
    rhs = V @ np.linalg.inv(A.T) @ np.linalg.inv(cov) @ CS @ cov
    return rhs + rhs.T


def _head_terms(spec: GaussianAttention, h: int, mean, cov):
    """``(M_h, c_h, dcov_h)`` of head ``h``: its affine velocity (M None where it needs Sigma^-1) and covariance term."""
    Q, K, B, V = spec.head(h)
    d = spec.d
    if spec.normalisation == "sinkhorn":
        interaction = spec.beta * B if spec.kernel == "dot" else 2.0 * spec.beta * B
        C = sinkhorn_cross_covariance(cov, interaction)
        return None, C, V @ C.T + C @ V.T
    if spec.kernel == "dot":
        M = spec.beta * V @ cov @ B.T
        c = V @ mean
    else:
        G = np.linalg.inv(np.eye(d) + 2.0 * spec.beta * cov @ K.T @ K)
        M = 2.0 * spec.beta * V @ G @ cov @ K.T @ Q
        c = V @ G @ mean
    return M, c, M @ cov + cov @ M.T


def affine_velocity(spec: GaussianAttention, mean, cov) -> tuple[np.ndarray, np.ndarray]:
    """``(M, c)`` with ``Gamma_mu(x) = M x + c`` the mean-field velocity for ``mu = N(mean, cov)``.

    Sinkhorn attention needs ``cov`` invertible here (``M = V C^T Sigma^(-1)``); :func:`moment_rhs` does not.
    """
    mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
    M = np.zeros((spec.d, spec.d))
    c = np.zeros(spec.d)
    for h in range(spec.heads):
        Mh, ch, _ = _head_terms(spec, h, mean, cov)
        if Mh is None:  # Sinkhorn: c_h is the cross-covariance C
            _, _, _, V = spec.head(h)
            Mh = V @ np.linalg.solve(cov, ch).T  # V C^T Sigma^-1 (cov symmetric)
            ch = V @ mean - Mh @ mean
        M, c = M + Mh, c + ch
    return M, c


def moment_rhs(spec: GaussianAttention, mean, cov) -> tuple[np.ndarray, np.ndarray]:
    """``(d alpha/dt, d Sigma/dt)`` of the Gaussian solution at ``N(mean, cov)`` (module docstring)."""
    mean, cov = np.asarray(mean, dtype=float), np.asarray(cov, dtype=float)
    dmean = np.zeros(spec.d)
    dcov = np.zeros((spec.d, spec.d))
    for h in range(spec.heads):
        Mh, ch, dcov_h = _head_terms(spec, h, mean, cov)
        if Mh is None:
            _, _, _, V = spec.head(h)
            dmean = dmean + V @ mean  # E[E_pi(y | x)] = alpha
        else:
            dmean = dmean + Mh @ mean + ch
        dcov = dcov + dcov_h
    return dmean, dcov


@dataclasses.dataclass(frozen=True)
class MomentFlow:
    """The Gaussian solution's moments at the requested times.

    Attributes
    ----------
    times : ndarray of shape (m,)
    means : ndarray of shape (m, d)
    covs : ndarray of shape (m, d, d)
        NaN after a blow-up.
    blowup_time : float or None
        Where ``tr Sigma`` reached ``cap`` (a finite-time blow-up is within ``~ 1/cap`` of it), or None.
    """

    times: np.ndarray
    means: np.ndarray
    covs: np.ndarray
    blowup_time: float | None


def moment_flow(spec: GaussianAttention, mean0, cov0, times, *, rtol=1e-10, atol=1e-13, cap=1e8) -> MomentFlow:
    """Solve the moment ODE with ``solve_ivp`` (DOP853) from ``N(mean0, cov0)`` at ``t = 0``.

    The run stops when ``tr Sigma`` reaches ``cap`` (blow-up); later times are NaN. The covariance is
    integrated in full (``d^2`` entries) and symmetrised at the output.
    """
    from scipy.integrate import solve_ivp

    d = spec.d
    times = np.asarray(times, dtype=float)
    mean0 = np.asarray(mean0, dtype=float).reshape(d)
    cov0 = np.asarray(cov0, dtype=float).reshape(d, d)

    def rhs(_, y):
        dm, dS = moment_rhs(spec, y[:d], 0.5 * (y[d:].reshape(d, d) + y[d:].reshape(d, d).T))
        return np.concatenate([dm, dS.ravel()])

    def blowup(_, y):
        return float(np.trace(y[d:].reshape(d, d))) - cap

    blowup.terminal = True
    y0 = np.concatenate([mean0, cov0.ravel()])
    t_end = float(times[-1])
    means = np.full((times.size, d), np.nan)
    covs = np.full((times.size, d, d), np.nan)
    events = []
    if t_end == 0.0:
        means[:], covs[:] = mean0, cov0
    else:
        sol = solve_ivp(rhs, (0.0, t_end), y0, method="DOP853", rtol=rtol, atol=atol, dense_output=True,
                        events=blowup)
        if sol.status < 0:
            raise RuntimeError(f"moment_flow: solve_ivp failed: {sol.message}")
        events = sol.t_events[0]
        ok = times <= float(sol.t[-1])
        if ok.any():
            Y = sol.sol(times[ok])
            means[ok] = Y[:d].T
            covs[ok] = Y[d:].T.reshape(-1, d, d)
    covs = 0.5 * (covs + np.swapaxes(covs, -1, -2))
    return MomentFlow(times=times, means=means, covs=covs,
                      blowup_time=float(events[0]) if len(events) else None)


def isotropic_value_covariance(cov0, query_key, times, *, lam=1.0, beta=1.0) -> np.ndarray:
    """``Sigma(t) = (Sigma_0^(-1) - 2 lambda beta t B_s)^(-1)``: softmax, one head, ``V = lambda I`` (NaN past T*)."""
    cov0 = np.asarray(cov0, dtype=float)
    B = np.asarray(query_key, dtype=float)
    Bs = 0.5 * (B + B.T)
    P0 = np.linalg.inv(cov0)
    T = blowup_time(cov0, B, lam=lam, beta=beta)
    out = []
    for t in np.atleast_1d(np.asarray(times, dtype=float)):
        out.append(np.full_like(cov0, np.nan) if T is not None and t >= T else
                   np.linalg.inv(P0 - 2.0 * lam * beta * t * Bs))
    return np.asarray(out)


def blowup_time(cov0, query_key, *, lam=1.0, beta=1.0) -> float | None:
    """``T* = 1 / (2 lambda beta mu_max)`` (module docstring), or None when the covariance never blows up."""
    R = psd_sqrt(cov0)
    B = np.asarray(query_key, dtype=float)
    mu = np.linalg.eigvalsh(R @ (0.5 * (B + B.T)) @ R)
    rate = 2.0 * lam * beta * (mu[-1] if lam * beta > 0 else mu[0])
    scale = 2.0 * abs(lam * beta) * float(np.max(np.abs(mu)))  # a zero eigenvalue rounds to +-eps times this
    return 1.0 / rate if rate > 64 * np.finfo(float).eps * scale else None


def projected_limit(cov0, query) -> np.ndarray:
    """``lim Sigma(t) = Sigma_0 - Sigma_0 Q^T (Q Sigma_0 Q^T)^(-1) Q Sigma_0`` for ``K = -Q``, ``V = lambda I``."""
    S = np.asarray(cov0, dtype=float)
    Q = np.atleast_2d(np.asarray(query, dtype=float))
    return S - S @ Q.T @ np.linalg.solve(Q @ S @ Q.T, Q @ S)


def scalar_flow(mean0, cov0, times, *, b, lam=1.0, beta=1.0) -> tuple[np.ndarray, np.ndarray]:
    """Closed moments for softmax with ``B = b I`` and ``V = lambda I`` (module docstring); NaN past the blow-up."""
    s, U = np.linalg.eigh(np.asarray(cov0, dtype=float))
    a = U.T @ np.asarray(mean0, dtype=float)
    c = 2.0 * lam * beta * b
    means, covs = [], []
    for t in np.atleast_1d(np.asarray(times, dtype=float)):
        den = 1.0 - c * s * t
        if np.any(den <= 0):
            means.append(np.full(s.size, np.nan))
            covs.append(np.full((s.size, s.size), np.nan))
            continue
        means.append(U @ (a * math.exp(lam * t) / np.sqrt(den)))
        covs.append((U * (s / den)) @ U.T)
    return np.asarray(means), np.asarray(covs)


def gaussian_velocity_quadrature(spec: GaussianAttention, mean, cov, points, *, order=60) -> np.ndarray:
    """The mean-field velocity at ``points`` by Gauss-Hermite quadrature of its definition (softmax only, d <= 3).

    ``Gamma(x) = sum_h V_h int e^(s_h(x, y)) y dN(y) / int e^(s_h(x, y)) dN(y)`` on a tensor grid of
    ``order^d`` nodes: an independent check of the tilted-Gaussian algebra of :func:`affine_velocity`.
    """
    if spec.normalisation != "softmax":
        raise InputError("quadrature covers softmax attention (Sinkhorn's coupling is checked by its precision)")
    d = spec.d
    z, w = np.polynomial.hermite_e.hermegauss(order)  # weight e^(-z^2/2)
    grids = np.meshgrid(*([z] * d), indexing="ij")
    Z = np.stack([g.ravel() for g in grids], axis=1)
    Wt = np.prod(np.meshgrid(*([w] * d), indexing="ij"), axis=0).ravel()
    Y = np.asarray(mean, dtype=float) + Z @ np.linalg.cholesky(np.asarray(cov, dtype=float)).T
    out = np.zeros((len(points), d))
    for h in range(spec.heads):
        Q, K, B, V = spec.head(h)
        for i, x in enumerate(np.asarray(points, dtype=float)):
            if spec.kernel == "dot":
                s = spec.beta * (Y @ (B.T @ x))
            else:
                s = -spec.beta * np.sum((Q @ x - Y @ K.T) ** 2, axis=1)
            e = Wt * np.exp(s - s.max())
            out[i] += V @ (e @ Y / e.sum())
    return out


def velocity_loop(X, spec: GaussianAttention, *, sinkhorn_sweeps=5000) -> np.ndarray:
    """The particle velocity ``sum_h sum_j P_ij V_h x_j`` from the definitions, token pair by token pair.

    Softmax weights row by row; Sinkhorn by plain alternating row and column scaling of ``e^s``
    (``sinkhorn_sweeps`` sweeps). A reference for :func:`spectral.attention_velocity` on small inputs.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    out = np.zeros((n, d))
    for h in range(spec.heads):
        Q, K, B, V = spec.head(h)
        S = np.empty((n, n))
        for i in range(n):
            for j in range(n):
                if spec.kernel == "dot":
                    S[i, j] = spec.beta * float(X[i] @ B @ X[j])
                else:
                    diff = Q @ X[i] - K @ X[j]
                    S[i, j] = -spec.beta * float(diff @ diff)
        E = np.exp(S - S.max())
        if spec.normalisation == "softmax":
            P = E / E.sum(axis=1, keepdims=True)
        else:
            P = E.copy()
            for _ in range(sinkhorn_sweeps):
                P /= P.sum(axis=1, keepdims=True)
                P /= P.sum(axis=0, keepdims=True)
        for i in range(n):
            for j in range(n):
                out[i] += P[i, j] * (V @ X[j])
    return out
