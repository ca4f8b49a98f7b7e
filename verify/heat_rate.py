"""Graph-Laplacian convergence rate (DRIFT Theorem 1, Singer 2006): bias O(eps), variance N^-1/2 eps^-(1/2+d/4).

For i.i.d. uniform samples ``y_j`` on a compact d-manifold and ``W = exp(-|x - y|^2 / (2 eps))``
(ambient distance), the kernel estimate at a fixed point ``x``,
``(1/eps)(sum_j W(x, y_j) f(y_j) / sum_j W(x, y_j) - f(x))``, equals ``(1/2) Delta f(x) + O(eps) +
O(N^-1/2 eps^-(1/2 + d/4))``. Bias and variance are separated with the exact finite-eps continuum
operator: on S^1 (d = 1), ``f = cos(k theta)`` is an eigenfunction with eigenvalue
``(I_k(1/eps)/I_0(1/eps) - 1)/eps``; on S^2 (d = 2), the zonal ``f = P_l(z)`` has
``(I_{l+1/2}(1/eps)/I_{1/2}(1/eps) - 1)/eps`` (Funk-Hecke; ``manifolds.heat_kernel_eigenvalue``). The
bias is the continuum operator minus the limit ``-k^2/2`` (``-l(l+1)/2``); the variance is the RMS of
the estimate minus the continuum operator over repetitions and fixed test points. Slopes are fitted in eps (at the largest N) and in N (at a
fixed eps). ``full=True`` also locates the optimal eps* ~ N^(-1/(3+d/2)).
"""

from __future__ import annotations

import numpy as np

from spectral.validation import check_int, check_option, check_real, child_rng
from verify.core.check import Check
from verify.core.memory import require_memory
from verify.core.result import Recorder

__all__ = ["CHECK", "run", "main"]

CHECK = Check("heat_rate", claims=("DRIFT-3",), devices=("cpu", "gpu"))

_SETUPS = {
    # manifold dimension d: eps grid, N grid, mode (Fourier mode k on S^1, degree l on S^2)
    1: dict(eps=(0.0025, 0.005, 0.01, 0.02, 0.04), n=(1000, 2000, 4000, 8000), mode=2),
    2: dict(eps=(0.01, 0.02, 0.04, 0.08), n=(2000, 4000, 8000, 16000), mode=2),
}


def _f(d, mode, pts, xp):
    if d == 1:
        theta = xp.atan2(pts[..., 1], pts[..., 0])
        return xp.cos(mode * theta)
    z = pts[..., 2]  # the zonal P_2 (the only S^2 mode of _SETUPS)
    return 0.5 * (3 * z * z - 1)


def _sample_sphere(rng, n, d):
    x = rng.standard_normal((n, d + 1))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _squared_errors(rng, xt, ft, d, mode, n_grid, eps_grid, repeats, xp, *, target):
    """Sum over ``repeats`` i.i.d. draws and the test points of ``(est - target(eps))^2`` per (N, eps).

    ``est = ((S_eps f)(x) - f(x)) / eps`` from the first N of ``n_grid[-1]`` uniform samples, with the
    heat kernel evaluated as ``exp((x.y - 1)/eps)``: ``|x - y|^2 = 2 - 2 x.y`` on the unit sphere and the
    factor ``e^{-1/eps}`` cancels in the ratio.
    """
    from spectral.backend import to_numpy

    sq = np.zeros((len(n_grid), len(eps_grid)))
    for _ in range(repeats):
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


def _optimal_eps(d, mode, lam_limit, rng, xp, test_points, repeats):
    """Total RMS error vs eps for several N; eps* from a parabola fit in log-log around the minimum."""
    n_grid = (1000, 4000, 16000, 64000)
    eps_grid = np.geomspace(0.005 if d == 1 else 0.01, 0.5, 16)
    xt = xp.asarray(_sample_sphere(rng, test_points, d))
    ft = _f(d, mode, xt, xp)
    # total error: distance to the eps -> 0 limit (bias + variance)
    sq = _squared_errors(rng, xt, ft, d, mode, n_grid, eps_grid, repeats, xp, target=lambda e: lam_limit * ft)
    err = np.log(np.sqrt(sq / (repeats * test_points)))
    le = np.log(eps_grid)
    stars = []
    for i in range(len(n_grid)):
        j = int(np.clip(np.argmin(err[i]), 2, len(eps_grid) - 3))
        c = np.polyfit(le[j - 2:j + 3], err[i, j - 2:j + 3], 2)
        stars.append(float(np.exp(-c[1] / (2 * c[0]))) if c[0] > 0 else float(eps_grid[j]))
    return np.asarray(n_grid, dtype=float), np.asarray(stars)


@CHECK.define
def run(*, variance_law="singer", bias_order=1.0, repeats=30, test_points=16, full=False, seed=0, device="cpu"):
    """Fit bias and variance exponents of the heat-kernel Laplacian estimate on S^1 and S^2.

    Parameters
    ----------
    variance_law : {"singer", "d_over_2"}
        Variance eps-exponent asserted: "singer" -(1/2 + d/4) as in Theorem 1, or "d_over_2"
        -(1/2 + d/2), a wrong exponent used as a negative control (fails).
    bias_order : float
        Bias order q asserted in O(eps^q), in [0.25, 4] (Theorem 1: 1; other values are negative
        controls).
    repeats : int
        Independent sample sets per N, in [4, 1000].
    test_points : int
        Fixed evaluation points x per manifold, in [2, 1000].
    full : bool
        Also fit the optimal-eps exponent eps* ~ N^(-1/(3+d/2)) with N up to 64000 (slow).
    seed : int
        Seed of the samples and test points (one stream per manifold and part).
    device : {"cpu", "gpu"}
        Array device: the kernel sums run there (samples drawn on the host).

    Returns
    -------
    CheckResult
        Passes when every fitted exponent is within 0.1 + 2 standard errors of its claim (0.05 for
        the optimal-eps exponent).
    """
    check_option("variance_law", variance_law, ("singer", "d_over_2"))
    bias_order = check_real("bias_order", bias_order, low=0.25, high=4.0)
    repeats = check_int("repeats", repeats, low=4, high=1000)
    test_points = check_int("test_points", test_points, low=2, high=1000)
    # Memory first: the kernel between the test points and the largest sample (64000 points) is one
    # (test_points, 64000) array at a time: tracemalloc peaks 21.4 / 29.2 MiB at 16 / 32 test points,
    # 8 bytes per entry; 16 bytes per entry and 32 MiB leave a margin (1000 test points: 1 GiB).
    require_memory(lambda t: (32 << 20) + 16 * 64000 * t, test_points, option="--test-points", low=2,
                   what=f"the test-point kernels at --test-points {test_points}")
    from manifolds import heat_kernel_eigenvalue
    from verify.core.check import device_namespace  # looked up at run time (tests stand in array_api_strict)
    from verify.core.fits import fit_power_law

    xp = device_namespace(device)
    rec = Recorder()
    # Tolerance of the fitted exponents (ledger DRIFT-3: 1 +- 0.1 and -(1/2 + d/4) +- 0.1, -1/2 +- 0.1):
    # |slope - claim| <= 0.1 + 2 stderr; the stderr term matters only for few repeats (0.067 at 6),
    # never at the defaults (<= 0.02).
    why = ("ledger DRIFT-3 +- 0.1 plus 2 standard errors of the fit; seeds 0-19 at the defaults: bias 1.000-1.003, "
           "eps-exponent -0.80..-0.72 (S^1), -1.07..-0.98 (S^2), N-exponent -0.57..-0.45; the claimed "
           "eps^-(1/2+d/2) misses by >= 0.2")
    for d, setup in _SETUPS.items():
        eps_grid = setup["eps"]
        n_grid = setup["n"] if not full else tuple(setup["n"]) + (4 * setup["n"][-1],)
        mode = setup["mode"]
        lam_limit = -mode**2 / 2 if d == 1 else -mode * (mode + 1) / 2
        with rec.timed(f"S{d}"):
            xt = xp.asarray(_sample_sphere(child_rng(seed, f"S{d}", "test_points"), test_points, d))
            ft = _f(d, mode, xt, xp)
            factor = {e: heat_kernel_eigenvalue(d, mode, e) for e in eps_grid}
            # variance: distance to the exact finite-eps continuum operator (bias removed)
            sq_err = _squared_errors(child_rng(seed, f"S{d}", "samples"), xt, ft, d, mode, n_grid, eps_grid, repeats,
                                     xp, target=lambda e: (factor[e] - 1.0) / e * ft)
            var_rms = np.sqrt(sq_err / (repeats * test_points))
            bias = np.array([abs((factor[e] - 1.0) / e - lam_limit) for e in eps_grid])  # per unit |f|
        fit_bias = fit_power_law(eps_grid, bias)
        fit_eps = fit_power_law(eps_grid, var_rms[-1, :])
        fit_n = fit_power_law(n_grid, var_rms[:, len(eps_grid) // 2])
        want_eps = -(0.5 + d / 4) if variance_law == "singer" else -(0.5 + d / 2)
        for name, fit, want, what in ((f"S{d}_bias_slope", fit_bias, bias_order, "bias order in eps"),
                                      (f"S{d}_variance_eps_slope", fit_eps, want_eps, "sampling-error exponent in eps"),
                                      (f"S{d}_variance_N_slope", fit_n, -0.5, "sampling-error exponent in N")):
            rec.close(name, fit.slope, want, atol=0.1 + 2.0 * fit.slope_stderr, why=why,
                      label=f"S^{d}: {what} differs from the claim ({variance_law} variance law)")
            rec.info(name + "_stderr", fit.slope_stderr)
        rec.array(f"S{d}_eps", np.asarray(eps_grid))
        rec.array(f"S{d}_N", np.asarray(n_grid))
        rec.array(f"S{d}_variance_rms", var_rms)
        rec.array(f"S{d}_bias", bias)
        if full:
            with rec.timed(f"S{d}_optimal_eps"):
                e_star = _optimal_eps(d, mode, lam_limit, child_rng(seed, f"S{d}", "optimal_eps"), xp, test_points,
                                      repeats)
            fit_star = fit_power_law(e_star[0], e_star[1])
            rec.close(f"S{d}_optimal_eps_slope", fit_star.slope, -1.0 / (3 + d / 2), atol=0.05,
                      why="ledger DRIFT-3: eps* exponent -1/(3 + d/2) +- 0.05",
                      label=f"S^{d}: optimal eps* does not scale like N^(-1/(3+d/2))")
            rec.array(f"S{d}_optimal_eps", np.asarray(e_star))
    return rec.finish("the heat-kernel Laplacian estimate at fixed points has bias O(eps) and sampling error "
                      "N^-1/2 eps^-(1/2+d/4) on S^1 (d = 1) and S^2 (d = 2)")


def main(argv=None) -> int:
    return CHECK.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
