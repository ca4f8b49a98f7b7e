"""Nearest points under a bilinear pseudo-metric on the sphere (DRIFT Example 3, Theorems 5/6).

Example 3: with ``f(x, y) = -x^T M y`` on the unit sphere (``M = Q^T K``; symmetric case
``-M = P^T diag(a) P``) the minimiser over ``|y| = 1`` is ``y* = M^T x / |M^T x|``, i.e.
``-P^T (a * x') / |a * x'|``. The printed formula ``+P^T (a * x') / |a * x'|`` is the *maximiser*
(the Lagrange condition has two roots); for ``Q = K = I`` it returns ``-x``. Checked against brute
force over random sphere points refined by projected gradient descent.
Theorems 5/6 (zeroth order): ``S_eps H(x) -> H(y*)`` as ``eps -> 0`` with error O(eps) (attention
``S_eps`` with scores ``exp(-f/(2 eps))`` over a Fibonacci lattice on S^2 with density weights ``p``);
for ``f = (y_3 - x_3)^2`` the nearest set is a latitude circle and the limit is the ``p``-weighted
circle average of ``H``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from spectral.floor.backend import to_numpy
from spectral.floor.validation import child_rng
from verify.core.calibration import Calibration, Tolerance
from verify.core.check import Check, Context
from verify.core.fits import fit_power_law
from verify.core.memory import PathNeed
from verify.core.params import Int, Reals
from verify.core.reduce import worst
from verify.core.result import Recorder
from verify.rates import record_rate

__all__ = ["CALIBRATION", "CHECK", "main", "run"]

CHECK = Check("nearest_point", devices=("cpu", "gpu"),
              printed="the Example-3 formula +P^T (a x') / |a x'| (the argmax) and the zeroth-order limit at that "
                      "point, which fail")

_SEEDS = {"seed": tuple(range(30))}
_EXAMPLE3 = ("projected gradient converges geometrically from the best candidate; the wrong root (the argmax) is at "
             "distance 2")
_SLOPE = ("DRIFT-12: slope 1 +- 0.15 over eps in [0.002, 0.032] at n_lattice = 5e4 (lattice spacing 0.016 < kernel "
          "width sqrt(2 eps/|M^T x|)): the sampling spread of the points' slope (the circle's is deterministic); the "
          "wrong root gives O(1) errors that do not decrease")
_FLOOR = ("a constant offset has slope 0 but must not pass: the error at eps = 0.002; the wrong root leaves O(1) "
          "errors")

#: The measured tolerances (at the defaults, over _SEEDS).
CALIBRATION = Calibration(
    Tolerance("example3_symmetric", 1e-8, measured=6.3e-11, over=_SEEDS, why=_EXAMPLE3),
    Tolerance("example3_general", 1e-8, measured=6.0e-11, over=_SEEDS, why=_EXAMPLE3),
    Tolerance("example3_identity_case", 1e-8, measured=5.1e-11, over=_SEEDS, why=_EXAMPLE3),
    Tolerance("point_limit_slope", 0.15, measured=0.12, over=_SEEDS, why=_SLOPE),
    Tolerance("circle_limit_slope", 0.15, measured=0.066, over=_SEEDS, why=_SLOPE),
    Tolerance("point_limit_min_error", 0.05, measured=0.0153, over=_SEEDS, why=_FLOOR),
    Tolerance("circle_limit_min_error", 0.05, measured=0.0015, over=_SEEDS, why=_FLOOR),
)


def _fibonacci(n):
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    r = np.sqrt(1.0 - z * z)
    phi = math.pi * (3.0 - math.sqrt(5.0)) * i
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _brute_force_min(b, cand, *, steps=200):
    """argmin over the unit sphere of ``b . y``: best candidate, then projected gradient descent."""
    y = cand[np.argmin(cand @ b)].copy()
    lr = 0.1 / max(np.linalg.norm(b), 1e-300)
    for _ in range(steps):
        y = y - lr * b
        y /= np.linalg.norm(y)
    return y


def _unit(v):
    return v / np.linalg.norm(v)


def _H(y):
    return np.sin(2 * y[..., 0]) + y[..., 1] * y[..., 2] + 0.5 * y[..., 2]


def _p(y):
    return np.exp(0.8 * y[..., 0] - 0.4 * y[..., 2])  # unnormalised density on S^2 (ratios only)


def _example3(claim, dim, trials, candidates, seed):
    """Largest distances between the brute-force minimiser and the asserted formula (host)."""
    cand = child_rng(seed, "candidates").standard_normal((candidates, dim))
    cand /= np.linalg.norm(cand, axis=1, keepdims=True)
    err_general = err_sym = printed_is_argmax = 0.0
    for t in range(trials):
        rng = child_rng(seed, "example3", t)  # one stream per trial
        x = _unit(rng.standard_normal(dim))
        if t % 2 == 0:  # symmetric -M = P^T diag(a) P, P in SO(dim)
            a = rng.standard_normal(dim)
            p_mat, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
            if np.linalg.det(p_mat) < 0:
                p_mat[0] *= -1
            m = -(p_mat.T * a) @ p_mat
            printed = p_mat.T @ _unit(a * (p_mat @ x))
        else:  # general M = Q^T K: no printed formula, compared with M^T x / |M^T x|
            m = rng.standard_normal((dim, dim))
            printed = None
        y_bf = _brute_force_min(-(m.T @ x), cand)  # f(x, y) = -x^T M y = b . y
        y_formula = _unit(m.T @ x)
        if printed is not None:
            if claim == "printed":
                y_formula = printed
            err_sym = worst(err_sym, float(np.linalg.norm(y_bf - y_formula)))
            # the printed formula is the argmax of the linear function, i.e. -y_bf
            printed_is_argmax = worst(printed_is_argmax, float(np.linalg.norm(printed + y_bf)))
        else:
            err_general = worst(err_general, float(np.linalg.norm(y_bf - y_formula)))
    # sanity case Q = K = I: M = I, the minimiser is x itself (the printed formula, a = -1, P = I, gives -x)
    x = _unit(child_rng(seed, "identity").standard_normal(dim))
    y_id = _brute_force_min(-x, cand)
    sanity = float(np.linalg.norm(y_id - (x if claim == "corrected" else -x)))
    return err_sym, err_general, sanity, printed_is_argmax


def _limit_errors(xp, claim, n_lattice, eps_grid, seed):
    """RMS errors of S_eps H against H(y*) (points) and the p-weighted circle average (latitudes)."""
    y = _fibonacci(n_lattice)
    rng = child_rng(seed, "limit")
    xt = rng.standard_normal((12, 3))
    xt /= np.linalg.norm(xt, axis=1, keepdims=True)
    m3 = np.eye(3) + 0.5 * rng.standard_normal((3, 3))
    ystar = xt @ m3
    ystar /= np.linalg.norm(ystar, axis=1, keepdims=True)
    if claim == "printed":
        ystar = -ystar  # the printed root (argmax)
    target = _H(ystar)
    yx, pwx, hx = xp.asarray(y), xp.asarray(_p(y)), xp.asarray(_H(y))
    fvals = -(xp.asarray(xt @ m3) @ yx.T)  # f(x, y) = -x^T M y, shape (n_test, n)
    fvals = fvals - xp.min(fvals, axis=1, keepdims=True)
    # degenerate nearest set: f = (y_3 - x_3)^2, A_x = latitude circle z = x_3
    zt = np.array([-0.6, -0.2, 0.3, 0.7])
    fdeg = (yx[:, 2][None, :] - xp.asarray(zt)[:, None]) ** 2
    phi = 2 * math.pi * np.arange(4096) / 4096  # trapezoid on a periodic analytic integrand
    circle_ref = []
    for z in zt:
        r = math.sqrt(1 - z * z)
        pts = np.stack([r * np.cos(phi), r * np.sin(phi), np.full_like(phi, z)], axis=1)
        circle_ref.append(float(np.sum(_p(pts) * _H(pts)) / np.sum(_p(pts))))
    circle_ref = np.array(circle_ref)
    err_pt, err_deg = [], []
    for eps in eps_grid:
        w = xp.exp(-fvals / (2 * eps)) * pwx[None, :]
        est = to_numpy(xp.sum(w * hx[None, :], axis=1) / xp.sum(w, axis=1))
        err_pt.append(float(np.sqrt(np.mean((est - target) ** 2))))
        wd = xp.exp(-fdeg / (2 * eps)) * pwx[None, :]
        estd = to_numpy(xp.sum(wd * hx[None, :], axis=1) / xp.sum(wd, axis=1))
        err_deg.append(float(np.sqrt(np.mean((estd - circle_ref) ** 2))))
    return err_pt, err_deg


@CHECK.parameters
class Params:
    dim: int = Int(3, "Ambient dimension of the sphere for the Example-3 brute force", low=2, high=16)
    trials: int = Int(20, "Random (M, x) pairs in the Example-3 test; even trials draw a symmetric -M = P^T diag(a) P, "
                          "odd ones a general M", low=2, high=1000)
    candidates: int = Int(200000, "Random sphere points of the brute-force search before refinement", low=1000,
                          high=5000000, unit="points")
    n_lattice: int = Int(50000, "Fibonacci-lattice points on S^2 for the Theorem-5/6 limit (DRIFT-12)", low=1000,
                         high=1000000, unit="points")
    eps_grid: tuple = Reals((0.002, 0.004, 0.008, 0.016, 0.032), "eps values of S_eps (scores exp(-f/(2 eps)), DRIFT "
                            "Appendix C)", low=1e-4, high=0.5, min_len=4)


@dataclasses.dataclass(frozen=True)
class Quantities:
    """Example 3 by brute force and the zeroth-order limit, against the point p.claim asserts."""

    #: largest |brute-force minimiser - formula| over the symmetric trials, the general ones, and for Q = K = I
    example3_symmetric: float
    example3_general: float
    example3_identity_case: float
    #: largest |printed formula + brute-force minimiser| (0 when the printed formula is the argmax)
    printed_minus_argmax: float
    #: RMS of S_eps H against H(y*) (points) and the p-weighted circle average (latitudes), per eps
    point_error: np.ndarray
    circle_error: np.ndarray
    point_limit_slope: float  # fitted exponents in eps
    circle_limit_slope: float


@CHECK.memory
def needs(p) -> dict:
    """Example 3 holds the candidates and their projections, the limit part the test points x lattice scores."""
    # tracemalloc: 272 bytes per candidate at dim 16, about 17 dim; 489 bytes per lattice point at the defaults;
    # the parts run one after the other. 20 dim and 600 bytes leave a margin.
    dim, n_lattice = p.dim, p.n_lattice
    return {"dense": PathNeed(lambda c: (16 << 20) + max(20 * dim * c, 600 * n_lattice), p.candidates,
                              option="--candidates", low=1000,
                              what=f"the Example-3 candidates and the lattice scores at --candidates {p.candidates}, "
                                   f"--n-lattice {n_lattice}", other="a smaller --n-lattice or --dim")}


@CHECK.measurement
def measure(p: Params, ctx: Context) -> Quantities:
    """Brute-force minimisers on the host; the S_eps sums over the lattice in ctx.xp."""
    with ctx.timed("example3"):
        err_sym, err_general, sanity, printed_is_argmax = _example3(p.claim, p.dim, p.trials, p.candidates, p.seed)
    with ctx.timed("limit"):
        err_pt, err_deg = _limit_errors(ctx.xp, p.claim, p.n_lattice, p.eps_grid, p.seed)
    return Quantities(example3_symmetric=err_sym, example3_general=err_general, example3_identity_case=sanity,
                      printed_minus_argmax=printed_is_argmax, point_error=np.asarray(err_pt),
                      circle_error=np.asarray(err_deg), point_limit_slope=fit_power_law(p.eps_grid, err_pt).slope,
                      circle_limit_slope=fit_power_law(p.eps_grid, err_deg).slope)


@CHECK.assertions
def assess(q: Quantities, p: Params, rec: Recorder) -> str:
    """DRIFT-11: the minimiser; DRIFT-12: first-order decay of the zeroth-order limit, reached at the smallest eps."""
    rec.at_most("example3_symmetric", q.example3_symmetric, CALIBRATION.get("example3_symmetric", p),
                label=f"symmetric -M = P^T diag(a) P: |brute-force minimiser - {p.claim} formula|")
    rec.at_most("example3_general", q.example3_general, CALIBRATION.get("example3_general", p),
                label="general M: |brute-force minimiser - M^T x/|M^T x||")
    rec.at_most("example3_identity_case", q.example3_identity_case, CALIBRATION.get("example3_identity_case", p),
                label="Q = K = I: distance of the brute-force minimiser from "
                      + ("x" if p.claim == "corrected" else "-x (the printed formula)"))
    rec.info("printed_minus_argmax", q.printed_minus_argmax)

    # Regime (measured with the correct root): lattice spacing sqrt(4 pi / n) > sqrt(2 eps_min) leaves a
    # sampling floor (eps_min = 1e-4 fails from spacing / sqrt(2 eps_min) = 1.45 on); eps above 0.032 bends
    # the slope by O(eps^2) terms (circle slope 0.76 over eps 0.008-0.064). Failures there say so.
    spacing, width = math.sqrt(4 * math.pi / p.n_lattice), math.sqrt(2 * min(p.eps_grid))
    regime = []
    if spacing > width:
        regime.append(f"lattice spacing {spacing:.3g} > kernel width sqrt(2 eps_min) = {width:.3g}: raise n_lattice "
                      f"or the smallest eps")
    if max(p.eps_grid) > 0.032:
        regime.append(f"largest eps {max(p.eps_grid):g} > 0.032, where O(eps^2) terms bend the slope: lower it")
    hint = "; ".join(regime) if p.claim == "corrected" else ""
    for name, slope, errors, what in (
            ("point_limit_slope", q.point_limit_slope, q.point_error, "S_eps H(x) -> H(y*)"),
            ("circle_limit_slope", q.circle_limit_slope, q.circle_error, "S_eps H(x) -> p-weighted circle average")):
        record_rate(rec, name, slope, 1.0, atol=CALIBRATION.get(name, p), x=p.eps_grid, errors=errors,
                    asymptote="small", label=f"{what}: error not ~ eps^1 (zeroth order)", hint=hint)
    rec.at_most("point_limit_min_error", float(np.min(q.point_error)), CALIBRATION.get("point_limit_min_error", p),
                label="zeroth-order limit H(y*) not reached at the smallest eps", hint=hint)
    rec.at_most("circle_limit_min_error", float(np.min(q.circle_error)), CALIBRATION.get("circle_limit_min_error", p),
                label="zeroth-order limit (circle average) not reached at the smallest eps", hint=hint)
    if p.claim == "corrected":
        return ("the minimiser of -x^T M y over the unit sphere is M^T x/|M^T x| (the printed Example-3 formula is "
                "the argmax), and S_eps H(x) -> H(y*) (p-weighted average over a nearest circle) with error O(eps)")
    return ("the printed Example-3 formula +P^T (a x')/|a x'| is the minimiser of -x^T M y over the unit sphere and "
            "S_eps H(x) tends to H at that point")


run = CHECK.run


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
