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

import math

import numpy as np

from spectral.validation import check_int, check_option, check_reals, child_rng
from verify.core.check import Check
from verify.core.fits import fit_power_law
from verify.core.memory import require_memory
from verify.core.result import Recorder

CHECK = Check("nearest_point", claims=("DRIFT-11", "DRIFT-12"), devices=("cpu", "gpu"))

_CLAIMS = ("corrected", "printed")


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
            err_sym = max(err_sym, float(np.linalg.norm(y_bf - y_formula)))
            # the printed formula is the argmax of the linear function, i.e. -y_bf
            printed_is_argmax = max(printed_is_argmax, float(np.linalg.norm(printed + y_bf)))
        else:
            err_general = max(err_general, float(np.linalg.norm(y_bf - y_formula)))
    # sanity case Q = K = I: M = I, the minimiser is x itself (the printed formula, a = -1, P = I, gives -x)
    x = _unit(child_rng(seed, "identity").standard_normal(dim))
    y_id = _brute_force_min(-x, cand)
    sanity = float(np.linalg.norm(y_id - (x if claim == "corrected" else -x)))
    return err_sym, err_general, sanity, printed_is_argmax


def _limit_errors(xp, claim, n_lattice, eps_grid, seed):
    """RMS errors of S_eps H against H(y*) (points) and the p-weighted circle average (latitudes)."""
    from spectral.backend import to_numpy

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


@CHECK.define
def run(*, claim="corrected", dim=3, trials=20, candidates=200000, n_lattice=50000,
        eps_grid=(0.002, 0.004, 0.008, 0.016, 0.032), seed=0, device="cpu"):
    """Example 3 by brute force and the Theorem-5/6 zeroth-order limit on S^2.

    Parameters
    ----------
    claim : {"corrected", "printed"}
        Nearest point asserted: "corrected" M^T x / |M^T x|, or the "printed" Example-3 formula
        +P^T (a x') / |a x'| (the argmax; fails). The zeroth-order limit is then taken at that point.
    dim : int
        Ambient dimension of the sphere for the Example-3 brute force, in [2, 16].
    trials : int
        Random (M, x) pairs in the Example-3 test, in [2, 1000]; even trials draw a symmetric
        -M = P^T diag(a) P, odd ones a general M.
    candidates : int
        Random sphere points of the brute-force search before refinement, in [1000, 5e6].
    n_lattice : int
        Fibonacci-lattice points on S^2 for the Theorem-5/6 limit (DRIFT-12), in [1000, 1e6].
    eps_grid : tuple of float
        eps values of S_eps (scores exp(-f/(2 eps)), DRIFT Appendix C), at least 4 in [1e-4, 0.5].
    seed : int
        Seed of the candidates, of each trial's M and x, and of the limit's M and test points (one
        stream each).
    device : {"cpu", "gpu"}
        Array device of the zeroth-order limit (the S_eps sums over the lattice); the small
        Example-3 searches run on the host.

    Returns
    -------
    CheckResult
        Passes when the brute-force minimisers agree with the asserted formula to 1e-8 and the
        S_eps errors decrease like eps^1 (+- 0.15) to below 0.05.
    """
    claim = check_option("claim", claim, _CLAIMS)
    dim = check_int("dim", dim, low=2, high=16)
    trials = check_int("trials", trials, low=2, high=1000)
    candidates = check_int("candidates", candidates, low=1000, high=5000000)
    n_lattice = check_int("n_lattice", n_lattice, low=1000, high=1000000)
    eps_grid = check_reals("eps_grid", eps_grid, min_count=4, low=1e-4, high=0.5)
    # Memory first: Example 3 holds the candidates and their projections (tracemalloc: 272 bytes per
    # candidate at dim 16, about 17 dim), the limit part the test points x lattice scores (489 bytes per
    # lattice point at the defaults); the parts run one after the other. 20 dim and 600 bytes leave a margin.
    require_memory(lambda c: (16 << 20) + max(20 * dim * c, 600 * n_lattice), candidates, option="--candidates",
                   low=1000, what=f"the Example-3 candidates and the lattice scores at --candidates {candidates}, "
                                  f"--n-lattice {n_lattice}", other="a smaller --n-lattice or --dim")
    from verify.core.check import device_namespace

    xp = device_namespace(device)
    rec = Recorder()

    # ---- DRIFT-11: Example 3
    with rec.timed("example3"):
        err_sym, err_general, sanity, printed_is_argmax = _example3(claim, dim, trials, candidates, seed)
    why = ("projected gradient converges geometrically from the best candidate: measured <= 6.4e-11 over seeds "
           "0-29; the wrong root (the argmax) is at distance 2")
    rec.at_most("example3_symmetric", err_sym, 1e-8, why=why,
                label=f"symmetric -M = P^T diag(a) P: |brute-force minimiser - {claim} formula|")
    rec.at_most("example3_general", err_general, 1e-8, why=why,
                label="general M: |brute-force minimiser - M^T x/|M^T x||")
    rec.at_most("example3_identity_case", sanity, 1e-8, why=why,
                label="Q = K = I: distance of the brute-force minimiser from "
                      + ("x" if claim == "corrected" else "-x (the printed formula)"))
    rec.info("printed_minus_argmax", printed_is_argmax)

    # ---- DRIFT-12: zeroth-order limit on S^2 (Fibonacci lattice, density weights)
    with rec.timed("limit"):
        err_pt, err_deg = _limit_errors(xp, claim, n_lattice, eps_grid, seed)
    # Regime (measured with the correct root): lattice spacing sqrt(4 pi / n) > sqrt(2 eps_min) leaves a
    # sampling floor (eps_min = 1e-4 fails from spacing / sqrt(2 eps_min) = 1.45 on); eps above 0.032 bends
    # the slope by O(eps^2) terms (circle slope 0.76 over eps 0.008-0.064). Failures there say so.
    spacing, width = math.sqrt(4 * math.pi / n_lattice), math.sqrt(2 * min(eps_grid))
    regime = []
    if spacing > width:
        regime.append(f"lattice spacing {spacing:.3g} > kernel width sqrt(2 eps_min) = {width:.3g}: raise n_lattice "
                      f"or the smallest eps")
    if max(eps_grid) > 0.032:
        regime.append(f"largest eps {max(eps_grid):g} > 0.032, where O(eps^2) terms bend the slope: lower it")
    hint = "; ".join(regime) if claim == "corrected" else ""
    why = ("DRIFT-12: slope 1 +- 0.15; measured 0.88-1.03 (points, seeds 0-29, sd 0.03) and 0.934 (circle, "
           "deterministic) "
           "over eps in [0.002, 0.032] at n_lattice = 5e4 (lattice spacing 0.016 < kernel width "
           "sqrt(2 eps/|M^T x|)); the wrong root gives O(1) errors that do not decrease")
    for name, errors, what in (("point_limit_slope", err_pt, "S_eps H(x) -> H(y*)"),
                               ("circle_limit_slope", err_deg, "S_eps H(x) -> p-weighted circle average")):
        rec.close(name, fit_power_law(eps_grid, errors).slope, 1.0, atol=0.15, why=why,
                  label=f"{what}: error not ~ eps^1 (zeroth order)", hint=hint)
    why = ("a constant offset has slope 0 but must not pass: measured 0.0024-0.015 (points, seeds 0-29) and "
           "0.0015 (circle) at eps = 0.002; the wrong root leaves O(1) errors")
    rec.at_most("point_limit_min_error", min(err_pt), 0.05, why=why,
                label="zeroth-order limit H(y*) not reached at the smallest eps", hint=hint)
    rec.at_most("circle_limit_min_error", min(err_deg), 0.05, why=why,
                label="zeroth-order limit (circle average) not reached at the smallest eps", hint=hint)
    rec.array("eps", np.asarray(eps_grid))
    rec.array("point_error", np.asarray(err_pt))
    rec.array("circle_error", np.asarray(err_deg))
    if claim == "corrected":
        statement = ("the minimiser of -x^T M y over the unit sphere is M^T x/|M^T x| (the printed Example-3 "
                     "formula is the argmax), and S_eps H(x) -> H(y*) (p-weighted average over a nearest circle) "
                     "with error O(eps)")
    else:
        statement = ("the printed Example-3 formula +P^T (a x')/|a x'| is the minimiser of -x^T M y over the unit "
                     "sphere and S_eps H(x) tends to H at that point")
    return rec.finish(statement)


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
