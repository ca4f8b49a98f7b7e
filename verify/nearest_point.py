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

from verify.core import Timer, cli_main, fit_power_law, make_result, require, require_int, require_range

CHECK = "nearest_point"
CLAIMS = ("DRIFT-11", "DRIFT-12")
FORMULAS = ("corrected", "printed")
HELP = {
    "formula": "nearest point compared with: 'corrected' M^T x/|M^T x| or the 'printed' Example-3 "
               "formula +P^T (a*x')/|a*x'|",
    "dim": "ambient dimension of the sphere for the Example-3 brute force",
    "trials": "random (M, x) pairs in the Example-3 test",
    "candidates": "random sphere points in the brute-force search (before refinement)",
    "n_lattice": "Fibonacci-lattice points on S^2 for the Theorem-5/6 limit (DRIFT-12)",
    "eps_grid": "eps values of S_eps (scores exp(-f/(2 eps)), DRIFT Appendix C)",
    "seed": "seed of M, x and the test points",
    "device": "array device: cpu or gpu",
}


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


def _H(y):
    return np.sin(2 * y[..., 0]) + y[..., 1] * y[..., 2] + 0.5 * y[..., 2]


def _p(y):
    return np.exp(0.8 * y[..., 0] - 0.4 * y[..., 2])  # unnormalised density on S^2 (ratios only)


def run(*, formula="corrected", dim=3, trials=20, candidates=200000, n_lattice=50000,
        eps_grid=(0.002, 0.004, 0.008, 0.016, 0.032), seed=0, device="cpu"):
    """Example 3 by brute force and the Theorem-5/6 zeroth-order limit on S^2."""
    require_int("seed", seed, low=0)
    require(formula in FORMULAS, f"formula must be one of {FORMULAS}, got {formula!r}")
    require_int("dim", dim, low=2, high=16)
    require_int("trials", trials, low=1, high=1000)
    require_int("candidates", candidates, low=1000, high=5000000)
    require_int("n_lattice", n_lattice, low=1000, high=1000000)
    require(len(eps_grid) >= 4, f"eps_grid needs at least 4 values for a slope fit, got {len(eps_grid)}")
    for e in eps_grid:
        require_range("eps_grid", e, low=1e-4, high=0.5)
    from spectral.backend import require_device, to_numpy

    xp = require_device(device)
    rng = np.random.default_rng(seed)
    timer = Timer()
    failures = []

    # ---- DRIFT-11: Example 3
    with timer("example3"):
        cand = rng.standard_normal((candidates, dim))
        cand /= np.linalg.norm(cand, axis=1, keepdims=True)
        err_general = err_sym = 0.0
        printed_is_argmax = 0.0
        for t in range(trials):
            x = rng.standard_normal(dim)
            x /= np.linalg.norm(x)
            if t % 2 == 0:  # symmetric -M = P^T diag(a) P, P in SO(dim)
                a = rng.standard_normal(dim)
                p_mat, _ = np.linalg.qr(rng.standard_normal((dim, dim)))
                if np.linalg.det(p_mat) < 0:
                    p_mat[0] *= -1
                m = -(p_mat.T * a) @ p_mat
                xp_ = p_mat @ x
                ax = a * xp_
                printed = p_mat.T @ (ax / np.linalg.norm(ax))
            else:  # general M = Q^T K
                m = rng.standard_normal((dim, dim))
                printed = None
            b = -(m.T @ x)  # f(x, y) = -x^T M y = b . y
            y_bf = _brute_force_min(b, cand)
            y_formula = m.T @ x / np.linalg.norm(m.T @ x)
            if formula == "printed" and printed is not None:
                y_formula = printed
            e = float(np.linalg.norm(y_bf - y_formula))
            if printed is not None:
                err_sym = max(err_sym, e)
                y_max = -y_bf  # argmax of a linear function on the sphere
                printed_is_argmax = max(printed_is_argmax, float(np.linalg.norm(printed - y_max)))
            elif formula == "corrected":
                err_general = max(err_general, e)
        # sanity case Q = K = I: M = I, the minimiser must be x itself
        x = rng.standard_normal(dim)
        x /= np.linalg.norm(x)
        y_id = _brute_force_min(-x, cand)
        sanity = float(np.linalg.norm(y_id - x))
        if formula == "printed":  # printed formula with a = -1, P = I returns -x
            sanity = float(np.linalg.norm(y_id - (-x)))
    # Tolerance 1e-8: projected gradient converges geometrically from the best candidate; measured
    # <= 5e-11 (seed 0). The wrong root (argmax) is at distance 2.
    tol_np = 1e-8
    for name, val in (("example3_symmetric", err_sym), ("example3_general", err_general),
                      ("example3_identity_case", sanity)):
        if val > tol_np:
            failures.append(f"{name}: |brute-force minimiser - {formula} formula| = {val:.3e} > {tol_np:.0e}")

    # ---- DRIFT-12: zeroth-order limit on S^2 (Fibonacci lattice, density weights)
    with timer("limit"):
        y = _fibonacci(n_lattice)
        pw = _p(y)
        hv = _H(y)
        n_test = 12
        xt = rng.standard_normal((n_test, 3))
        xt /= np.linalg.norm(xt, axis=1, keepdims=True)
        m3 = np.eye(3) + 0.5 * rng.standard_normal((3, 3))
        ystar = xt @ m3
        ystar /= np.linalg.norm(ystar, axis=1, keepdims=True)
        if formula == "printed":
            ystar = -ystar  # the printed root (argmax)
        target = _H(ystar)
        yx, pwx, hx = xp.asarray(y), xp.asarray(pw), xp.asarray(hv)
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
    fit = fit_power_law(eps_grid, err_pt)
    fit_deg = fit_power_law(eps_grid, err_deg)
    # Rate tolerance (DRIFT-12): slope 1 +- 0.15 (ledger); measured 0.96-0.98 (point, seeds 0-4) and
    # 0.934 (circle; deterministic test latitudes)
    # over eps in [0.002, 0.032] with n_lattice = 5e4 (lattice spacing 0.016 < kernel width
    # sqrt(2 eps/|M^T x|)); errors from the wrong root are O(1) and do not decrease.
    for name, ft in (("point_limit_slope", fit), ("circle_limit_slope", fit_deg)):
        if abs(ft.slope - 1.0) > 0.15:
            failures.append(f"{name}: error ~ eps^{ft.slope:.3f}, expected eps^1 +- 0.15 (zeroth order H(y*))")
    # the smallest-eps error must also be small in absolute terms (a constant offset has slope 0)
    floor = 0.05
    if min(err_pt) > floor or min(err_deg) > floor:
        failures.append(f"zeroth-order limit not reached: smallest-eps errors {min(err_pt):.3g}, "
                        f"{min(err_deg):.3g} > {floor}")

    statement = ("the minimiser of -x^T M y over the unit sphere is M^T x/|M^T x| (the printed Example-3 formula "
                 "is the argmax), and S_eps H(x) -> H(y*) (p-weighted average over a nearest circle) with error O(eps)")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement,
        measured={"example3_symmetric": err_sym, "example3_general": err_general,
                  "example3_identity_case": sanity, "printed_minus_argmax": printed_is_argmax,
                  "point_limit_slope": fit.slope, "circle_limit_slope": fit_deg.slope,
                  "point_limit_min_error": min(err_pt), "circle_limit_min_error": min(err_deg)},
        expected={"example3_symmetric": 0.0, "example3_general": 0.0, "example3_identity_case": 0.0,
                  "point_limit_slope": 1.0, "circle_limit_slope": 1.0,
                  "point_limit_min_error": 0.0, "circle_limit_min_error": 0.0},
        tolerance={"example3_symmetric": tol_np, "example3_general": tol_np, "example3_identity_case": tol_np,
                   "point_limit_slope": 0.15, "circle_limit_slope": 0.15,
                   "point_limit_min_error": floor, "circle_limit_min_error": floor},
        parameters={"formula": formula, "dim": dim, "trials": trials, "candidates": candidates,
                    "n_lattice": n_lattice, "eps_grid": tuple(eps_grid), "seed": seed, "device": device},
        failures=failures, timings=timer.timings,
        arrays={"eps": np.asarray(eps_grid), "point_error": np.asarray(err_pt), "circle_error": np.asarray(err_deg)},
    )


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, choices={"formula": FORMULAS})


if __name__ == "__main__":
    raise SystemExit(main())
