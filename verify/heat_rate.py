"""Graph-Laplacian convergence rate (DRIFT Theorem 1, Singer 2006): bias O(eps), variance N^-1/2 eps^-(1/2+d/4).

For i.i.d. uniform samples ``y_j`` on a compact d-manifold and ``W = exp(-|x - y|^2 / (2 eps))``
(ambient distance), the kernel estimate at a fixed point ``x``,
``(1/eps)(sum_j W(x, y_j) f(y_j) / sum_j W(x, y_j) - f(x))``, equals ``(1/2) Delta f(x) + O(eps) +
O(N^-1/2 eps^-(1/2 + d/4))``. Bias and variance are separated with the exact finite-eps continuum
operator: on S^1 (d = 1), ``f = cos(k theta)`` is an eigenfunction with eigenvalue
``(I_k(1/eps)/I_0(1/eps) - 1)/eps``; on S^2 (d = 2), the zonal ``f = P_l(z)`` has
``(I_{l+1/2}(1/eps)/I_{1/2}(1/eps) - 1)/eps`` (Funk-Hecke). The bias is the continuum operator minus the
limit ``-k^2/2`` (``-l(l+1)/2``); the variance is the RMS of the estimate minus the continuum operator
over repetitions and fixed test points. Slopes are fitted in eps (at the largest N) and in N (at a
fixed eps). ``full=True`` also locates the optimal eps* ~ N^(-1/(3+d/2)).
"""

from __future__ import annotations

import numpy as np

from verify.core import Timer, cli_main, fit_power_law, make_result, require, require_int, require_range

CHECK = "heat_rate"
CLAIMS = ("DRIFT-3",)
LAWS = ("singer", "d_over_2")
HELP = {
    "variance_law": "claimed variance eps-exponent: 'singer' -(1/2 + d/4) (Theorem 1) or the wrong 'd_over_2' "
                    "-(1/2 + d/2) (negative control)",
    "bias_order": "claimed bias order q in O(eps^q) (Theorem 1: 1)",
    "reps": "independent sample sets per N",
    "test_points": "fixed evaluation points x per manifold",
    "full": "true: bigger sweep and the optimal-eps exponent eps* ~ N^(-1/(3+d/2)) (slow)",
    "seed": "seed of the samples and test points",
    "device": "array device: cpu or gpu",
}

_SETUPS = {
    # manifold: (d, eps grid, N grid, mode, limit eigenvalue)
    1: dict(eps=(0.0025, 0.005, 0.01, 0.02, 0.04), n=(1000, 2000, 4000, 8000), mode=2),
    2: dict(eps=(0.01, 0.02, 0.04, 0.08), n=(2000, 4000, 8000, 16000), mode=2),
}


def _continuum_factor(d, mode, eps):
    """Exact finite-eps eigenvalue factor of the normalised heat operator (ratio of Bessel functions)."""
    from scipy.special import ive

    r = 1.0 / eps
    if d == 1:
        return ive(mode, r) / ive(0, r)
    return ive(mode + 0.5, r) / ive(0.5, r)


def _f(d, mode, pts, xp):
    if d == 1:
        theta = xp.atan2(pts[..., 1], pts[..., 0])
        return xp.cos(mode * theta)
    z = pts[..., 2]
    if mode != 2:
        raise ValueError("only the zonal P_2 is implemented on S^2")
    return 0.5 * (3 * z * z - 1)


def _sample_sphere(rng, n, d):
    x = rng.standard_normal((n, d + 1))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def run(*, variance_law="singer", bias_order=1.0, reps=30, test_points=16, full=False, seed=0, device="cpu"):
    """Fit bias and variance exponents of the heat-kernel Laplacian estimate on S^1 and S^2."""
    require_int("seed", seed, low=0)
    require(variance_law in LAWS, f"variance_law must be one of {LAWS}, got {variance_law!r}")
    require_range("bias_order", bias_order, low=0.25, high=4.0)
    require_int("reps", reps, low=4, high=1000)
    require_int("test_points", test_points, low=2, high=1000)
    from spectral.backend import require_device, to_numpy

    xp = require_device(device)
    rng = np.random.default_rng(seed)
    timer = Timer()
    measured, expected, tolerance, failures, arrays = {}, {}, {}, [], {}
    for d, setup in _SETUPS.items():
        eps_grid = setup["eps"]
        n_grid = setup["n"] if not full else tuple(setup["n"]) + (4 * setup["n"][-1],)
        mode = setup["mode"]
        lam_limit = -mode**2 / 2 if d == 1 else -mode * (mode + 1) / 2
        with timer(f"S{d}"):
            xt = _sample_sphere(rng, test_points, d)
            xtx = xp.asarray(xt)
            ft = _f(d, mode, xtx, xp)
            factor = {e: _continuum_factor(d, mode, e) for e in eps_grid}
            # variance: distance to the exact finite-eps continuum operator (bias removed)
            sq_err = _squared_errors(rng, xtx, ft, d, mode, n_grid, eps_grid, reps, xp, to_numpy,
                                     target=lambda e: (factor[e] - 1.0) / e * ft)
            var_rms = np.sqrt(sq_err / (reps * test_points))
            bias = np.array([abs((factor[e] - 1.0) / e - lam_limit) for e in eps_grid])  # per unit |f|
        fit_bias = fit_power_law(eps_grid, bias)
        fit_eps = fit_power_law(eps_grid, var_rms[-1, :])
        fit_n = fit_power_law(n_grid, var_rms[:, len(eps_grid) // 2])
        want_eps = -(0.5 + d / 4) if variance_law == "singer" else -(0.5 + d / 2)
        # Tolerances (ledger DRIFT-3): bias slope 1 +- 0.1, variance slopes +- 0.1 (DESIGN.md 3.3 measured
        # N-exponent -0.47..-0.51, eps-exponent -0.74..-0.76 (d = 1), -0.95..-1.00 (d = 2)). Toolkit, defaults,
        # seeds 0-4: bias 1.003 (S^1), 1.000 (S^2); eps-exponent -0.707..-0.752 (S^1), -0.972..-1.004 (S^2);
        # N-exponent -0.483..-0.521 (S^1), -0.446..-0.533 (S^2). Claimed eps^-(1/2+d/2) misses by >= 0.25.
        # Pass if |slope - claim| <= 0.1 + 2 stderr (STYLE.md 7c): the stderr term matters only for small
        # reps (e.g. 0.067 at reps = 6), never at the defaults (<= 0.02).
        for name, fit, want in ((f"S{d}_bias_slope", fit_bias, bias_order), (f"S{d}_variance_eps_slope", fit_eps, want_eps),
                                (f"S{d}_variance_N_slope", fit_n, -0.5)):
            measured[name] = fit.slope
            measured[name + "_stderr"] = fit.slope_stderr
            expected[name] = want
            tol = 0.1 + 2.0 * fit.slope_stderr
            tolerance[name] = tol
            if abs(fit.slope - want) > tol:
                failures.append(f"{name}: fitted {fit.slope:.3f} +- {fit.slope_stderr:.3f}, claimed {want:g} "
                                f"(+- {tol:.3f})")
        arrays[f"S{d}_eps"] = np.asarray(eps_grid)
        arrays[f"S{d}_N"] = np.asarray(n_grid)
        arrays[f"S{d}_variance_rms"] = var_rms
        arrays[f"S{d}_bias"] = bias
        if full:
            with timer(f"S{d}_optimal_eps"):
                e_star = _optimal_eps(d, mode, lam_limit, rng, xp, to_numpy, test_points, reps)
            fit_star = fit_power_law(e_star[0], e_star[1])
            want = -1.0 / (3 + d / 2)
            measured[f"S{d}_optimal_eps_slope"] = fit_star.slope
            expected[f"S{d}_optimal_eps_slope"] = want
            tolerance[f"S{d}_optimal_eps_slope"] = 0.05
            arrays[f"S{d}_optimal_eps"] = np.asarray(e_star)
            if abs(fit_star.slope - want) > 0.05:
                failures.append(f"S{d}: eps* ~ N^{fit_star.slope:.3f}, claimed N^{want:.3f} (+- 0.05)")
    statement = ("the heat-kernel Laplacian estimate at fixed points has bias O(eps) and sampling error "
                 "N^-1/2 eps^-(1/2+d/4) on S^1 (d = 1) and S^2 (d = 2)")
    return make_result(
        check=CHECK, claims=CLAIMS, statement=statement, measured=measured, expected=expected,
        tolerance=tolerance,
        parameters={"variance_law": variance_law, "bias_order": bias_order, "reps": reps,
                    "test_points": test_points, "full": full, "seed": seed, "device": device},
        failures=failures, timings=timer.timings, arrays=arrays,
    )


def _squared_errors(rng, xt, ft, d, mode, n_grid, eps_grid, reps, xp, to_numpy, *, target):
    """Sum over ``reps`` i.i.d. draws and the test points of ``(est - target(eps))^2`` per (N, eps).

    ``est = ((S_eps f)(x) - f(x)) / eps`` from the first N of ``n_grid[-1]`` uniform samples, with the
    heat kernel evaluated as ``exp((x.y - 1)/eps)``: ``|x - y|^2 = 2 - 2 x.y`` on the unit sphere and the
    factor ``e^{-1/eps}`` cancels in the ratio.
    """
    sq = np.zeros((len(n_grid), len(eps_grid)))
    for _ in range(reps):
        y = xp.asarray(_sample_sphere(rng, n_grid[-1], d))
        fy = _f(d, mode, y, xp)
        dots = xt @ y.T
        for j, e in enumerate(eps_grid):
            w = xp.exp((dots - 1.0) / e)
            ref = target(e)
            for i, n in enumerate(n_grid):
                est = (xp.sum(w[:, :n] * fy[None, :n], axis=1) / xp.sum(w[:, :n], axis=1) - ft) / e
                sq[i, j] += float(to_numpy(xp.sum((est - ref) ** 2)))
    return sq


def _optimal_eps(d, mode, lam_limit, rng, xp, to_numpy, test_points, reps):
    """Total RMS error vs eps for several N; eps* from a parabola fit in log-log around the minimum."""
    n_grid = (1000, 4000, 16000, 64000)
    eps_grid = np.geomspace(0.005 if d == 1 else 0.01, 0.5, 16)
    xt = xp.asarray(_sample_sphere(rng, test_points, d))
    ft = _f(d, mode, xt, xp)
    # total error: distance to the eps -> 0 limit (bias + variance)
    sq = _squared_errors(rng, xt, ft, d, mode, n_grid, eps_grid, reps, xp, to_numpy,
                         target=lambda e: lam_limit * ft)
    err = np.log(np.sqrt(sq / (reps * test_points)))
    le = np.log(eps_grid)
    stars = []
    for i in range(len(n_grid)):
        j = int(np.clip(np.argmin(err[i]), 2, len(eps_grid) - 3))
        c = np.polyfit(le[j - 2:j + 3], err[i, j - 2:j + 3], 2)
        stars.append(float(np.exp(-c[1] / (2 * c[0]))) if c[0] > 0 else float(eps_grid[j]))
    return np.asarray(n_grid, dtype=float), np.asarray(stars)


def plot(result, path):
    """Variance RMS against eps (largest N) and bias against eps, both manifolds."""
    from figures._plotting import pyplot

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for d in (1, 2):
        eps = np.asarray(result.arrays[f"S{d}_eps"])
        ax.loglog(eps, np.asarray(result.arrays[f"S{d}_variance_rms"])[-1], "o-", label=f"S^{d} sampling error")
        ax.loglog(eps, np.asarray(result.arrays[f"S{d}_bias"]), "s--", label=f"S^{d} bias")
    ax.set_xlabel("eps")
    ax.legend(fontsize=7)
    fig.savefig(path)
    plt.close(fig)


def main(argv=None) -> int:
    return cli_main(run, argv, help=HELP, plot=plot, choices={"variance_law": LAWS})


if __name__ == "__main__":
    raise SystemExit(main())
