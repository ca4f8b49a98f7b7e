"""V = I, Q^T K positive definite: rescaled tokens converge to the vertices of a convex polytope (SA-4).

SA-4 (Geshkovski, Letrouit, Polyanskiy & Rigollet, "The emergence of clusters in self-attention
dynamics", NeurIPS 2023, arXiv 2305.05465 v6: Theorem 3.1 and its full form in section 8). Tokens in
``R^d`` move by ``dx_i/dt = sum_j P_ij(t) V x_j`` (eq. (1.1)), ``P`` the row softmax of
``<Q x_i, K x_j>``, with no normalisation of the tokens; with ``V = I_d`` the rescaled tokens
``z_i(t) = e^(-t) x_i(t)`` solve ``dz_i/dt = sum_j P_ij (z_j - z_i)``, so their convex hull only
shrinks, and: the hull converges to a convex polytope ``K``; the set
``S = {x in K : |A x|^2 = max_j <A x, A v_j>}`` (``v_j`` the vertices of ``K``, ``A^T A = Q^T K``)
is finite with ``vertices(K) <= S <= boundary(K) u {0}``; every ``z_i(t)`` converges to a point of
``S``. For almost every start the limits are vertices ("the leaders"), far fewer than ``n``.

The check runs :func:`spectral.attention_flow` (``geometry="euclidean"``, ``V = I``, scores
``beta <x_i, B x_j>`` with ``B = I`` and a random positive definite ``B``) from Gaussian tokens in
``d = 2, 3`` up to ``t_max``, and asserts: ``z`` has converged (its change over the last unit of
time, which decays like ``e^(-t)``), every limit is in ``S`` (``max_j <x, B v_j> - <x, B x>`` is 0
on ``S`` and positive elsewhere in ``K``; vertices of the hull of the limits by
:func:`~manifolds.references.attention_flow.hull_vertices`), every limit is a vertex, and the hull
never grows (every ``z_i(t_(k+1))`` within rounding of the hull of ``z(t_k)``, by non-negative least
squares). An implementation that ignores ``B`` sends tokens to the vertices of the wrong quadratic
form and fails the first assertion.
"""

from __future__ import annotations

import dataclasses

import numpy as np

import spectral
from manifolds.references.attention_flow import hull_distance, hull_vertices
from spectral.floor.validation import ConvergenceError, child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.params import Int, Ints, Real
from verify.core.result import Recorder

__all__ = ["CHECK", "CALIBRATION", "Params", "Quantities", "run", "main"]

CHECK = Check("sa_polytope",
              host_only="n <= 256 tokens in d <= 8: a few small flows, convex hulls (qhull) and least squares on the "
                        "host")

#: the grid every tolerance was measured over
_OVER = {"dims": ((2, 3),), "seed": (0, 1, 2, 3, 4)}
CALIBRATION = Calibration(
    Tolerance("limit_gap", 1e-10, measured=9.1e-16, over=_OVER,
              valid={"t_max": (16.0, None)},
              why="max_j <x, B v_j> - <x, B x> at the limits (the means of the clusters at t_max), relative to max "
                  "|z|^2: zero on S, so rounding only; dynamics that ignore B give 1e-1"),
    Tolerance("convergence", 1e-5, measured=2.1e-6, over=_OVER,
              valid={"t_max": (16.0, None)},
              why="max_i |z_i(t_max) - z_i(t_max - 1)|: z_i approaches its limit like e^(-t) times the distance of the "
                  "token's last hop, at t_max = 16; a dynamics that does not converge moves O(1)"),
    Tolerance("hull_growth", 1e-9, measured=8.5e-12, over=_OVER,
              why="distance of z_i(t_(k+1)) from the hull of z(t_k): zero for the exact flow (z_i' is a convex "
                  "combination of z_j - z_i); the integration at rtol 1e-10"),
)


@CHECK.parameters
class Params:
    n: int = Int(24, "Tokens", low=2, high=256, unit="tokens")
    dims: tuple = Ints((2, 3), "Dimensions d of the token space R^d", low=1, high=8)
    draws: int = Int(3, "Gaussian starts per (d, B)", low=1, high=100)
    beta: float = Real(1.0, "Scale of the scores beta <x_i, B x_j> (B = Q^T K)", low=0.0, high=10.0, low_open=True)
    t_max: float = Real(16.0, "Final time; z converges like e^(-t)", low=4.0, high=40.0)
    tol: float = Real(1e-5, "Linking distance of the limit points (clusters of z at t_max)", low=1e-10, high=0.1)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """What sa_polytope measures; keyed by (d, B name, draw), B name "identity" or "spd"."""

    #: max_i |z_i(t_max) - z_i(t_max - 1)|
    convergence: dict[tuple[int, str, int], float]
    #: number of distinct limit points and of vertices of their hull
    limit_points: dict[tuple[int, str, int], int]
    vertices: dict[tuple[int, str, int], int]
    #: max over limit points of max_j <x, B v_j> - <x, B x>, relative to max |z|^2 (>= 0 on K, 0 on S)
    limit_gap: dict[tuple[int, str, int], float]
    #: max distance of z_i(t_(k+1)) from the hull of z(t_k), relative to max |z|
    hull_growth: dict[tuple[int, str, int], float]
    #: the limit points of the first draw of each d with B = I, for the figure
    limits: dict[int, np.ndarray]
    starts: dict[int, np.ndarray]


def _spd(rng, d):
    """A random positive definite Q^T K with eigenvalues from 0.1 to 10 (condition number 100)."""
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    q = q * np.sign(np.diag(r))
    return (q * np.geomspace(0.1, 10.0, d)) @ q.T


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Euclidean flows with V = I from Gaussian starts: convergence, limit set, vertices and nested hulls."""
    conv, npts, nvert, gap, growth = {}, {}, {}, {}, {}
    limits = {int(d): np.zeros((0, d)) for d in p.dims}
    starts = {int(d): np.zeros((0, d)) for d in p.dims}
    times = np.linspace(0.0, p.t_max, int(round(4 * p.t_max)) + 1)
    with ctx.timed("flows"):
        for d in p.dims:
            for name in ("identity", "spd"):
                for draw in range(p.draws):
                    rng = child_rng(p.seed, "polytope", d, name, draw)
                    X0 = rng.standard_normal((p.n, d))
                    B = np.eye(d) if name == "identity" else _spd(rng, d)
                    key = (int(d), name, draw)
                    try:
                        flow = spectral.attention_flow(X0, beta=p.beta, times=times, geometry="euclidean", query_key=B,
                                                       rtol=1e-10, atol=1e-12)
                    except ConvergenceError as exc:  # a wrong dynamics can overflow: NaN quantities (never pass)
                        ctx.note(f"d = {d}, B {name}, draw {draw}: {exc}")
                        conv[key] = gap[key] = growth[key] = float("nan")
                        npts[key], nvert[key] = p.n, 0
                        continue
                    Z = np.asarray(flow.tokens, dtype=float) * np.exp(-times)[:, None, None]
                    last = int(np.searchsorted(times, p.t_max - 1.0))
                    conv[key] = float(np.max(np.abs(Z[-1] - Z[last])))
                    cl = spectral.cluster_tokens(Z[-1], tol=p.tol)
                    pts = np.array([Z[-1][cl.labels == c].mean(axis=0) for c in range(int(cl.counts))])
                    vert = pts[hull_vertices(pts)]
                    scale = float(np.max(np.sum(Z[0] ** 2, axis=1)))
                    gap[key] = float(max(np.max(vert @ (B @ x)) - x @ (B @ x) for x in pts)) / scale
                    npts[key], nvert[key] = int(pts.shape[0]), int(vert.shape[0])
                    radius = float(np.sqrt(scale))
                    growth[key] = max(hull_distance(Z[k], z) for k in range(0, times.size - 1, 4)
                                      for z in Z[k + 1]) / radius
                    if name == "identity" and draw == 0:
                        limits[int(d)], starts[int(d)] = pts, Z[0]
    return Quantities(convergence=conv, limit_points=npts, vertices=nvert, limit_gap=gap, hull_growth=growth,
                      limits=limits, starts=starts)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """Convergence, limits in S, limits are vertices, nested hulls; the number of leaders."""
    rec.at_most("convergence", float(np.max(list(q.convergence.values()))), CALIBRATION.get("convergence", p),
                label="SA-4: the rescaled tokens have not converged")
    rec.at_most("limit_gap", float(np.max(list(q.limit_gap.values()))), CALIBRATION.get("limit_gap", p),
                label="SA-4: a limit point is not in S = {x in K: |Ax|^2 = max_j <Ax, Av_j>}")
    off = sum(q.limit_points[k] - q.vertices[k] for k in q.limit_points)
    rec.equal("limits_not_vertices", off, 0,
              why="for almost every start every token converges to a vertex of K (the leaders); Gaussian starts",
              label="SA-4: some tokens converge to points of K that are not vertices")
    rec.at_most("hull_growth", float(np.max(list(q.hull_growth.values()))), CALIBRATION.get("hull_growth", p),
                label="SA-4: the convex hull of the rescaled tokens grew")
    counts = list(q.limit_points.values())
    rec.info("leaders_min", min(counts))
    rec.info("leaders_max", max(counts))
    rec.info("tokens", p.n)
    return (f"with V = I and Q^T K positive definite (identity and random), the rescaled tokens e^(-t) x_i converge "
            f"to vertices of the limit polytope of their shrinking hull, which lie in S; {min(counts)} to "
            f"{max(counts)} leaders for n = {p.n} tokens")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
