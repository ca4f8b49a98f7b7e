r"""Independent references for the SA checks (self-attention as interacting particles on the sphere).

Written from the definitions of Geshkovski, Letrouit, Polyanskiy & Rigollet, "A mathematical
perspective on Transformers" (arXiv 2312.10794 v5, GLPR below) with NumPy, SciPy and the floor's
validators only; nothing here imports the numerics of :mod:`spectral`.

The Gram matrix closes
----------------------
Write ``G_ij = <x_i, x_j>`` (``G_ii = 1`` on the sphere) and ``a_ij = e^(beta G_ij) / Z_i`` with
``Z_i = sum_k e^(beta G_ik)`` (SA) or ``Z_i = n`` (USA). Then (SA) reads
``dx_i/dt = sum_k a_ik (x_k - G_ik x_i)`` and

.. math:: \dot G_{ij} = \langle \dot x_i, x_j\rangle + \langle x_i, \dot x_j\rangle
          = \sum_k a_{ik} (G_{kj} - G_{ik} G_{ij}) + \sum_k a_{jk} (G_{ki} - G_{jk} G_{ij}),

a closed ODE for ``G`` alone (:func:`gram_rhs`): the inner products of a trajectory are determined by
the inner products of its start, in any dimension.

The equiangular reduction
-------------------------
If ``G_ij = rho`` for all ``i != j``, every ``Z_i = e^beta + (n - 1) e^(beta rho)`` (SA) and in the
first sum the term ``k = i`` vanishes (``G_ij - G_ii G_ij = 0``), the term ``k = j`` gives
``a (1 - rho^2)`` and each of the ``n - 2`` others ``a (rho - rho^2)``, with ``a = e^(beta rho) / Z``:

.. math:: \sum_k a_{ik}(G_{kj} - G_{ik}G_{ij}) = \frac{e^{\beta\rho}}{Z}(1-\rho)\big(1 + \rho + (n-2)\rho\big)
          = \frac{e^{\beta\rho}}{Z}(1-\rho)(1+(n-1)\rho).

The second sum is the same, so the right-hand side is the same for every pair: the set of equiangular
Gram matrices is invariant and

.. math:: \dot\rho = \frac{2 e^{\beta\rho}(1-\rho)(1+(n-1)\rho)}{e^\beta + (n-1)e^{\beta\rho}} \quad\text{(SA)},
          \qquad \dot\rho = \frac{2}{n} e^{\beta\rho}(1-\rho)(1+(n-1)\rho) \quad\text{(USA)}

(:func:`equiangular_rhs`; GLPR Theorem 6.8, eqs. (ybeta) for ``rho(0) = 0``). Near ``rho = 1`` the SA
right-hand side is ``2 (1 - rho)`` and the USA one ``2 e^beta (1 - rho)``: ``1 - rho ~ e^(-2t)`` and
``e^(-2 e^beta t)``. At ``beta = 0`` both are ``(2/n)(1 - rho)(1 + (n-1) rho)``, whose solution is
closed: ``(1 + (n-1) rho) / (1 - rho) = K e^(2t)``, i.e.
``rho(t) = (K e^(2t) - 1) / (K e^(2t) + n - 1)`` with ``K = (1 + (n-1) rho_0) / (1 - rho_0)``
(:func:`equiangular_beta0`). ``tests/manifolds/test_references_attention_flow.py`` derives both
right-hand sides again with sympy from the particle equations.

Two point clusters
------------------
``k`` tokens at ``u`` and ``m`` at ``v`` (``<u, v> = rho``) stay two points, and (SA) gives
``du/dt = m e^(beta rho) (v - rho u) / (k e^beta + m e^(beta rho))``, so

.. math:: \dot\rho = (1-\rho^2)\, e^{\beta\rho}\Big(\frac{m}{k e^\beta + m e^{\beta\rho}}
          + \frac{k}{m e^\beta + k e^{\beta\rho}}\Big) \quad\text{(SA)}, \qquad
          \dot\rho = (1-\rho^2)\, e^{\beta\rho} \quad\text{(USA)}

(:func:`two_cluster_rhs`): the time to merge from ``rho_0`` grows like ``e^(beta (1 - rho_0))`` for SA
(metastability, GLPR Problem 1) and shrinks like ``e^(-beta rho_0)`` for USA.
"""

from __future__ import annotations

import math

import numpy as np

from spectral.floor.validation import InputError, check_int, check_option, check_real, child_rng

__all__ = ["NORMALISATIONS", "velocity_loop", "gram_rhs", "gram_flow", "equiangular_rhs", "equiangular_flow",
           "equiangular_beta0", "equiangular_tokens", "two_cluster_rhs", "two_cluster_flow", "two_cluster_merge_time",
           "wendel_probability", "in_open_hemisphere", "hull_distance", "hull_vertices", "polytope_limit_set",
           "uniform_sphere", "pair_inner_products"]

NORMALISATIONS = ("softmax", "uniform")


def _tokens(X, name="X") -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise InputError(f"{name} must be an (n, d) array of tokens, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise InputError(f"{name} must be finite")
    return X


def uniform_sphere(rng, shape, d) -> np.ndarray:
    """Independent uniform points of ``S^(d-1)``, shape ``(*shape, d)``: normalised standard Gaussians."""
    d = check_int("d", d, low=1)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    x = rng.standard_normal(shape + (d,))
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def pair_inner_products(X) -> np.ndarray:
    """``<x_i, x_j>`` for ``i < j`` of every configuration: shape ``(..., n (n - 1) / 2)``."""
    X = np.asarray(X, dtype=float)
    n = X.shape[-2]
    i, j = np.triu_indices(n, 1)
    return np.einsum("...k,...k->...", X[..., i, :], X[..., j, :])


def velocity_loop(X, *, beta, normalisation="softmax", value=None, query_key=None, sphere=True) -> np.ndarray:
    """The velocity of (SA)/(USA) token by token, pair by pair (GLPR eq. (SA); small n only).

    ``v_i = P_perp(x_i) (sum_j w_ij V x_j)`` with ``w_ij = e^(beta <x_i, B x_j>) / Z_i``; no
    projection when ``sphere`` is False.
    """
    X = _tokens(X)
    beta = check_real("beta", beta)
    check_option("normalisation", normalisation, NORMALISATIONS)
    n, d = X.shape
    V = np.eye(d) if value is None else np.asarray(value, dtype=float)
    B = np.eye(d) if query_key is None else np.asarray(query_key, dtype=float)
    out = np.zeros_like(X)
    for i in range(n):
        scores = [beta * float(X[i] @ (B @ X[j])) for j in range(n)]
        top = max(scores)
        if normalisation == "softmax":
            weights = [math.exp(s - top) for s in scores]
            z = sum(weights)
        else:
            weights = [math.exp(s) for s in scores]
            z = float(n)
        a = np.zeros(d)
        for j in range(n):
            a += (weights[j] / z) * (V @ X[j])
        if sphere:
            a = a - float(X[i] @ a) * X[i]
        out[i] = a
    return out


def _weights(G, beta, normalisation):
    E = np.exp(beta * (G - G.max(axis=1, keepdims=True))) if normalisation == "softmax" else np.exp(beta * G)
    return E / (E.sum(axis=1, keepdims=True) if normalisation == "softmax" else G.shape[0])


def gram_rhs(G, *, beta, normalisation="softmax") -> np.ndarray:
    """``dG/dt`` of the closed Gram ODE (module docstring): ``(a G)_ij - (a∘G 1)_i G_ij`` plus its transpose."""
    G = np.asarray(G, dtype=float)
    a = _weights(G, beta, normalisation)
    half = a @ G - (a * G).sum(axis=1, keepdims=True) * G
    return half + half.T


def _solve(rhs, y0, times, rtol, atol):
    """The solution at ``times`` by DOP853, stepping onto every output time (no dense output).

    The error control of ``solve_ivp`` bounds the local error of its steps, not of its interpolant:
    read off the dense output (``t_eval``), the Gram ODE of 4 tokens at USA beta = 4 was 2e-8 off at
    rtol 1e-12 (6e-8 with AVX2 kernels, whose steps differ), while every step agreed with the simulator
    to 2e-13. Each output time is therefore the end of an integration (the next one starts from it with
    the last step size), so the global error is that of the steps, on every CPU class.
    """
    from scipy.integrate import solve_ivp

    times = np.asarray(times, dtype=float)
    if times.ndim != 1 or times.size == 0 or np.any(np.diff(times) <= 0) or times[0] < 0:
        raise InputError("times must be a 1-d strictly increasing sequence of times >= 0")
    y = np.asarray(y0, dtype=float)
    out, t, step = [], 0.0, None
    for target in times:
        if target > t:
            sol = solve_ivp(rhs, (t, float(target)), y, method="DOP853", rtol=rtol, atol=atol,
                            first_step=None if step is None else min(step, float(target) - t))
            if not sol.success:  # pragma: no cover - smooth right-hand sides
                raise RuntimeError(f"solve_ivp failed: {sol.message}")
            y, t = sol.y[:, -1], float(target)
            if sol.t.size >= 3:  # the last full step (the final one is cut at the output time)
                step = float(sol.t[-2] - sol.t[-3])
        out.append(y)
    return np.array(out)


def gram_flow(G0, times, *, beta, normalisation="softmax", rtol=1e-12, atol=1e-14) -> np.ndarray:
    """The Gram matrices ``G(t)`` at ``times`` (shape ``(m, n, n)``), solved by ``solve_ivp`` (DOP853)."""
    G0 = np.asarray(G0, dtype=float)
    n = G0.shape[0]
    check_option("normalisation", normalisation, NORMALISATIONS)
    ys = _solve(lambda t, g: gram_rhs(g.reshape(n, n), beta=beta, normalisation=normalisation).ravel(),
                G0.ravel(), times, rtol, atol)
    return ys.reshape(-1, n, n)


def equiangular_rhs(rho, *, beta, n, normalisation="softmax"):
    """``d rho / dt`` of the equiangular reduction (module docstring; GLPR Theorem 6.8)."""
    if normalisation == "softmax":
        # e^(beta rho) / (e^beta + (n-1) e^(beta rho)) = 1 / (e^(beta (1 - rho)) + n - 1): no overflow
        return 2.0 * (1.0 - rho) * (1.0 + (n - 1) * rho) / (np.exp(beta * (1.0 - rho)) + (n - 1))
    return (2.0 / n) * np.exp(beta * rho) * (1.0 - rho) * (1.0 + (n - 1) * rho)


def equiangular_flow(times, *, beta, n, rho0=0.0, normalisation="softmax", rtol=1e-12, atol=1e-14) -> np.ndarray:
    """``rho(t)`` of the equiangular ODE at ``times``, by ``solve_ivp`` (DOP853) at ``rtol`` (default 1e-12).

    At ``beta = 0`` prefer :func:`equiangular_beta0` (closed form).
    """
    n = check_int("n", n, low=2)
    beta = check_real("beta", beta)
    rho0 = check_real("rho0", rho0, low=-1.0 / (n - 1), high=1.0)
    check_option("normalisation", normalisation, NORMALISATIONS)
    return _solve(lambda t, r: equiangular_rhs(r, beta=beta, n=n, normalisation=normalisation), [rho0], times,
                  rtol, atol)[:, 0]


def equiangular_beta0(times, *, n, rho0=0.0) -> np.ndarray:
    """The closed form at ``beta = 0``: ``rho(t) = (K e^(2t) - 1) / (K e^(2t) + n - 1)``.

    ``K = (1 + (n-1) rho0) / (1 - rho0)`` (module docstring).
    """
    n = check_int("n", n, low=2)
    rho0 = check_real("rho0", rho0, low=-1.0 / (n - 1), high=1.0, high_open=True)
    t = np.asarray(times, dtype=float)
    K = (1.0 + (n - 1) * rho0) / (1.0 - rho0)
    e = K * np.exp(2.0 * t)
    return (e - 1.0) / (e + n - 1.0)


def equiangular_tokens(n, rho, *, d=None, seed=None) -> np.ndarray:
    """``n`` unit vectors with all pairwise inner products ``rho`` (``-1/(n-1) <= rho < 1``), in ``d >= n + 1``.

    ``x_i = alpha (e_i - c) + gamma e_0`` with ``c = (1/n) sum_j e_j``, ``alpha^2 = 1 - rho`` and
    ``gamma^2 = (1 + (n-1) rho) / n``: ``|x_i|^2 = alpha^2 (1 - 1/n) + gamma^2 = 1`` and
    ``<x_i, x_j> = -alpha^2 / n + gamma^2 = rho``. For ``rho >= 0`` this is a rotation of
    ``sqrt(rho) e_0 + sqrt(1 - rho) e_i``. With ``seed``, a seeded random rotation is applied.
    """
    n = check_int("n", n, low=2)
    rho = check_real("rho", rho, low=-1.0 / (n - 1), high=1.0, high_open=True)
    d = n + 1 if d is None else check_int("d", d, low=n + 1)
    alpha = math.sqrt(1.0 - rho)
    gamma = math.sqrt(max(1.0 + (n - 1) * rho, 0.0) / n)
    X = np.zeros((n, d))
    X[:, 1:n + 1] = alpha * (np.eye(n) - 1.0 / n)
    X[:, 0] = gamma
    if seed is not None:
        q, r = np.linalg.qr(child_rng(seed, "equiangular-rotation").standard_normal((d, d)))
        X = X @ (q * np.sign(np.diag(r))).T
    return X


def two_cluster_rhs(rho, *, beta, k, m, normalisation="softmax"):
    """``d rho / dt`` for two point clusters of ``k`` and ``m`` tokens at inner product ``rho`` (module docstring)."""
    if normalisation == "uniform":
        return (1.0 - rho * rho) * np.exp(beta * rho)  # (m + k) / n = 1
    # m e^(b r)/(k e^b + m e^(b r)) = m / (k e^(b (1 - r)) + m)
    g = np.exp(beta * (1.0 - rho))
    return (1.0 - rho * rho) * (m / (k * g + m) + k / (m * g + k))


def two_cluster_flow(times, *, rho0, beta, k, m, normalisation="softmax", rtol=1e-12, atol=1e-14) -> np.ndarray:
    """``rho(t)`` of two point clusters at ``times`` (measured from the start), by ``solve_ivp`` (DOP853)."""
    check_option("normalisation", normalisation, NORMALISATIONS)
    rho0 = check_real("rho0", rho0, low=-1.0, high=1.0)
    return _solve(lambda t, r: two_cluster_rhs(r, beta=beta, k=k, m=m, normalisation=normalisation), [rho0], times,
                  rtol, atol)[:, 0]


def two_cluster_merge_time(rho0, rho1, *, beta, k, m, normalisation="softmax") -> float:
    """Time for two point clusters to go from inner product ``rho0`` to ``rho1``: ``int drho / rhs`` (quadrature)."""
    from scipy.integrate import quad

    rho0 = check_real("rho0", rho0, low=-1.0, high=1.0, low_open=True, high_open=True)
    rho1 = check_real("rho1", rho1, low=rho0, high=1.0, high_open=True)
    val, _ = quad(lambda r: 1.0 / two_cluster_rhs(r, beta=beta, k=k, m=m, normalisation=normalisation),
                  rho0, rho1, epsabs=0.0, epsrel=1e-12, limit=200)
    return float(val)


def wendel_probability(n, d) -> float:
    """Probability that ``n`` i.i.d. uniform points of ``S^(d-1)`` lie in an open hemisphere (Wendel 1962).

    ``2^-(n-1) sum_{k=0}^{d-1} C(n-1, k)``: 1 when ``d >= n`` (GLPR section 6.1, Theorem 6.3's hypothesis).
    """
    n = check_int("n", n, low=1)
    d = check_int("d", d, low=1)
    return math.fsum(math.comb(n - 1, k) for k in range(min(d, n))) / 2.0 ** (n - 1)


def in_open_hemisphere(X, *, tol=1e-9) -> tuple[bool, float]:
    """Whether the rows of ``X`` lie in one open hemisphere, by Gordan's alternative.

    Either some ``w`` has ``<x_i, w> > 0`` for every ``i``, or the origin is a convex combination of the
    ``x_i`` (never both). The distance from the origin to the convex hull is computed by non-negative
    least squares, ``min |X^T lam|`` over ``lam >= 0`` with ``sum lam = 1`` enforced by a weighted row
    (Lawson & Hanson's device); the rows lie in an open hemisphere iff the distance exceeds ``tol``.
    Returns ``(inside, distance)``.
    """
    from scipy.optimize import nnls

    X = _tokens(X)
    n, d = X.shape
    weight = 1e4
    A = np.vstack([X.T, weight * np.ones((1, n))])
    b = np.zeros(d + 1)
    b[-1] = weight
    lam, _ = nnls(A, b)
    lam = lam / lam.sum()
    distance = float(np.linalg.norm(X.T @ lam))
    return distance > tol, distance


def hull_distance(points, x) -> float:
    """Distance from ``x`` to the convex hull of the rows of ``points``: ``min |P^T lam - x|`` over the simplex.

    Non-negative least squares with ``sum lam = 1`` enforced by a weighted row (as :func:`in_open_hemisphere`).
    """
    from scipy.optimize import nnls

    P = _tokens(points, "points")
    x = np.asarray(x, dtype=float)
    weight = 1e4 * max(1.0, float(np.max(np.abs(P))))
    A = np.vstack([P.T, weight * np.ones((1, P.shape[0]))])
    b = np.concatenate([x, [weight]])
    lam, _ = nnls(A, b)
    lam = lam / lam.sum()
    return float(np.linalg.norm(P.T @ lam - x))


def hull_vertices(P, *, tol=1e-9) -> np.ndarray:
    """Indices of the vertices of the convex hull of the rows of ``P``, in its affine hull (any rank).

    The points are centred and projected on their principal directions with singular values above
    ``tol`` times the largest (qhull needs full-dimensional input): rank 0 is one point, rank 1 the two
    extremes of a segment, higher ranks ``scipy.spatial.ConvexHull`` of the projection.
    """
    from scipy.spatial import ConvexHull

    P = _tokens(P, "P")
    centred = P - P.mean(axis=0)
    _, s, vt = np.linalg.svd(centred, full_matrices=False)
    rank = int(np.sum(s > tol * max(s[0], 1e-300))) if s.size else 0
    if rank == 0:
        return np.array([0])
    coords = centred @ vt[:rank].T
    if rank == 1:
        return np.unique([int(np.argmin(coords[:, 0])), int(np.argmax(coords[:, 0]))])
    return np.sort(ConvexHull(coords).vertices)


def polytope_limit_set(points, *, query_key=None, tol=1e-9) -> dict:
    """The vertices of the convex hull of ``points`` and the candidate limit set of the clustering paper.

    The theorem of section 8 of arXiv 2305.05465 (``V = I``, ``Q^T K = A^T A`` positive definite): every rescaled
    token converges to a point ``x`` of ``S = {x in K : |A x|^2 = max_j <A x, A v_j>}`` (``v_j`` the
    vertices of the limit polytope ``K``). Returns ``{"vertices": (m, d), "gap": function x -> max_j
    <Ax, Av_j> - |Ax|^2}``; ``gap(x) = 0`` exactly on ``S`` and is ``>= 0`` on ``K``.
    """
    P = _tokens(points, "points")
    d = P.shape[1]
    B = np.eye(d) if query_key is None else np.asarray(query_key, dtype=float)
    vertices = P[hull_vertices(P, tol=tol)]

    def gap(x):
        x = np.asarray(x, dtype=float)
        return float(np.max(vertices @ (B @ x)) - x @ (B @ x))

    return {"vertices": vertices, "gap": gap}
